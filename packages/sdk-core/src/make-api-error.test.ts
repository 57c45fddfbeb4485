import { describe, expect, test } from "bun:test";
import {
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  ModelNotFoundError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
} from "./errors.js";
import { makeAPIError, makeStreamError } from "./make-api-error.js";

const chatBody = (type: string, code: string | null = null) => ({
  error: { message: "nope", type, param: "model", code },
});
const messagesBody = (type: string) => ({ type: "error", error: { type, message: "nope" }, request_id: "req_body" });

describe("makeAPIError", () => {
  test("picks the class by status", () => {
    const cases: Array<[number, Function]> = [
      [400, BadRequestError],
      [401, AuthenticationError],
      [403, PermissionDeniedError],
      [404, NotFoundError],
      [409, ConflictError],
      [422, UnprocessableEntityError],
      [429, RateLimitError],
      [500, InternalServerError],
      [503, InternalServerError],
      [529, InternalServerError],
    ];
    for (const [status, cls] of cases) {
      const err = makeAPIError(status, chatBody("x"), undefined, new Headers());
      expect(err).toBeInstanceOf(cls);
      expect(err.status).toBe(status);
    }
    expect(makeAPIError(418, undefined, "teapot", new Headers()).constructor).toBe(APIError);
  });

  test("carries the request id, the parsed body and its fields", () => {
    const err = makeAPIError(
      400,
      chatBody("invalid_request_error", "bad_model"),
      undefined,
      new Headers({ "x-request-id": "req_1" }),
    );
    expect(err.requestId).toBe("req_1");
    expect(err.requestID).toBe("req_1");
    expect(err.error).toEqual(chatBody("invalid_request_error", "bad_model"));
    expect([err.type, err.code, err.param]).toEqual(["invalid_request_error", "bad_model", "model"]);
    expect(err.message).toBe("400 nope");
  });

  test("falls back to the messages request-id header, then the body's request_id", () => {
    expect(
      makeAPIError(401, messagesBody("authentication_error"), undefined, new Headers({ "request-id": "req_2" }))
        .requestId,
    ).toBe("req_2");
    expect(makeAPIError(401, messagesBody("authentication_error"), undefined, new Headers()).requestId).toBe(
      "req_body",
    );
  });

  test("a non-JSON body becomes the message", () => {
    const err = makeAPIError(502, "<html>Bad gateway</html>", undefined, new Headers());
    expect(err.message).toBe("502 <html>Bad gateway</html>");
    expect(err.error).toBeUndefined();
  });

  test("404 model_not_found, or a 404 on a model-scoped call, is a ModelNotFoundError", () => {
    const byCode = makeAPIError(404, chatBody("invalid_request_error", "model_not_found"), undefined, new Headers());
    expect(byCode).toBeInstanceOf(ModelNotFoundError);
    const byContext = makeAPIError(404, messagesBody("not_found_error"), undefined, new Headers(), {
      model: "alpha-x",
    });
    expect(byContext).toBeInstanceOf(ModelNotFoundError);
    expect((byContext as ModelNotFoundError).model).toBe("alpha-x");
    expect(makeAPIError(404, messagesBody("not_found_error"), undefined, new Headers())).not.toBeInstanceOf(
      ModelNotFoundError,
    );
  });

  test("RateLimitError reads the retry hint and the limit headers", () => {
    const headers = new Headers({
      "retry-after": "3",
      "x-ratelimit-limit-requests": "60",
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "3s",
      "x-ratelimit-limit-tokens": "100000",
      "x-ratelimit-remaining-tokens": "4000",
    });
    const err = makeAPIError(429, messagesBody("rate_limit_error"), undefined, headers) as RateLimitError;
    expect(err.retryAfterMs).toBe(3000);
    expect(err.rateLimit).toEqual({
      limitRequests: 60,
      remainingRequests: 0,
      resetRequests: "3s",
      limitTokens: 100000,
      remainingTokens: 4000,
    });
  });

  test("RateLimitError reads the messages format's rate-limit headers too", () => {
    const headers = new Headers({
      "retry-after-ms": "1500",
      "anthropic-ratelimit-requests-limit": "5",
      "anthropic-ratelimit-requests-remaining": "0",
      "anthropic-ratelimit-requests-reset": "2026-01-01T00:00:30Z",
    });
    const err = makeAPIError(429, messagesBody("rate_limit_error"), undefined, headers) as RateLimitError;
    expect(err.retryAfterMs).toBe(1500);
    expect(err.rateLimit).toEqual({ limitRequests: 5, remainingRequests: 0, resetRequests: "2026-01-01T00:00:30Z" });
  });
});

describe("makeStreamError", () => {
  test("maps in-band types and codes of both formats to the status classes", () => {
    expect(makeStreamError(messagesBody("overloaded_error"), new Headers())).toBeInstanceOf(InternalServerError);
    expect(makeStreamError(messagesBody("overloaded_error"), new Headers()).status).toBe(529);
    expect(makeStreamError(messagesBody("rate_limit_error"), new Headers())).toBeInstanceOf(RateLimitError);
    expect(makeStreamError(chatBody("server_error"), new Headers()).status).toBe(500);
    expect(makeStreamError(chatBody("service_unavailable_error", "server_is_overloaded"), new Headers()).status).toBe(
      503,
    );
    expect(makeStreamError(chatBody("invalid_request_error"), new Headers())).toBeInstanceOf(BadRequestError);
  });

  test("an unknown type is a plain APIError that keeps the body and the stream's request id", () => {
    const err = makeStreamError(
      { error: { type: "mystery", message: "odd" } },
      new Headers({ "x-request-id": "req_9" }),
    );
    expect(err.constructor).toBe(APIError);
    expect(err.status).toBeUndefined();
    expect(err.message).toBe("odd");
    expect(err.requestId).toBe("req_9");
  });
});
