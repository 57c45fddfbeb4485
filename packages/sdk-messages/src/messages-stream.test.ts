import { describe, expect, test } from "bun:test";
import { http, HttpResponse } from "msw";
import { BASE, hello, useMockGateway } from "../test/use-mock-gateway.js";
import {
  APIUserAbortError,
  AuthenticationError,
  InternalServerError,
  RateLimitError,
  TurnpikeError,
  type Message,
  type RawMessageStreamEvent,
} from "./index.js";

const { turnpike, server, client } = useMockGateway();

const tricky = "naïve café — 日本語 🚀 done";

/** A raw SSE reply written in these exact byte pieces. */
function rawSSE(pieces: string[] | Uint8Array[]): Response {
  const encoder = new TextEncoder();
  return new HttpResponse(
    new ReadableStream({
      start(c) {
        for (const p of pieces) c.enqueue(typeof p === "string" ? encoder.encode(p) : p);
        c.close();
      },
    }),
    { headers: { "content-type": "text/event-stream", "x-request-id": "req_raw" } },
  );
}

const frame = (
  event: RawMessageStreamEvent | { type: "ping" } | { type: "error"; error: { type: string; message: string } },
  withName = true,
) => `${withName ? `event: ${event.type}\n` : ""}data: ${JSON.stringify(event)}\n\n`;

const start: RawMessageStreamEvent = {
  type: "message_start",
  message: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "alpha-haiku-4-5",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 5, output_tokens: 1 },
  },
};

describe("messages.create({ stream: true })", () => {
  test("yields the events in order, without pings", async () => {
    turnpike.reply({ text: "one two" });
    const stream = await client().messages.create({ ...hello, stream: true });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(turnpike.lastRequest()?.stream).toBe(true);
    expect(turnpike.lastRequest()?.headers.accept).toBe("text/event-stream");
  });

  test("an error event after the 200 is thrown as the class of its type, with the request id", async () => {
    turnpike.reply({ text: "a b c d", streamError: { status: 529, message: "Overloaded", afterEvents: 4 } });
    const stream = await client().messages.create({ ...hello, stream: true });
    const seen: string[] = [];
    const err = await (async () => {
      for await (const event of stream) seen.push(event.type);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect((err as InternalServerError).status).toBe(529);
    expect((err as InternalServerError).type).toBe("overloaded_error");
    expect((err as InternalServerError).requestId).toMatch(/^req_mock_/);
    expect(seen).toEqual(["message_start", "content_block_start", "content_block_delta"]);
  });

  test("an in-band rate-limit error is a RateLimitError", async () => {
    turnpike.reply({ streamError: { status: 429, afterEvents: 1 } });
    const stream = await client().messages.create({ ...hello, stream: true });
    await expect(
      (async () => {
        for await (const _ of stream);
      })(),
    ).rejects.toBeInstanceOf(RateLimitError);
  });

  test("an HTTP error before the stream rejects the call itself", async () => {
    await expect(client({ apiKey: "sk-wrong" }).messages.create({ ...hello, stream: true })).rejects.toBeInstanceOf(
      AuthenticationError,
    );
  });

  test("a stream of data-only lines is read by the JSON type", async () => {
    const events: RawMessageStreamEvent[] = [
      start,
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "plain" } },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 2 } },
      { type: "message_stop" },
    ];
    server.use(http.post(`${BASE}/v1/messages`, () => rawSSE(events.map((e) => frame(e, false)))));
    const message = await client().messages.stream(hello).finalMessage();
    expect(message.content).toEqual([{ type: "text", text: "plain" }]);
  });
});

