import { describe, expect, test } from "bun:test";
import { http, HttpResponse } from "msw";
import { BASE, hello, useMockGateway } from "../test/use-mock-gateway.js";
import {
  APIUserAbortError,
  AuthenticationError,
  InternalServerError,
  RateLimitError,
  type ChatCompletionChunk,
} from "./index.js";

const { turnpike, server, client } = useMockGateway();

const tricky = "naïve café — 日本語 🚀 done";

function rawSSE(frames: string[]): Response {
  const encoder = new TextEncoder();
  return new HttpResponse(
    new ReadableStream({
      start(c) {
        for (const f of frames) c.enqueue(encoder.encode(f));
        c.close();
      },
    }),
    { headers: { "content-type": "text/event-stream" } },
  );
}

const base = { id: "chatcmpl-1", object: "chat.completion.chunk" as const, created: 1, model: "beta-5" };
const chunk = (choices: ChatCompletionChunk["choices"], usage: ChatCompletionChunk["usage"] = null): string =>
  `data: ${JSON.stringify({ ...base, choices, usage })}\n\n`;

describe("chat.completions.create({ stream: true })", () => {
  test("yields chunks until [DONE]; the usage chunk only when asked for", async () => {
    turnpike.reply({ text: "one two" });
    const stream = await client().chat.completions.create({
      ...hello,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("one two");
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe("stop");
    expect(chunks.at(-1)?.choices).toEqual([]);
    expect(chunks.at(-1)?.usage?.total_tokens).toBeGreaterThan(0);

    turnpike.reply({ text: "one two" });
    const plain: ChatCompletionChunk[] = [];
    for await (const c of await client().chat.completions.create({ ...hello, stream: true })) plain.push(c);
    expect(plain.every((c) => c.choices.length === 1)).toBe(true);
  });

  test("an error chunk after the 200 is thrown as the class of its type", async () => {
    turnpike.reply({ text: "a b c", streamError: { status: 503, message: "busy", afterEvents: 2 } });
    const stream = await client().chat.completions.create({ ...hello, stream: true });
    const seen: string[] = [];
    const err = await (async () => {
      for await (const c of stream) seen.push(c.choices[0]?.delta.content ?? "");
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect((err as InternalServerError).status).toBe(503);
    expect((err as InternalServerError).message).toBe("503 busy");
    expect(seen).toHaveLength(2);
  });

  test("an in-band rate-limit error is a RateLimitError", async () => {
    turnpike.reply({ streamError: { status: 429, afterEvents: 1 } });
    const stream = await client().chat.completions.create({ ...hello, stream: true });
    await expect(
      (async () => {
        for await (const _ of stream);
      })(),
    ).rejects.toBeInstanceOf(RateLimitError);
  });

  test("`event: error` frames are thrown too", async () => {
    server.use(
      http.post(`${BASE}/v1/chat/completions`, () =>
        rawSSE(['event: error\ndata: {"error":{"message":"boom","type":"server_error"}}\n\n']),
      ),
    );
    const stream = await client().chat.completions.create({ ...hello, stream: true });
    await expect(
      (async () => {
        for await (const _ of stream);
      })(),
    ).rejects.toThrow("boom");
  });

  test("an HTTP error before the stream rejects the call itself", async () => {
    await expect(
      client({ apiKey: "sk-wrong" }).chat.completions.create({ ...hello, stream: true }),
    ).rejects.toBeInstanceOf(AuthenticationError);
  });
});

describe("chat.completions.stream()", () => {
  test("textStream, .on('content') and finalChatCompletion agree", async () => {
    turnpike.reply({ text: tricky });
    const stream = client().chat.completions.stream(hello);
    const viaEvents: string[] = [];
    stream.on("content", (delta) => viaEvents.push(delta));
    let viaIterator = "";
    for await (const text of stream.textStream) viaIterator += text;
    expect(viaIterator).toBe(tricky);
    expect(viaEvents.join("")).toBe(tricky);
    expect(await stream.finalContent()).toBe(tricky);
    expect((await stream.finalChatCompletion()).object).toBe("chat.completion");
  });

  test("the final completion equals the JSON reply for the same script, tool calls assembled", async () => {
    const script = {
      text: tricky,
      toolCalls: [
        { id: "call_a", name: "a", input: { q: "日本" } },
        { id: "call_b", name: "b", input: { n: [1, 2] } },
      ],
    };
    turnpike.reply(script).reply(script);
    const json = await client().chat.completions.create(hello);
    const streamed = await client()
      .chat.completions.stream({ ...hello, stream_options: { include_usage: true } })
      .finalChatCompletion();
    expect({ ...streamed, created: 0, id: "" }).toEqual({ ...json, created: 0, id: "" });
    expect(
      streamed.choices[0]?.message.tool_calls?.map((c) => (c.type === "function" ? c.function.arguments : "")),
    ).toEqual(['{"q":"日本"}', '{"n":[1,2]}']);
  });

  test("chunks and UTF-8 characters split across network reads assemble the same completion", async () => {
    const script = { text: tricky, toolCalls: [{ id: "call_1", name: "f", input: { city: "Zürich 🏔" } }] };
    turnpike.reply(script);
    const expected = await client().chat.completions.stream(hello).finalChatCompletion();
    for (const chunkSize of [1, 2, 3, 7, 11]) {
      turnpike.reply({ ...script, chunkSize });
      const completion = await client().chat.completions.stream(hello).finalChatCompletion();
      expect({ ...completion, id: "", created: 0 }).toEqual({ ...expected, id: "", created: 0 });
    }
  });

  test("tool-call fragments keyed by an index that does not start at 0, complete calls in one chunk", async () => {
    server.use(
      http.post(`${BASE}/v1/chat/completions`, () =>
        rawSSE([
          chunk([{ index: 0, delta: { role: "assistant", content: null }, finish_reason: null }]),
          chunk([
            {
              index: 0,
              delta: {
                tool_calls: [{ index: 1, id: "call_x", type: "function", function: { name: "x", arguments: "" } }],
              },
              finish_reason: null,
            },
          ]),
          chunk([
            { index: 0, delta: { tool_calls: [{ index: 1, function: { arguments: '{"a":' } }] }, finish_reason: null },
          ]),
          chunk([
            { index: 0, delta: { tool_calls: [{ index: 1, function: { arguments: "1}" } }] }, finish_reason: null },
          ]),
          chunk([
            {
              index: 0,
              delta: { tool_calls: [{ index: 2, id: "call_y", function: { name: "y", arguments: '{"b":2}' } }] },
              finish_reason: "tool_calls",
            },
          ]),
          chunk([], { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }),
          "data: [DONE]\n\n",
        ]),
      ),
    );
    const stream = client().chat.completions.stream(hello);
    const args: Array<[string, number]> = [];
    stream.on("toolCallArguments", (delta, _snapshot, index) => args.push([delta, index]));
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0]?.message).toEqual({
      role: "assistant",
      content: null,
      refusal: null,
      tool_calls: [
        { id: "call_x", type: "function", function: { name: "x", arguments: '{"a":1}' } },
        { id: "call_y", type: "function", function: { name: "y", arguments: '{"b":2}' } },
      ],
    });
    expect(completion.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    expect(args).toEqual([
      ['{"a":', 0],
      ["1}", 0],
      ['{"b":2}', 1],
    ]);
  });

  test("several choices are assembled side by side", async () => {
    server.use(
      http.post(`${BASE}/v1/chat/completions`, () =>
        rawSSE([
          chunk([{ index: 1, delta: { role: "assistant", content: "B" }, finish_reason: null }]),
          chunk([{ index: 0, delta: { role: "assistant", content: "A" }, finish_reason: null }]),
          chunk([
            { index: 0, delta: { content: "a" }, finish_reason: "stop" },
            { index: 1, delta: { content: "b" }, finish_reason: "length" },
          ]),
          "data: [DONE]\n\n",
        ]),
      ),
    );
    const completion = await client()
      .chat.completions.stream({ ...hello, n: 2 })
      .finalChatCompletion();
    expect(completion.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, "Aa", "stop"],
      [1, "Bb", "length"],
    ]);
  });

  test("a stream cut before finish_reason rejects finalChatCompletion", async () => {
    server.use(
      http.post(`${BASE}/v1/chat/completions`, () =>
        rawSSE([chunk([{ index: 0, delta: { content: "par" }, finish_reason: null }])]),
      ),
    );
    await expect(client().chat.completions.stream(hello).finalChatCompletion()).rejects.toThrow(
      "before choice 0 finished",
    );
  });

  test("an in-band error rejects finalChatCompletion and reaches the error listener", async () => {
    turnpike.reply({ text: "a b", streamError: { status: 500, afterEvents: 2 } });
    const stream = client().chat.completions.stream(hello);
    const errors: Error[] = [];
    stream.on("error", (e) => errors.push(e));
    await expect(stream.finalChatCompletion()).rejects.toBeInstanceOf(InternalServerError);
    expect(errors).toHaveLength(1);
  });

  test("abort() stops the stream; finalChatCompletion rejects with APIUserAbortError", async () => {
    turnpike.reply({ text: "a b c d e f g h", chunkDelayMs: 20 });
    const stream = client().chat.completions.stream(hello);
    stream.once("content", () => stream.abort());
    await expect(stream.finalChatCompletion()).rejects.toBeInstanceOf(APIUserAbortError);
  });

  test("leaving the chunk loop early aborts the request", async () => {
    turnpike.reply({ text: "a b c d e f", chunkDelayMs: 10 });
    const stream = client().chat.completions.stream(hello);
    for await (const c of stream) if (c.choices[0]?.delta.content) break;
    expect(stream.controller.signal.aborted).toBe(true);
  });
});
