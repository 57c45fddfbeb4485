import { describe, expect, test } from "bun:test";
import { BASE, hello, KEY, useMockGateway } from "../test/use-mock-gateway.js";
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  MessagesClient,
  ModelNotFoundError,
  RateLimitError,
} from "./index.js";

const { turnpike, client } = useMockGateway();

describe("messages.create", () => {
  test("posts the request to {base}/v1/messages with the messages-format headers", async () => {
    turnpike.reply({ text: "Hi there!", usage: { input_tokens: 7, output_tokens: 3 } });
    const message = await client().messages.create({ ...hello, system: "Be brief." });
    expect(message.content).toEqual([{ type: "text", text: "Hi there!" }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage).toMatchObject({ input_tokens: 7, output_tokens: 3 });
    const req = turnpike.lastRequest();
    expect(req?.url).toBe(`${BASE}/v1/messages`);
    expect(req?.headers["x-api-key"]).toBe(KEY);
    expect(req?.headers["alpha-version"]).toBe("2023-06-01");
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(turnpike.bodies("messages")[0]).toEqual({ ...hello, system: "Be brief." });
  });

  test("a base URL that ends in /v1 still reaches /v1/messages", async () => {
    await client({ baseURL: `${BASE}/v1/` }).messages.create(hello);
    expect(turnpike.lastRequest()?.url).toBe(`${BASE}/v1/messages`);
  });

  test("returns tool calls as tool_use blocks", async () => {
    turnpike.reply({
      text: "Checking.",
      toolCalls: [{ id: "toolu_1", name: "get_weather", input: { city: "Paris" } }],
    });
    const message = await client().messages.create(hello);
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content[1]).toEqual({
      type: "tool_use",
      id: "toolu_1",
      name: "get_weather",
      input: { city: "Paris" },
    });
  });

  test("withResponse exposes the request id and headers", async () => {
    const { data, requestId, response } = await client().messages.create(hello).withResponse();
    expect(data.type).toBe("message");
    expect(requestId).toMatch(/^req_mock_/);
    expect(response.headers.get("request-id")).toBe(requestId ?? "");
  });
});

describe("messages.create errors", () => {
  test("a wrong key is an AuthenticationError with the request id and body", async () => {
    const err = await client({ apiKey: "sk-wrong" })
      .messages.create(hello)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    const auth = err as AuthenticationError;
    expect(auth.status).toBe(401);
    expect(auth.type).toBe("authentication_error");
    expect(auth.requestId).toMatch(/^req_mock_/);
    expect(auth.error?.error.message).toBe("Invalid API key.");
  });

  test("an unknown model is a ModelNotFoundError naming it", async () => {
    const err = await client()
      .messages.create({ ...hello, model: "alpha-nope" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelNotFoundError);
    expect((err as ModelNotFoundError).model).toBe("alpha-nope");
    expect((err as ModelNotFoundError).message).toContain("alpha-nope");
  });

  test("a request that breaks a format rule is a BadRequestError that names the field", async () => {
    const err = await client()
      .messages.create({ ...hello, temperature: 3 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).message).toContain("temperature");
  });

  test("429 and 529 are retried, honouring retry-after-ms", async () => {
    turnpike.fail(429, { headers: { "retry-after-ms": "1" } }).fail(529, { headers: { "retry-after-ms": "1" } });
    turnpike.reply({ text: "third time lucky" });
    const message = await client().messages.create(hello);
    expect(message.content[0]).toEqual({ type: "text", text: "third time lucky" });
    expect(turnpike.requests).toHaveLength(3);
  });

  test("a 429 that outlasts the retries is a RateLimitError with the hint", async () => {
    turnpike.fail(429, { message: "slow down", retryAfter: 0.001 }, { times: 3 });
    const err = await client()
      .messages.create(hello)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).retryAfterMs).toBe(1);
    expect((err as RateLimitError).message).toBe("429 slow down");
    expect(turnpike.requests).toHaveLength(3);
  });

  test("x-should-retry: false is obeyed", async () => {
    turnpike.fail(500, { headers: { "x-should-retry": "false" } });
    await expect(client().messages.create(hello)).rejects.toBeInstanceOf(InternalServerError);
    expect(turnpike.requests).toHaveLength(1);
  });

  test("a gateway that cannot be reached is an APIConnectionError", async () => {
    turnpike.reply({ networkError: true }, { times: 2 });
    await expect(client({ maxRetries: 1 }).messages.create(hello)).rejects.toBeInstanceOf(APIConnectionError);
  });

  test("a slow reply times out", async () => {
    turnpike.reply({ delayMs: 2_000 });
    await expect(client({ timeout: 30, maxRetries: 0 }).messages.create(hello)).rejects.toBeInstanceOf(APITimeoutError);
  });

  test("the caller's AbortSignal cancels the call", async () => {
    turnpike.reply({ delayMs: 2_000 });
    const controller = new AbortController();
    const pending = client().messages.create(hello, { signal: controller.signal });
    setTimeout(() => controller.abort(), 10);
    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
  });

  test("error classes are also statics of the client, as on the official clients", async () => {
    const err = await client({ apiKey: "sk-wrong" })
      .messages.create(hello)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MessagesClient.AuthenticationError);
    expect(err).toBeInstanceOf(MessagesClient.APIError);
  });
});
