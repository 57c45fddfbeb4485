import { describe, expect, test } from "bun:test";
import { GatewayError, chatErrorStatus, messagesErrorStatus, renderChatError, renderMessagesError } from "./errors.js";

describe("rendering", () => {
  test("messages format: one type per status (§1.8)", () => {
    const cases: [number, string][] = [
      [400, "invalid_request_error"],
      [401, "authentication_error"],
      [403, "permission_error"],
      [404, "not_found_error"],
      [413, "request_too_large"],
      [429, "rate_limit_error"],
      [500, "api_error"],
      [504, "timeout_error"],
      [529, "overloaded_error"],
      [503, "overloaded_error"],
      [418, "invalid_request_error"],
      [502, "api_error"],
    ];
    for (const [status, type] of cases) {
      expect(renderMessagesError(new GatewayError({ status, message: "m" }))).toEqual({ type: "error", error: { type, message: "m" } });
    }
  });

  test("chat format: type, code and param per status (§2.7, §4.8)", () => {
    expect(renderChatError(new GatewayError({ status: 401, message: "bad key" }))).toEqual({
      error: { message: "bad key", type: "invalid_request_error", param: null, code: "invalid_api_key" },
    });
    expect(renderChatError(new GatewayError({ status: 404, type: "not_found_error", message: "no model" }))).toEqual({
      error: { message: "no model", type: "invalid_request_error", param: null, code: "model_not_found" },
    });
    expect(renderChatError(new GatewayError({ status: 400, message: "bad", param: "n", code: "invalid_value" }))).toEqual({
      error: { message: "bad", type: "invalid_request_error", param: "n", code: "invalid_value" },
    });
    expect(renderChatError(new GatewayError({ status: 529, message: "busy" })).error).toMatchObject({ type: "service_unavailable_error", code: "server_is_overloaded" });
    expect(renderChatError(new GatewayError({ status: 500, message: "x" })).error).toMatchObject({ type: "server_error", code: null });
    expect(renderChatError(new GatewayError({ status: 429, message: "slow" })).error).toMatchObject({ type: "rate_limit_exceeded", code: "rate_limit_exceeded" });
    expect(renderChatError(new GatewayError({ status: 429, type: "rate_limit_error", code: "insufficient_quota", message: "q" })).error).toMatchObject({
      type: "insufficient_quota",
      code: "insufficient_quota",
    });
  });

  test("status per client format: 529 for messages, 503 for chat", () => {
    const e = new GatewayError({ status: 529, message: "busy" });
    expect(messagesErrorStatus(e)).toBe(529);
    expect(chatErrorStatus(e)).toBe(503);
    expect(messagesErrorStatus(new GatewayError({ status: 503, message: "busy" }))).toBe(529);
  });
});
