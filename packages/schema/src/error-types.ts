/**
 * The error vocabularies of both client formats, in one place (docs/style.md rule 10): the `type`
 * (and, for chat, `code`) each format uses for an HTTP status, the status each format sends for
 * "overloaded", and the status an error `type` or `code` stands for when it arrives inside a
 * stream, where the HTTP status is already 200 (docs/protocols.md §1.8, §2.7, §4.8).
 *
 * The gateway renders its errors with these tables (through `@turnpike/providers`), the SDKs
 * read the stream table (through `@turnpike/sdk-core`), and `@turnpike/mocks` renders
 * errors with the status tables, so all of them give the same answer for a status.
 *
 * No runtime import: the `@turnpike/schema/error-types` entry serves this file without pulling TypeBox.
 */
import type { MessagesErrorType } from "./errors.js";

/**
 * Messages-format `error.type` by status; other 4xx are `invalid_request_error`, other 5xx
 * `api_error`. 503 and 529 are both "overloaded": a messages client is sent 529 for it.
 */
export const MESSAGES_ERROR_TYPE_BY_STATUS = {
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
} as const satisfies Readonly<Record<number, MessagesErrorType>>;

/** A chat-format error's `type` and `code`. */
export interface ChatErrorKind {
  type: string;
  code: string | null;
}

/**
 * Chat-format `{type, code}` by status; other 4xx are `invalid_request_error`, other 5xx
 * `server_error`. 529 is not a chat-format status: a chat client is sent 503 for it.
 */
export const CHAT_ERROR_BY_STATUS = {
  400: { type: "invalid_request_error", code: null },
  401: { type: "invalid_request_error", code: "invalid_api_key" },
  402: { type: "insufficient_quota", code: "insufficient_quota" },
  403: { type: "permission_error", code: null },
  404: { type: "invalid_request_error", code: "model_not_found" },
  409: { type: "invalid_request_error", code: null },
  413: { type: "invalid_request_error", code: null },
  422: { type: "invalid_request_error", code: null },
  429: { type: "rate_limit_exceeded", code: "rate_limit_exceeded" },
  500: { type: "server_error", code: null },
  503: { type: "service_unavailable_error", code: "server_is_overloaded" },
  504: { type: "server_error", code: null },
  529: { type: "service_unavailable_error", code: "server_is_overloaded" },
} as const satisfies Readonly<Record<number, ChatErrorKind>>;

/**
 * Messages-format `error.type` → the status it stands for (an in-stream error has no HTTP
 * status of its own). Overloaded is 529, the status a messages client is sent for it.
 */
export const MESSAGES_ERROR_STATUS_BY_TYPE = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
} as const satisfies Readonly<Record<MessagesErrorType, number>>;

/**
 * An in-stream error `type` or `code` of either format → the status it stands for. A chat
 * `insufficient_quota` arrives as a 429 (the chat vendors send it with that status).
 */
export const STREAM_ERROR_STATUS: Readonly<Record<string, number>> = {
  ...MESSAGES_ERROR_STATUS_BY_TYPE,
  invalid_api_key: 401,
  model_not_found: 404,
  rate_limit_exceeded: 429,
  insufficient_quota: 429,
  server_error: 500,
  service_unavailable_error: 503,
  server_is_overloaded: 503,
};

// Widened views of the literal tables, so an arbitrary status can index them.
const MESSAGES_BY_STATUS: Readonly<Record<number, MessagesErrorType>> = MESSAGES_ERROR_TYPE_BY_STATUS;
const CHAT_BY_STATUS: Readonly<Record<number, ChatErrorKind>> = CHAT_ERROR_BY_STATUS;

/**
 * The messages-format `error.type` for `status`.
 *
 * @example
 * ```ts
 * messagesErrorType(503); // "overloaded_error"
 * messagesErrorType(418); // "invalid_request_error"
 * ```
 */
export function messagesErrorType(status: number): MessagesErrorType {
  return MESSAGES_BY_STATUS[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

/**
 * The chat-format `{type, code}` for `status`.
 *
 * @example
 * ```ts
 * chatErrorType(529); // { type: "service_unavailable_error", code: "server_is_overloaded" }
 * ```
 */
export function chatErrorType(status: number): ChatErrorKind {
  return (
    CHAT_BY_STATUS[status] ??
    (status >= 500 ? { type: "server_error", code: null } : { type: "invalid_request_error", code: null })
  );
}

/** The HTTP status a messages-format client is sent for `status`: overloaded is 529, not 503. */
export function messagesClientStatus(status: number): number {
  return status === 503 ? 529 : status;
}

/** The HTTP status a chat-format client is sent for `status`: 529 is not a chat status; it is 503. */
export function chatClientStatus(status: number): number {
  return status === 529 ? 503 : status;
}
