/** The mock's replies on the wire: the same shapes and framing as the gateway (docs/protocols.md §1.7, §2.6). */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { SSEDecoderStream, type SSEMessage } from "@turnpike/schema/sse";
import { setupServer } from "msw/node";
import { createTurnpikeMock } from "./index.js";

const BASE = "http://gw.test";
const turnpike = createTurnpikeMock({ baseURL: BASE });
const server = setupServer(...turnpike.handlers);
beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => turnpike.reset());
afterAll(() => server.close());

const messagesHeaders = { "content-type": "application/json", "x-api-key": "sk-1", "alpha-version": "2023-06-01" };
const chatHeaders = { "content-type": "application/json", authorization: "Bearer sk-1" };
const messagesBody = { model: "alpha-haiku-4-5", max_tokens: 50, messages: [{ role: "user", content: "Hi" }] };
const chatBody = { model: "beta-5", messages: [{ role: "user", content: "Hi" }] };

const post = (path: string, headers: Record<string, string>, body: unknown) =>
  fetch(`${BASE}${path}`, { method: "POST", headers, body: JSON.stringify(body) });

async function events(res: Response): Promise<SSEMessage[]> {
  const out: SSEMessage[] = [];
  const reader = (res.body as ReadableStream<Uint8Array>).pipeThrough(new SSEDecoderStream()).getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) out.push(r.value);
  return out;
}

describe("messages format", () => {
  test("JSON reply with the gateway's id headers", async () => {
    turnpike.reply({ text: "Bonjour", usage: { input_tokens: 3, output_tokens: 2 } });
    const res = await post("/v1/messages", messagesHeaders, messagesBody);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.headers.get("request-id")).toBe(res.headers.get("x-request-id"));
    expect(await res.json()).toMatchObject({
      type: "message",
      role: "assistant",
      model: "alpha-haiku-4-5",
      content: [{ type: "text", text: "Bonjour" }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 3, output_tokens: 2 },
    });
  });

  test("SSE: every event has an `event:` line equal to its JSON type, in the protocol's order", async () => {
    turnpike.reply({ text: "a b", toolCalls: [{ name: "f", input: { x: 1 } }] });
    const res = await post("/v1/messages", messagesHeaders, { ...messagesBody, stream: true });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const evs = await events(res);
    for (const ev of evs) expect(ev.event).toBe((JSON.parse(ev.data) as { type: string }).type);
    expect(evs.map((e) => e.event)).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const toolStart = JSON.parse(evs[6]?.data ?? "{}") as {
      index: number;
      content_block: { type: string; input: object };
    };
    expect(toolStart).toMatchObject({ index: 1, content_block: { type: "tool_use", input: {} } });
    const fragments = evs
      .slice(7, 10)
      .map((e) => (JSON.parse(e.data) as { delta: { partial_json: string } }).delta.partial_json);
    expect(fragments.join("")).toBe('{"x":1}');
    expect(fragments[0]).toBe("");
  });

  test("an in-band error ends the stream without message_stop", async () => {
    turnpike.reply({ text: "a b c", streamError: { status: 529, afterEvents: 3 } });
    const evs = await events(await post("/v1/messages", messagesHeaders, { ...messagesBody, stream: true }));
    expect(evs.map((e) => e.event)).toEqual(["message_start", "ping", "content_block_start", "error"]);
    expect(JSON.parse(evs[3]?.data ?? "")).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "Mocked error with status 529" },
    });
  });

  test("errors before the stream are complete JSON in the messages envelope, never SSE", async () => {
    turnpike.fail(429, { message: "slow down", retryAfter: 2 });
    const res = await post("/v1/messages", messagesHeaders, { ...messagesBody, stream: true });
    expect(res.status).toBe(429);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.headers.get("retry-after")).toBe("2");
    expect(await res.json()).toEqual({
      type: "error",
      error: { type: "rate_limit_error", message: "slow down" },
      request_id: res.headers.get("x-request-id"),
    });
  });
});

describe("chat completions format", () => {
  test("JSON reply", async () => {
    turnpike.reply({ text: "Hola" });
    const res = await post("/v1/chat/completions", chatHeaders, chatBody);
    expect(res.headers.get("request-id")).toBeNull();
    expect(await res.json()).toMatchObject({
      object: "chat.completion",
      model: "beta-5",
      choices: [{ index: 0, message: { role: "assistant", content: "Hola" }, finish_reason: "stop" }],
    });
  });

  test("SSE: data-only lines ending in data: [DONE]; the usage chunk only with include_usage", async () => {
    turnpike.reply({ text: "a b" }).reply({ text: "a b" });
    const plain = await events(await post("/v1/chat/completions", chatHeaders, { ...chatBody, stream: true }));
    expect(plain.every((e) => e.event === undefined)).toBe(true);
    expect(plain.at(-1)?.data).toBe("[DONE]");
    const chunks = plain.slice(0, -1).map(
      (e) =>
        JSON.parse(e.data) as {
          object: string;
          choices: Array<{ delta: { content?: string }; finish_reason: string | null }>;
        },
    );
    expect(chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("a b");
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("stop");

    const withUsage = await events(
      await post("/v1/chat/completions", chatHeaders, {
        ...chatBody,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    const usage = JSON.parse(withUsage.at(-2)?.data ?? "") as { choices: unknown[]; usage: { total_tokens: number } };
    expect(usage.choices).toEqual([]);
    expect(usage.usage.total_tokens).toBeGreaterThan(0);
  });

  test("tool calls stream as an opening fragment with id and name, then argument pieces", async () => {
    turnpike.reply({ toolCalls: [{ id: "call_1", name: "f", input: { city: "Paris" } }] });
    const evs = await events(await post("/v1/chat/completions", chatHeaders, { ...chatBody, stream: true }));
    const deltas = evs
      .slice(0, -1)
      .map(
        (e) =>
          (
            JSON.parse(e.data) as {
              choices: Array<{
                delta: {
                  tool_calls?: Array<{
                    index: number;
                    id?: string;
                    type?: string;
                    function?: { name?: string; arguments?: string };
                  }>;
                };
              }>;
            }
          ).choices[0]?.delta.tool_calls?.[0],
      )
      .filter((t) => t !== undefined);
    expect(deltas[0]).toEqual({ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } });
    expect(deltas.map((d) => d?.function?.arguments ?? "").join("")).toBe('{"city":"Paris"}');
  });

  test("an in-band error is a data: {error} frame followed by [DONE]; a chat caller never sees 529", async () => {
    turnpike.reply({ streamError: { status: 529, afterEvents: 1 } });
    const evs = await events(await post("/v1/chat/completions", chatHeaders, { ...chatBody, stream: true }));
    expect(JSON.parse(evs[1]?.data ?? "")).toEqual({
      error: {
        message: "Mocked error with status 529",
        type: "service_unavailable_error",
        param: null,
        code: "server_is_overloaded",
      },
    });
    expect(evs[2]?.data).toBe("[DONE]");
    turnpike.fail(529);
    expect((await post("/v1/chat/completions", chatHeaders, chatBody)).status).toBe(503);
  });

  test("chunkSize writes the body in pieces of that many bytes", async () => {
    turnpike.reply({ text: "日本語", chunkSize: 2 });
    const res = await post("/v1/chat/completions", chatHeaders, { ...chatBody, stream: true });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const sizes: number[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) sizes.push(r.value.length);
    expect(sizes.slice(0, -1).every((s) => s === 2)).toBe(true);
    expect(sizes.length).toBeGreaterThan(100);
  });
});
