/**
 * `cutAfter` / `cut`: a stream that ends as the gateway ends one it could not continue — the
 * caller format's in-band error, byte for byte what apps/gateway writes — or with the connection
 * reset; read by the official clients of the four formats.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError, GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { setupServer } from "msw/node";
import { createTurnpikeMock, STREAM_FAILED_MESSAGE } from "./index.js";

const BASE = "http://gw.test";
const turnpike = createTurnpikeMock({ baseURL: BASE, apiKey: "sk-cut" });
const server = setupServer(...turnpike.handlers);
beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => turnpike.reset());
afterAll(() => server.close());

// Built after `server.listen()`: these clients keep the `fetch` they find at construction.
let anthropic: Anthropic;
let openai: OpenAI;
let genai: GoogleGenAI;
beforeAll(() => {
  anthropic = new Anthropic({ apiKey: "sk-cut", baseURL: BASE, maxRetries: 0 });
  openai = new OpenAI({ apiKey: "sk-cut", baseURL: `${BASE}/v1`, maxRetries: 0 });
  genai = new GoogleGenAI({ apiKey: "sk-cut", httpOptions: { baseUrl: BASE, apiVersion: "v1beta" } });
});

const TEXT = "one two three four five six";
const user = [{ role: "user" as const, content: "Hi" }];

/** Runs `read` to its end and returns what it threw (undefined if it did not). */
async function thrown(read: () => Promise<void>): Promise<unknown> {
  try {
    await read();
    return undefined;
  } catch (e) {
    return e;
  }
}

/** A reset reads as Node's fetch reports one: `TypeError: terminated`, its cause an ECONNRESET. */
function expectReset(e: unknown): void {
  expect(e).toBeInstanceOf(TypeError);
  expect((e as TypeError).message).toBe("terminated");
  expect(((e as TypeError).cause as { code?: string }).code).toBe("ECONNRESET");
}