describe("messages.stream()", () => {
  test("textStream, .on('text') and finalMessage agree", async () => {
    turnpike.reply({ text: tricky });
    const stream = client().messages.stream(hello);
    const viaEvents: string[] = [];
    stream.on("text", (delta) => viaEvents.push(delta));
    let viaIterator = "";
    for await (const text of stream.textStream) viaIterator += text;
    const message = await stream.finalMessage();
    expect(viaIterator).toBe(tricky);
    expect(viaEvents.join("")).toBe(tricky);
    expect(await stream.finalText()).toBe(tricky);
    expect(message.usage.output_tokens).toBeGreaterThan(1);
    expect(stream.requestId).toMatch(/^req_mock_/);
  });

  test("the final message equals the JSON reply for the same script: thinking, text and tool input", async () => {
    const script = {
      thinking: "Let me think…",
      text: tricky,
      toolCalls: [{ id: "toolu_9", name: "lookup", input: { q: "日本", n: [1, 2], deep: { ok: true } } }],
    };
    turnpike.reply(script).reply(script);
    const json = await client().messages.create(hello);
    const streamed = await client().messages.stream(hello).finalMessage();
    expect({ ...streamed, id: "x" }).toEqual({ ...json, id: "x" });
    expect(streamed.content[2]).toEqual({
      type: "tool_use",
      id: "toolu_9",
      name: "lookup",
      input: { q: "日本", n: [1, 2], deep: { ok: true } },
    });
    expect(streamed.content[0]).toMatchObject({
      type: "thinking",
      thinking: "Let me think…",
      signature: "mock-signature",
    });
  });

  test("events and UTF-8 characters split across network reads assemble the same message", async () => {
    const script = { text: tricky, toolCalls: [{ id: "toolu_1", name: "f", input: { city: "Zürich 🏔" } }] };
    const expected = await (turnpike.reply(script), client().messages.stream(hello).finalMessage());
    for (const chunkSize of [1, 2, 3, 5, 13]) {
      turnpike.reply({ ...script, chunkSize });
      const message = await client().messages.stream(hello).finalMessage();
      expect({ ...message, id: "" }).toEqual({ ...expected, id: "" });
    }
  });

  test("a tool with no arguments (a single empty fragment) gets input {}", async () => {
    const events: RawMessageStreamEvent[] = [
      start,
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "toolu_0", name: "now", input: {} },
      },
      { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "" } },
      { type: "content_block_stop", index: 0 },
      {
        type: "message_delta",
        delta: { stop_reason: "tool_use", stop_sequence: null },
        usage: { output_tokens: 9, input_tokens: 6 },
      },
      { type: "message_stop" },
    ];
    server.use(http.post(`${BASE}/v1/messages`, () => rawSSE(events.map((e) => frame(e)))));
    const message = await client().messages.stream(hello).finalMessage();
    expect(message.content).toEqual([{ type: "tool_use", id: "toolu_0", name: "now", input: {} }]);
    // message_delta usage overwrites (cumulative), including input when present.
    expect(message.usage).toEqual({ input_tokens: 6, output_tokens: 9 });
    expect(message.stop_reason).toBe("tool_use");
  });

  test("inputJson and contentBlock events report the tool input as it arrives", async () => {
    turnpike.reply({ toolCalls: [{ name: "f", input: { a: 1 } }] });
    const stream = client().messages.stream(hello);
    const snapshots: string[] = [];
    const blocks: string[] = [];
    stream.on("inputJson", (_delta, snapshot) => snapshots.push(snapshot));
    stream.on("contentBlock", (block) => blocks.push(block.type));
    await stream.done();
    expect(snapshots.at(-1)).toBe('{"a":1}');
    expect(blocks).toEqual(["tool_use"]);
  });

  test("a stream cut before message_stop rejects finalMessage", async () => {
    server.use(
      http.post(`${BASE}/v1/messages`, () =>
        rawSSE([
          frame(start),
          frame({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
        ]),
      ),
    );
    const stream = client().messages.stream(hello);
    await expect(stream.finalMessage()).rejects.toThrow("The stream ended before message_stop");
  });

  test("invalid tool JSON is an error that names the tool", async () => {
    const events: RawMessageStreamEvent[] = [
      start,
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "t", name: "broken", input: {} },
      },
      { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"a":' } },
      { type: "content_block_stop", index: 0 },
    ];
    server.use(http.post(`${BASE}/v1/messages`, () => rawSSE(events.map((e) => frame(e)))));
    const err = await client()
      .messages.stream(hello)
      .finalMessage()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TurnpikeError);
    expect(String(err)).toContain('tool "broken"');
  });

  test("an in-band error rejects finalMessage and reaches the error listener", async () => {
    turnpike.reply({ text: "a b", streamError: { status: 500, afterEvents: 3 } });
    const stream = client().messages.stream(hello);
    const errors: Error[] = [];
    stream.on("error", (e) => errors.push(e));
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(InternalServerError);
    expect(errors[0]).toBeInstanceOf(InternalServerError);
  });

  test("abort() stops the stream; finalMessage rejects with APIUserAbortError", async () => {
    turnpike.reply({ text: "a b c d e f g h", chunkDelayMs: 20 });
    const stream = client().messages.stream(hello);
    let aborted = false;
    stream.on("abort", () => (aborted = true));
    stream.once("text", () => stream.abort());
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(APIUserAbortError);
    expect(aborted).toBe(true);
  });

  test("the caller's signal aborts the stream too", async () => {
    turnpike.reply({ text: "a b c d e f g h", chunkDelayMs: 20 });
    const controller = new AbortController();
    const stream = client().messages.stream(hello, { signal: controller.signal });
    stream.once("text", () => controller.abort());
    await expect(stream.done()).rejects.toBeInstanceOf(APIUserAbortError);
  });

  test("leaving the event loop early aborts the request", async () => {
    turnpike.reply({ text: "a b c d e f", chunkDelayMs: 10 });
    const stream = client().messages.stream(hello);
    for await (const event of stream) if (event.type === "content_block_delta") break;
    expect(stream.controller.signal.aborted).toBe(true);
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(APIUserAbortError);
  });

  test("an iterator started late still sees every event; currentMessage tracks the snapshot", async () => {
    turnpike.reply({ text: "x y z" });
    const stream = client().messages.stream(hello);
    const finished: Message = await stream.finalMessage();
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types[0]).toBe("message_start");
    expect(types.at(-1)).toBe("message_stop");
    expect(stream.currentMessage).toBe(finished);
  });
});
