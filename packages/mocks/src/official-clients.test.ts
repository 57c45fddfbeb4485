/**
 * The mock speaks the formats well enough for the official client libraries of both formats —
 * the bar the gateway is held to — so apps that use them can test against it too.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { setupServer } from "msw/node";
import { createTurnpikeMock } from "./index.js";

const BASE = "http://gw.test";
const turnpike = createTurnpikeMock({ baseURL: BASE, apiKey: "sk-official" });
const server = setupServer(...turnpike.handlers);
beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => turnpike.reset());
afterAll(() => server.close());

// Built after `server.listen()`: these clients keep the `fetch` they find at construction.
let anthropic: Anthropic;
let openai: OpenAI;
beforeAll(() => {
  anthropic = new Anthropic({ apiKey: "sk-official", baseURL: BASE, maxRetries: 0 });
  openai = new OpenAI({ apiKey: "sk-official", baseURL: `${BASE}/v1`, maxRetries: 0 });
});
const script = { text: "Grüße 🚀", toolCalls: [{ id: "toolu_1", name: "lookup", input: { q: "x" } }], chunkSize: 5 };

describe("official messages-format client", () => {
  test("create, stream with finalMessage, models and typed errors", async () => {
    const params = { model: "alpha-haiku-4-5", max_tokens: 50, messages: [{ role: "user" as const, content: "Hi" }] };
    turnpike.reply(script).reply(script);
    const json = await anthropic.messages.create(params);
    const streamed = await anthropic.messages.stream(params).finalMessage();
    expect(streamed.content as unknown[]).toEqual(json.content);
    expect(streamed.content[1]).toMatchObject({ type: "tool_use", input: { q: "x" } });
    const models = await anthropic.models.list();
    expect(models.data.map((m) => m.id)).toContain("alpha-opus-4-8");
    turnpike.fail(429, { message: "slow" });
    // `.catch`: their promise type settles its own base promise with a placeholder, which bun's
    // `expect(...).rejects` reads directly.
    expect(await anthropic.messages.create(params).catch((e: unknown) => e)).toBeInstanceOf(Anthropic.RateLimitError);
  });

  test("an in-band error reaches the official client as an error", async () => {
    turnpike.reply({ text: "a b c", streamError: { status: 529, afterEvents: 3 } });
    const stream = anthropic.messages.stream({
      model: "alpha-haiku-4-5",
      max_tokens: 50,
      messages: [{ role: "user", content: "Hi" }],
    });
    await expect(stream.finalMessage()).rejects.toThrow("Mocked error with status 529");
  });
});

describe("official chat-completions client", () => {
  test("create, stream with finalChatCompletion, models and typed errors", async () => {
    const params = { model: "beta-5", messages: [{ role: "user" as const, content: "Hi" }] };
    turnpike.reply(script).reply(script);
    const json = await openai.chat.completions.create(params);
    const streamed = await openai.chat.completions.stream(params).finalChatCompletion();
    expect(streamed.choices[0]?.message.content).toBe(json.choices[0]?.message.content ?? "");
    expect(streamed.choices[0]?.message.tool_calls).toEqual(json.choices[0]?.message.tool_calls);
    const ids: string[] = [];
    for await (const m of openai.models.list()) ids.push(m.id);
    expect(ids).toContain("beta-5");
    expect(await openai.chat.completions.create({ ...params, model: "nope" }).catch((e: unknown) => e)).toBeInstanceOf(
      OpenAI.NotFoundError,
    );
  });

  test("an in-band error chunk reaches the official client as an error", async () => {
    turnpike.reply({ text: "a b", streamError: { status: 500, message: "upstream died", afterEvents: 2 } });
    const stream = await openai.chat.completions.create({
      model: "beta-5",
      messages: [{ role: "user", content: "Hi" }],
      stream: true,
    });
    await expect(
      (async () => {
        for await (const _ of stream);
      })(),
    ).rejects.toThrow("upstream died");
  });
});