/** The SSE frames of a raw streamed call, as `{ event?, data }`. */
async function framesOf(res: Response): Promise<{ event?: string; data: string }[]> {
  return (await res.text())
    .split("\n\n")
    .filter((f) => f.trim() !== "")
    .map((f) => {
      const event = /^event: (.*)$/m.exec(f)?.[1];
      const data = /^data: (.*)$/m.exec(f)?.[1] ?? "";
      return event === undefined ? { data } : { event, data };
    });
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${BASE}${path}`, {
    method: "POST",
    headers: { authorization: "Bearer sk-cut", "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

describe("cut: the gateway's in-band error (the default)", () => {
  test("messages: N events, then `event: error` with the gateway's api_error; the SDK throws APIError", async () => {
    turnpike.reply({ text: TEXT, cutAfter: 4 });
    const res = await post(
      "/v1/messages",
      { model: "alpha-haiku-4-5", max_tokens: 50, stream: true, messages: user },
      { "x-api-key": "sk-cut" },
    );
    const frames = await framesOf(res);
    expect(frames.map((f) => f.event)).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "error",
    ]);
    expect(JSON.parse(frames.at(-1)!.data)).toEqual({
      type: "error",
      error: { type: "api_error", message: STREAM_FAILED_MESSAGE },
    });

    turnpike.reply({ text: TEXT, cutAfter: 5 });
    let text = "";
    const stream = anthropic.messages.stream({ model: "alpha-haiku-4-5", max_tokens: 50, messages: user });
    const e = await thrown(async () => {
      for await (const ev of stream)
        if (ev.type === "content_block_delta" && ev.delta.type === "text_delta") text += ev.delta.text;
    });
    expect(e).toBeInstanceOf(Anthropic.APIError);
    expect((e as InstanceType<typeof Anthropic.APIError>).message).toContain(STREAM_FAILED_MESSAGE);
    // Two deltas reached the client before the cut.
    expect(TEXT.startsWith(text)).toBe(true);
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toBe(TEXT);
  });

  test('chat: `data: {"error":…}` as the gateway writes it, then [DONE]; the SDK throws APIError', async () => {
    turnpike.reply({ text: TEXT, cutAfter: 3 });
    const frames = await framesOf(
      await post("/v1/chat/completions", { model: "beta-5", stream: true, messages: user }),
    );
    expect(frames).toHaveLength(5);
    expect(JSON.parse(frames[3]!.data)).toEqual({
      error: { message: STREAM_FAILED_MESSAGE, type: "server_error", param: null, code: null },
    });
    expect(frames[4]!.data).toBe("[DONE]");

    turnpike.reply({ text: TEXT, cutAfter: 3 });
    const stream = await openai.chat.completions.create({ model: "beta-5", messages: user, stream: true });
    const e = await thrown(async () => {
      for await (const _ of stream);
    });
    expect(e).toBeInstanceOf(OpenAI.APIError);
    expect((e as InstanceType<typeof OpenAI.APIError>).message).toBe(STREAM_FAILED_MESSAGE);
  });

  test("responses: `error` then `response.failed` with the gateway's api_error code; not stored; the SDK throws APIError", async () => {
    turnpike.reply({ text: TEXT, cutAfter: 4 });
    const frames = await framesOf(await post("/v1/responses", { model: "beta-5", stream: true, input: "Hi" }));
    expect(frames.map((f) => f.event).slice(-3)).toEqual(["response.content_part.added", "error", "response.failed"]);
    expect(JSON.parse(frames.at(-2)!.data)).toEqual({
      type: "error",
      code: "api_error",
      message: STREAM_FAILED_MESSAGE,
      param: null,
      sequence_number: 4,
    });
    const failed = JSON.parse(frames.at(-1)!.data).response;
    expect(failed.status).toBe("failed");
    expect(failed.error).toEqual({ code: "api_error", message: STREAM_FAILED_MESSAGE });
    expect(turnpike.storedResponses.size).toBe(0);

    turnpike.reply({ text: TEXT, cutAfter: 4 });
    const stream = await openai.responses.create({ model: "beta-5", input: "Hi", stream: true });
    const e = await thrown(async () => {
      for await (const _ of stream);
    });
    expect(e).toBeInstanceOf(OpenAI.APIError);
    expect((e as InstanceType<typeof OpenAI.APIError>).message).toBe(STREAM_FAILED_MESSAGE);
  });

  test("generateContent: the error envelope as the gateway's last frame; the SDK throws ApiError 500", async () => {
    turnpike.reply({ text: TEXT, cutAfter: 2 });
    const res = await post("/v1beta/models/gamma-3-pro:streamGenerateContent?alt=sse", {
      contents: [{ role: "user", parts: [{ text: "Hi" }] }],
    });
    const frames = await framesOf(res);
    expect(frames).toHaveLength(3);
    expect(JSON.parse(frames[2]!.data)).toEqual({
      error: { code: 500, message: STREAM_FAILED_MESSAGE, status: "INTERNAL" },
    });

    turnpike.reply({ text: TEXT, cutAfter: 2 });
    const e = await thrown(async () => {
      for await (const _ of await genai.models.generateContentStream({ model: "gamma-3-pro", contents: "Hi" }));
    });
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(500);
    expect((e as ApiError).message).toContain(STREAM_FAILED_MESSAGE);
  });
});

describe('cut: "reset": the connection drops after N events', () => {
  test("messages: exactly N events arrive, then reading fails; the SDK's iteration throws the reset", async () => {
    turnpike.reply({ text: TEXT, cutAfter: 5, cut: "reset", chunkSize: 7 });
    const res = await post(
      "/v1/messages",
      { model: "alpha-haiku-4-5", max_tokens: 50, stream: true, messages: user },
      { "x-api-key": "sk-cut" },
    );
    const reader = res.body!.getReader();
    let received = "";
    const e = await thrown(async () => {
      for (let r = await reader.read(); !r.done; r = await reader.read()) received += new TextDecoder().decode(r.value);
    });
    expectReset(e);
    expect(received.match(/^event: /gm)).toHaveLength(5);
    expect(received.endsWith("\n\n")).toBe(true);

    turnpike.reply({ text: TEXT, cutAfter: 5, cut: "reset" });
    const seen: string[] = [];
    const stream = await anthropic.messages.create({
      model: "alpha-haiku-4-5",
      max_tokens: 50,
      messages: user,
      stream: true,
    });
    expectReset(
      await thrown(async () => {
        for await (const ev of stream) seen.push(ev.type);
      }),
    );
    // Every event before the cut reached the caller (the SDK does not hand it `ping`).
    expect(seen).toEqual(["message_start", "content_block_start", "content_block_delta", "content_block_delta"]);
  });

  test("chat, responses and generateContent: the iteration throws the reset", async () => {
    turnpike.reply({ text: TEXT, cutAfter: 2, cut: "reset" }, { times: 3 });
    const chat = await openai.chat.completions.create({ model: "beta-5", messages: user, stream: true });
    expectReset(
      await thrown(async () => {
        for await (const _ of chat);
      }),
    );
    const responses = await openai.responses.create({ model: "beta-5", input: "Hi", stream: true });
    expectReset(
      await thrown(async () => {
        for await (const _ of responses);
      }),
    );
    expect(turnpike.storedResponses.size).toBe(0);
    expectReset(
      await thrown(async () => {
        for await (const _ of await genai.models.generateContentStream({ model: "gamma-3-pro", contents: "Hi" }));
      }),
    );
  });

  test("the stream helpers wrap the reset in the client's own error, the reset as its cause", async () => {
    turnpike.reply({ text: TEXT, cutAfter: 5, cut: "reset" }).reply({ text: TEXT, cutAfter: 3, cut: "reset" });
    const message = await anthropic.messages
      .stream({ model: "alpha-haiku-4-5", max_tokens: 50, messages: user })
      .finalMessage()
      .catch((e: unknown) => e);
    expect(message).toBeInstanceOf(Anthropic.AnthropicError);
    expectReset((message as Error).cause);
    const completion = await openai.chat.completions
      .stream({ model: "beta-5", messages: user })
      .finalChatCompletion()
      .catch((e: unknown) => e);
    expect(completion).toBeInstanceOf(OpenAI.OpenAIError);
    expectReset((completion as Error).cause);
  });

  test("a JSON reply is whole: a cut applies to streams only", async () => {
    turnpike.reply({ text: TEXT, cutAfter: 1, cut: "reset" });
    const reply = await openai.chat.completions.create({ model: "beta-5", messages: user });
    expect(reply.choices[0]?.message.content).toBe(TEXT);
  });
});

describe("a cut scripted wrong is the test author's error, at once", () => {
  test("with streamError, a negative count, `cut` alone or an unknown `cut`", () => {
    expect(() => turnpike.reply({ text: TEXT, cutAfter: 2, streamError: { status: 500 } })).toThrow(
      "`cutAfter` and `streamError` both end the stream",
    );
    expect(() => turnpike.reply({ cutAfter: -1 })).toThrow("`cutAfter` must be a whole number of events");
    expect(() => turnpike.reply({ cut: "reset" })).toThrow("set `cutAfter` too");
    // A value from untyped code.
    expect(() => turnpike.reply({ cutAfter: 1, cut: "close" as "reset" })).toThrow('`cut` must be "error" or "reset"');
  });
});
