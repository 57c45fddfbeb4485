/**
 * The error vocabularies of both formats, in one place (STYLE.md rule 10): the `type` (and, for
 * chat, `code`) each format uses for an HTTP status, and the status an error `type` or `code`
 * stands for when it arrives inside a stream, where the HTTP status is already 200
 * (wire-formats §1.8, §2.7, §4.8). The SDKs read the second table; `@turnpike/mocks` renders
 * errors with the first two, as the gateway does.
 */

/** Messages-format `error.type` by status; other 4xx are `invalid_request_error`, other 5xx `api_error`. */
export const MESSAGES_ERROR_TYPE_BY_STATUS: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  503: "overloaded_error",
  504: "timeout_error",
  529: "overloaded_error",
};

/** Chat-format `{type, code}` by status; other 4xx are `invalid_request_error`, other 5xx `server_error`. */
export const CHAT_ERROR_BY_STATUS: Readonly<Record<number, { type: string; code: string | null }>> = {
  400: { type: "invalid_request_error", code: null },
  401: { type: "invalid_request_error", code: "invalid_api_key" },
  403: { type: "permission_error", code: null },
  404: { type: "invalid_request_error", code: "model_not_found" },
  429: { type: "rate_limit_exceeded", code: "rate_limit_exceeded" },
  500: { type: "server_error", code: null },
  503: { type: "service_unavailable_error", code: "server_is_overloaded" },
  504: { type: "server_error", code: null },
};

/** An in-stream error `type` or `code` → the status it stands for. */
export const STREAM_ERROR_STATUS: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  invalid_api_key: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  model_not_found: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  rate_limit_exceeded: 429,
  insufficient_quota: 429,
  api_error: 500,
  server_error: 500,
  service_unavailable_error: 503,
  server_is_overloaded: 503,
  timeout_error: 504,
  overloaded_error: 529,
};

/** The messages-format `error.type` for `status`. */
export function messagesErrorType(status: number): string {
  return MESSAGES_ERROR_TYPE_BY_STATUS[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

/** The chat-format `{type, code}` for `status`; a chat client sees 529 as 503. */
export function chatErrorType(status: number): { type: string; code: string | null } {
  return CHAT_ERROR_BY_STATUS[status === 529 ? 503 : status] ?? (status >= 500 ? { type: "server_error", code: null } : { type: "invalid_request_error", code: null });
}
