import { describe, expect, test } from "bun:test";
import {
  chatErrorType as sdkChatErrorType,
  makeStreamError,
  messagesErrorType as sdkMessagesErrorType,
} from "@turnpike/sdk-core";
import {
  GatewayError,
  chatErrorStatus,
  gatewayErrorFromMessagesError,
  messagesErrorStatus,
  messagesErrorTypeForStatus,
  renderChatError,
  renderMessagesError,
} from "./errors.js";

// Section numbers (§) in the test names refer to docs/protocols.md.
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
      expect(renderMessagesError(new GatewayError({ status, message: "m" }))).toEqual({
        type: "error",
        error: { type, message: "m" },
      });
    }
  });

  test("chat format: type, code and param per status (§2.7, §4.8)", () => {
    expect(renderChatError(new GatewayError({ status: 401, message: "bad key" }))).toEqual({
      error: { message: "bad key", type: "invalid_request_error", param: null, code: "invalid_api_key" },
    });
    expect(renderChatError(new GatewayError({ status: 404, type: "not_found_error", message: "no model" }))).toEqual({
      error: { message: "no model", type: "invalid_request_error", param: null, code: "model_not_found" },
    });
    expect(
      renderChatError(new GatewayError({ status: 400, message: "bad", param: "n", code: "invalid_value" })),
    ).toEqual({
      error: { message: "bad", type: "invalid_request_error", param: "n", code: "invalid_value" },
    });
    expect(renderChatError(new GatewayError({ status: 529, message: "busy" })).error).toMatchObject({
      type: "service_unavailable_error",
      code: "server_is_overloaded",
    });
    expect(renderChatError(new GatewayError({ status: 500, message: "x" })).error).toMatchObject({
      type: "server_error",
      code: null,
    });
    expect(renderChatError(new GatewayError({ status: 429, message: "slow" })).error).toMatchObject({
      type: "rate_limit_exceeded",
      code: "rate_limit_exceeded",
    });
    expect(
      renderChatError(
        new GatewayError({ status: 429, type: "rate_limit_error", code: "insufficient_quota", message: "q" }),
      ).error,
    ).toMatchObject({
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

describe("one error table: the gateway's renderers and the SDKs agree", () => {
  // Every status from 400 to 529: each listed in the table, and the unlisted ones that fall back.
  const statuses = Array.from({ length: 529 - 400 + 1 }, (_, i) => 400 + i);

  test("messages format: the same error.type for every status", () => {
    for (const status of statuses) {
      const rendered = renderMessagesError(new GatewayError({ status, message: "m" })).error.type;
      expect({ status, type: rendered }).toEqual({ status, type: sdkMessagesErrorType(status) });
      expect(messagesErrorTypeForStatus(status)).toBe(sdkMessagesErrorType(status));
    }
  });

  test("chat format: the same type and code for every status", () => {
    for (const status of statuses) {
      const { type, code } = renderChatError(new GatewayError({ status, message: "m" })).error;
      expect({ status, type, code }).toEqual({ status, ...sdkChatErrorType(status) });
    }
  });

  test("an in-stream messages error stands for the same status on both sides", () => {
    for (const status of statuses) {
      const error = { type: sdkMessagesErrorType(status), message: "m" };
      const sdk = makeStreamError({ type: "error", error }, new Headers()).status;
      expect({ type: error.type, status: gatewayErrorFromMessagesError(error).status }).toEqual({
        type: error.type,
        status: sdk ?? -1,
      });
    }
  });

  test("overloaded: 503 and 529 are overloaded_error, sent as 529 to messages clients and 503 to chat clients", () => {
    for (const status of [503, 529]) {
      const e = new GatewayError({ status, message: "busy" });
      expect(renderMessagesError(e).error.type).toBe("overloaded_error");
      expect(messagesErrorStatus(e)).toBe(529);
      expect(chatErrorStatus(e)).toBe(503);
      expect(renderChatError(e).error).toMatchObject({
        type: "service_unavailable_error",
        code: "server_is_overloaded",
      });
    }
    expect(renderChatError(new GatewayError({ status: 402, message: "pay" })).error).toMatchObject({
      type: "insufficient_quota",
      code: "insufficient_quota",
    });
  });
});
