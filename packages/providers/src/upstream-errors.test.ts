import { describe, expect, test } from "bun:test";
import { messagesErrorStatus, renderChatError, renderMessagesError } from "./errors.js";
import {
  chatStreamErrorToGatewayError,
  parseRetryDelaySeconds,
  upstreamErrorToGatewayError,
} from "./upstream-errors.js";

const fixture = (name: string) => Bun.file(new URL(`./__fixtures__/${name}`, import.meta.url)).text();

describe("upstream envelopes", () => {
  test("anthropic-400.error.json keeps type and message", async () => {
    const err = upstreamErrorToGatewayError("messages", 400, await fixture("anthropic-400.error.json"), new Headers());
    expect(err.status).toBe(400);
    expect(err.type).toBe("invalid_request_error");
    expect(err.message).toStartWith("messages.2.content.0: unexpected `tool_use_id`");
  });

  test("openai-400.error.json keeps param and code for a chat client", async () => {
    const err = upstreamErrorToGatewayError("chat", 400, await fixture("openai-400.error.json"), {});
    expect(renderChatError(err)).toEqual({
      error: {
        message:
          "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        type: "invalid_request_error",
        param: "max_tokens",
        code: "unsupported_parameter",
      },
    });
    expect(renderMessagesError(err).error.type).toBe("invalid_request_error");
  });

  test("google-429.error.json: per-minute quota with RetryInfo → 429, retry-after 35, retryable", async () => {
    const err = upstreamErrorToGatewayError("generate", 429, await fixture("google-429.error.json"), new Headers());
    expect(err.status).toBe(429);
    expect(err.type).toBe("rate_limit_error");
    expect(err.headers).toEqual({ "retry-after": "35" });
    expect(err.message).toBe("You exceeded your current quota, please check your plan.");
  });

  test("Gemini daily quota → x-should-retry false and insufficient_quota for chat clients", () => {
    const body = JSON.stringify({
      error: {
        code: 429,
        message: "Quota exceeded",
        status: "RESOURCE_EXHAUSTED",
        details: [
          {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            violations: [{ quotaId: "GenerateRequestsPerDayPerProjectPerModel-FreeTier" }],
          },
        ],
      },
    });
    const err = upstreamErrorToGatewayError("generate", 429, body);
    expect(err.headers?.["x-should-retry"]).toBe("false");
    expect(renderChatError(err).error).toMatchObject({ type: "insufficient_quota", code: "insufficient_quota" });
  });

  test("Gemini 400 API_KEY_INVALID → 401 authentication_error", () => {
    const body = JSON.stringify({
      error: {
        code: 400,
        message: "API key not valid. Please pass a valid API key.",
        status: "INVALID_ARGUMENT",
        details: [
          { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com" },
        ],
      },
    });
    const err = upstreamErrorToGatewayError("generate", 400, body);
    expect(err.status).toBe(401);
    expect(renderMessagesError(err).error.type).toBe("authentication_error");
    expect(renderChatError(err).error).toMatchObject({ type: "invalid_request_error", code: "invalid_api_key" });
  });

  test("Gemini array-wrapped error, UNAVAILABLE → overloaded", () => {
    const err = upstreamErrorToGatewayError(
      "generate",
      503,
      JSON.stringify([{ error: { code: 503, message: "overloaded", status: "UNAVAILABLE" } }]),
    );
    expect(err.status).toBe(529);
    expect(renderMessagesError(err).error.type).toBe("overloaded_error");
  });

  test("chat 429 insufficient_quota → x-should-retry false; rate limit keeps retry-after", () => {
    const quota = upstreamErrorToGatewayError(
      "chat",
      429,
      JSON.stringify({
        error: { message: "You exceeded your current quota", type: "insufficient_quota", code: "insufficient_quota" },
      }),
    );
    expect(quota.headers?.["x-should-retry"]).toBe("false");
    expect(renderChatError(quota).error).toMatchObject({ type: "insufficient_quota", code: "insufficient_quota" });
    const rate = upstreamErrorToGatewayError(
      "chat",
      429,
      JSON.stringify({ error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } }),
      new Headers({ "retry-after": "2", "retry-after-ms": "1500" }),
    );
    expect(rate.headers).toEqual({ "retry-after": "2", "retry-after-ms": "1500" });
    expect(renderMessagesError(rate).error.type).toBe("rate_limit_error");
  });

  test("chat 503 server_is_overloaded → 529 overloaded_error for messages clients", () => {
    const err = upstreamErrorToGatewayError(
      "chat",
      503,
      JSON.stringify({ error: { message: "busy", type: "service_unavailable_error", code: "server_is_overloaded" } }),
    );
    expect(messagesErrorStatus(err)).toBe(529);
    expect(renderMessagesError(err).error.type).toBe("overloaded_error");
  });

  test("a body that is not JSON still yields a message that names the status", () => {
    const err = upstreamErrorToGatewayError("chat", 502, "<html>Bad Gateway</html>");
    expect(err.status).toBe(502);
    expect(err.message).toBe("The chat upstream returned HTTP 502: <html>Bad Gateway</html>");
  });

  test("chat stream error objects infer a status from type/code", () => {
    expect(chatStreamErrorToGatewayError({ message: "m", type: "server_error" }).status).toBe(500);
    expect(chatStreamErrorToGatewayError({ message: "m", type: "invalid_request_error" }).status).toBe(400);
    expect(chatStreamErrorToGatewayError({ message: "m", code: "rate_limit_exceeded" }).status).toBe(429);
  });

  test("retryDelay parsing", () => {
    expect(parseRetryDelaySeconds("34.4s")).toBe(35);
    expect(parseRetryDelaySeconds("0.2s")).toBe(1);
    expect(parseRetryDelaySeconds("soon")).toBeUndefined();
  });
});
