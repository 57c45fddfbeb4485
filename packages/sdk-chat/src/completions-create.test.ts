import { describe, expect, test } from "bun:test";
import { BASE, hello, KEY, useMockGateway } from "../test/use-mock-gateway.js";
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ChatClient,
  InternalServerError,
  ModelNotFoundError,
  RateLimitError,
} from "./index.js";

const { turnpike, client } = useMockGateway();

describe("chat.completions.create", () => {
  test("posts to {base}/v1/chat/completions with a Bearer key", async () => {
    turnpike.reply({ text: "Hi there!", usage: { input_tokens: 7, output_tokens: 3 } });
    const completion = await client().chat.completions.create({ ...hello, temperature: 1.5 });
    expect(completion.object).toBe("chat.completion");
    expect(completion.choices[0]?.message.content).toBe("Hi there!");
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
    const req = turnpike.lastRequest();
    expect(req?.url).toBe(`${BASE}/v1/chat/completions`);
    expect(req?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req?.headers["x-api-key"]).toBeUndefined();
    expect(turnpike.bodies("chat")[0]).toEqual({ ...hello, temperature: 1.5 });
  });

  test("a base URL that already ends in /v1 is not doubled", async () => {
    const c = client({ baseURL: `${BASE}/v1` });
    expect(c.baseURL).toBe(`${BASE}/v1`);
    await c.chat.completions.create(hello);
    expect(turnpike.lastRequest()?.url).toBe(`${BASE}/v1/chat/completions`);
  });

  test("returns tool calls with JSON-string arguments and content null", async () => {
    turnpike.reply({ toolCalls: [{ id: "call_1", name: "get_weather", input: { city: "Paris" } }] });
    const completion = await client().chat.completions.create(hello);
    const message = completion.choices[0]?.message;
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
    expect(message?.content).toBeNull();
    expect(message?.tool_calls).toEqual([
      { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
    ]);
  });

  test("withResponse exposes the request id", async () => {
    const { requestId, response } = await client().chat.completions.create(hello).withResponse();
    expect(requestId).toMatch(/^req_mock_/);
    expect(response.headers.get("x-request-id")).toBe(requestId ?? "");
  });
});

describe("chat.completions.create errors", () => {
  test("a wrong key is an AuthenticationError in the chat envelope", async () => {
    const err = await client({ apiKey: "sk-wrong" })
      .chat.completions.create(hello)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect((err as AuthenticationError).code).toBe("invalid_api_key");
    expect((err as AuthenticationError).requestId).toMatch(/^req_mock_/);
  });

  test("an unknown model is a ModelNotFoundError (code model_not_found)", async () => {
    const err = await client()
      .chat.completions.create({ ...hello, model: "beta-nope" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelNotFoundError);
    expect((err as ModelNotFoundError).code).toBe("model_not_found");
    expect((err as ModelNotFoundError).model).toBe("beta-nope");
  });

  test("a request that breaks a format rule is a BadRequestError naming the field", async () => {
    const err = await client()
      .chat.completions.create({ ...hello, temperature: 3 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).message).toContain("temperature");
  });

  test("429 then 503 are retried, honouring retry-after-ms", async () => {
    turnpike
      .fail(429, { headers: { "retry-after-ms": "1" } })
      .fail(503, { headers: { "retry-after-ms": "1" } })
      .reply({ text: "ok" });
    const completion = await client().chat.completions.create(hello);
    expect(completion.choices[0]?.message.content).toBe("ok");
    expect(turnpike.requests).toHaveLength(3);
  });

  test("a 429 that outlasts the retries is a RateLimitError with the hint", async () => {
    turnpike.fail(429, { retryAfter: 0.001, headers: { "x-ratelimit-remaining-requests": "0" } }, { times: 2 });
    const err = await client({ maxRetries: 1 })
      .chat.completions.create(hello)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).retryAfterMs).toBe(1);
    expect((err as RateLimitError).rateLimit.remainingRequests).toBe(0);
    expect((err as RateLimitError).code).toBe("rate_limit_exceeded");
  });

  test("x-should-retry: false is obeyed", async () => {
    turnpike.fail(500, { headers: { "x-should-retry": "false" } });
    await expect(client().chat.completions.create(hello)).rejects.toBeInstanceOf(InternalServerError);
    expect(turnpike.requests).toHaveLength(1);
  });

  test("a gateway that cannot be reached is an APIConnectionError", async () => {
    turnpike.reply({ networkError: true }, { times: 2 });
    await expect(client({ maxRetries: 1 }).chat.completions.create(hello)).rejects.toBeInstanceOf(APIConnectionError);
  });

  test("a slow reply times out", async () => {
    turnpike.reply({ delayMs: 2_000 });
    await expect(client({ timeout: 30, maxRetries: 0 }).chat.completions.create(hello)).rejects.toBeInstanceOf(
      APITimeoutError,
    );
  });

  test("per-call timeout overrides the client's", async () => {
    turnpike.reply({ delayMs: 2_000 });
    await expect(client().chat.completions.create(hello, { timeout: 30, maxRetries: 0 })).rejects.toBeInstanceOf(
      APITimeoutError,
    );
  });

  test("the caller's AbortSignal cancels the call", async () => {
    turnpike.reply({ delayMs: 2_000 });
    const controller = new AbortController();
    const pending = client().chat.completions.create(hello, { signal: controller.signal });
    setTimeout(() => controller.abort(), 10);
    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
  });

  test("error classes are statics of the client too", async () => {
    const err = await client({ apiKey: "sk-wrong" })
      .chat.completions.create(hello)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChatClient.AuthenticationError);
  });
});
