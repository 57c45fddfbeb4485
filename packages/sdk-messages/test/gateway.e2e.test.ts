/**
 * End to end: both SDKs against the real gateway (spawned, simulator upstreams). Covers the
 * calls a user makes first — list models, create, stream — across formats (messages-format
 * clients on chat upstreams and the other way round), and the typed errors of the common
 * mistakes: a bad key and an unknown model.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import ChatClient, { type ChatCompletionTool } from "@turnpike/chat";
import { CATALOG_MODEL_IDS } from "@turnpike/schema";
import MessagesClient, {
  APIUserAbortError,
  AuthenticationError,
  InternalServerError,
  ModelNotFoundError,
  RateLimitError,
  type ToolDefinition,
} from "../src/index.js";
import { spawnGateway, type Gateway } from "@turnpike/gateway/spawn";

let gateway: Gateway;
let key: string;
let narrowKey: string;
beforeAll(async () => {
  gateway = await spawnGateway();
  key = await gateway.createKey({ name: "sdk-e2e" });
  narrowKey = await gateway.createKey({ name: "sdk-e2e-narrow", models: ["alpha-haiku-4-5", "beta-5"] });
}, 40_000);
afterAll(async () => {
  await gateway?.stop();
});

const messages = (apiKey = key) => new MessagesClient({ apiKey, baseURL: gateway.url, maxRetries: 0 });
const chat = (apiKey = key) => new ChatClient({ apiKey, baseURL: gateway.url, maxRetries: 0 });

const weatherSchema = { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] };
const messagesTool: ToolDefinition = {
  name: "get_weather",
  description: "Weather for a city",
  input_schema: weatherSchema,
};
const chatTool: ChatCompletionTool = { type: "function", function: { name: "get_weather", parameters: weatherSchema } };

describe("models", () => {
  test("both SDKs list the whole catalog for an unrestricted key", async () => {
    const viaMessages: string[] = [];
    for await (const m of messages().models.list()) viaMessages.push(m.id);
    const viaChat = (await chat().models.list()).data.map((m) => m.id);
    expect(viaMessages).toEqual(expect.arrayContaining([...CATALOG_MODEL_IDS]));
    expect(viaChat).toEqual(viaMessages);
  });

  test("retrieve resolves an id with spaces and parentheses", async () => {
    const model = await messages().models.retrieve("alpha-sonnet-4-6 (context-1m beta)");
    expect(model).toMatchObject({
      id: "alpha-sonnet-4-6 (context-1m beta)",
      owned_by: "alpha",
      object: "model",
      type: "model",
    });
  });

  test("validate names the id and exactly the key's models", async () => {
    expect((await chat(narrowKey).models.validate("beta-5")).id).toBe("beta-5");
    const err = await messages(narrowKey)
      .models.validate("alpha-opus-4-8")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelNotFoundError);
    expect((err as ModelNotFoundError).message).toContain('Model "alpha-opus-4-8" is not available to this API key.');
    expect([...((err as ModelNotFoundError).availableModels ?? [])].sort()).toEqual(["alpha-haiku-4-5", "beta-5"]);
  });
});

describe("messages SDK", () => {
  for (const model of ["alpha-haiku-4-5", "beta-5", "gamma-3-flash"]) {
    test(`create and stream agree on ${model}`, async () => {
      const params = { model, max_tokens: 200, messages: [{ role: "user" as const, content: "Hello there" }] };
      const json = await messages().messages.create(params);
      expect(json.content[0]?.type).toBe("text");
      const stream = messages().messages.stream(params);
      let text = "";
      for await (const piece of stream.textStream) text += piece;
      const final = await stream.finalMessage();
      expect(text).toBe(await stream.finalText());
      expect(text).toContain(`Simulated reply from ${model}`);
      expect(final.content).toEqual(json.content);
      expect(final.usage.output_tokens).toBe(json.usage.output_tokens);
      expect(stream.requestId).toBeTruthy();
    });
  }

  test("a streamed tool call arrives assembled from its JSON fragments", async () => {
    const params = {
      model: "delta-m3",
      max_tokens: 200,
      tools: [messagesTool],
      messages: [{ role: "user" as const, content: "Weather? [sim tools=1]" }],
    };
    const final = await messages().messages.stream(params).finalMessage();
    expect(final.stop_reason).toBe("tool_use");
    expect(final.content.at(-1)).toMatchObject({
      type: "tool_use",
      name: "get_weather",
      input: { city: "sample city" },
    });
  });

  test("countTokens counts the prompt", async () => {
    const { input_tokens } = await messages().messages.countTokens({
      model: "alpha-sonnet-4-6",
      messages: [{ role: "user", content: "Hello there" }],
    });
    expect(input_tokens).toBeGreaterThan(0);
  });

  test("an error inside the stream is raised as the type it names", async () => {
    const stream = messages().messages.stream({
      model: "alpha-haiku-4-5",
      max_tokens: 200,
      messages: [{ role: "user", content: "Hi [sim midstream_error]" }],
    });
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect((err as InternalServerError).type).toBe("overloaded_error");
  });

  test("aborting a stream stops it", async () => {
    const stream = messages().messages.stream({
      model: "alpha-haiku-4-5",
      max_tokens: 500,
      messages: [{ role: "user", content: "Hi [sim chunks=40 latency=20]" }],
    });
    stream.once("text", () => stream.abort());
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(APIUserAbortError);
  });
});

describe("chat SDK", () => {
  for (const model of ["beta-5", "alpha-sonnet-4-6", "gamma-3-pro"]) {
    test(`create and stream agree on ${model}`, async () => {
      const params = { model, messages: [{ role: "user" as const, content: "Hello there" }] };
      const json = await chat().chat.completions.create(params);
      const stream = chat().chat.completions.stream({ ...params, stream_options: { include_usage: true } });
      let text = "";
      for await (const piece of stream.textStream) text += piece;
      const final = await stream.finalChatCompletion();
      expect(text).toContain(`Simulated reply from ${model}`);
      expect(final.choices[0]?.message.content).toBe(json.choices[0]?.message.content ?? "");
      expect(final.choices[0]?.finish_reason).toBe("stop");
      expect(final.usage?.completion_tokens).toBe(json.usage?.completion_tokens ?? -1);
    });
  }

  test("streamed tool calls arrive assembled, from a messages-format upstream", async () => {
    const stream = chat().chat.completions.stream({
      model: "alpha-opus-4-8",
      tools: [chatTool],
      messages: [{ role: "user", content: "Weather? [sim tools=2]" }],
    });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]?.finish_reason).toBe("tool_calls");
    const calls = final.choices[0]?.message.tool_calls ?? [];
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call.type === "function" && JSON.parse(call.function.arguments)).toEqual({ city: "sample city" });
    }
  });

  test("an upstream 429 is a RateLimitError with the retry hint", async () => {
    const err = await chat()
      .chat.completions.create({
        model: "beta-5",
        messages: [{ role: "user", content: "Hi [sim error=429 retry_after=3]" }],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).retryAfterMs).toBe(3000);
  });
});

describe("typed errors", () => {
  test("a bad key is an AuthenticationError with a request id, in both SDKs", async () => {
    const m = await messages("sk-not-a-key")
      .messages.create({ model: "alpha-haiku-4-5", max_tokens: 10, messages: [{ role: "user", content: "x" }] })
      .catch((e: unknown) => e);
    const c = await chat("sk-not-a-key")
      .chat.completions.create({ model: "beta-5", messages: [{ role: "user", content: "x" }] })
      .catch((e: unknown) => e);
    for (const err of [m, c]) {
      expect(err).toBeInstanceOf(AuthenticationError);
      expect((err as AuthenticationError).status).toBe(401);
      expect((err as AuthenticationError).requestId).toMatch(/^req_/);
    }
    expect((m as AuthenticationError).type).toBe("authentication_error");
    expect((c as AuthenticationError).code).toBe("invalid_api_key");
  });

  test("an unknown model is a ModelNotFoundError naming it, in both SDKs", async () => {
    const m = await messages()
      .messages.create({ model: "alpha-nope", max_tokens: 10, messages: [{ role: "user", content: "x" }] })
      .catch((e: unknown) => e);
    const c = await chat()
      .chat.completions.create({ model: "beta-nope", messages: [{ role: "user", content: "x" }], stream: true })
      .catch((e: unknown) => e);
    expect(m).toBeInstanceOf(ModelNotFoundError);
    expect((m as ModelNotFoundError).model).toBe("alpha-nope");
    expect(c).toBeInstanceOf(ModelNotFoundError);
    expect((c as ModelNotFoundError).code).toBe("model_not_found");
    expect(String(c)).toContain("beta-nope");
  });

  test("a key over its requests-per-minute gets a RateLimitError with the hint and the limits, in both SDKs", async () => {
    const limited = {
      messages: await gateway.createKey({ name: "rpm-m", rpm: 1 }),
      chat: await gateway.createKey({ name: "rpm-c", rpm: 1 }),
    };
    const m = () =>
      messages(limited.messages).messages.create({
        model: "alpha-haiku-4-5",
        max_tokens: 20,
        messages: [{ role: "user", content: "x" }],
      });
    const c = () =>
      chat(limited.chat).chat.completions.create({ model: "beta-5", messages: [{ role: "user", content: "x" }] });
    await m();
    await c();
    for (const err of [await m().catch((e: unknown) => e), await c().catch((e: unknown) => e)]) {
      expect(err).toBeInstanceOf(RateLimitError);
      const limit = err as RateLimitError;
      expect(limit.retryAfterMs).toBeGreaterThan(0);
      expect(limit.rateLimit).toMatchObject({ limitRequests: 1, remainingRequests: 0 });
      expect(limit.rateLimit.resetRequests).toBeTruthy();
    }
  });

  test("a model outside the key's list is a ModelNotFoundError too", async () => {
    await expect(
      chat(narrowKey).chat.completions.create({ model: "gamma-3-pro", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toBeInstanceOf(ModelNotFoundError);
  });
});
