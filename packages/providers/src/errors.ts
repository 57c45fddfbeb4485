/**
 * Errors are data (STYLE rule 3): one `GatewayError` (status, type, code, message) that each
 * client format renders in its own envelope (wire-formats §1.8, §2.7, §4.8).
 */
import type { ChatErrorBody, MessagesErrorBody } from "@turnpike/schema";

/** The three upstream protocols Turnpike speaks. */
export type Protocol = "messages" | "chat" | "generate";

export interface GatewayErrorInit {
  status: number;
  /** Error type; a renderer uses it when it belongs to that format's vocabulary, else maps `status`. */
  type?: string;
  message: string;
  /** Chat-format `code` (`context_length_exceeded`, `insufficient_quota`, `model_not_found`…). */
  code?: string;
  /** Chat-format `param`: the offending field. */
  param?: string;
  /** Response headers to send with the error (`retry-after`, `x-should-retry`). */
  headers?: Record<string, string>;
}

/**
 * The one error value of the gateway.
 *
 * @example
 * ```ts
 * throw new GatewayError({ status: 400, type: "invalid_request_error", message: "n: must be 1 for this model, got 3", param: "n" });
 * ```
 */
export class GatewayError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string | undefined;
  readonly param: string | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(init: GatewayErrorInit) {
    super(init.message);
    this.name = "GatewayError";
    this.status = init.status;
    this.type = init.type ?? messagesErrorTypeForStatus(init.status);
    this.code = init.code;
    this.param = init.param;
    this.headers = init.headers;
  }
}

/** A 400 `invalid_request_error` naming the field; the common case of the request converters. */
export function invalidRequest(param: string, message: string): GatewayError {
  return new GatewayError({ status: 400, type: "invalid_request_error", message: `${param}: ${message}`, param });
}

/** Messages-format `error.type` by HTTP status (wire-formats §1.8). One table (STYLE rule 10). */
export const MESSAGES_ERROR_TYPES = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
} as const satisfies Record<number, string>;

type MessagesErrorTypeName = (typeof MESSAGES_ERROR_TYPES)[keyof typeof MESSAGES_ERROR_TYPES];

/** Chat-format `{type, code}` by HTTP status (wire-formats §2.7, §4.8). One table. */
export const CHAT_ERROR_TYPES = {
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
} as const satisfies Record<number, { type: string; code: string | null }>;

export const MESSAGES_TYPE_SET: ReadonlySet<string> = new Set(Object.values(MESSAGES_ERROR_TYPES));
/** Types a chat client may see; `invalid_request_error` is shared by both formats. */
const CHAT_TYPE_SET: ReadonlySet<string> = new Set([
  ...Object.values(CHAT_ERROR_TYPES).map((t) => t.type),
  "insufficient_quota",
  "requests",
  "tokens",
]);

/** Status a messages-format error type stands for (an in-stream error has no HTTP status). */
export const MESSAGES_ERROR_STATUS: Record<MessagesErrorTypeName, number> = {
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
};

export function messagesErrorTypeForStatus(status: number): MessagesErrorTypeName {
  if (status === 503) return "overloaded_error";
  const t = (MESSAGES_ERROR_TYPES as Record<number, MessagesErrorTypeName>)[status];
  if (t) return t;
  // "invalid_request_error … also used for other unlisted 4xx" (wire-formats §1.8).
  return status >= 500 ? "api_error" : "invalid_request_error";
}

function chatTypeForStatus(status: number): { type: string; code: string | null } {
  const t = (CHAT_ERROR_TYPES as Record<number, { type: string; code: string | null }>)[status];
  if (t) return t;
  return status >= 500 ? { type: "server_error", code: null } : { type: "invalid_request_error", code: null };
}

/**
 * HTTP status to send a messages client: the format says 529 for "overloaded" where other
 * vendors say 503 (wire-formats §4.8).
 */
export function messagesErrorStatus(err: GatewayError): number {
  return err.status === 503 ? 529 : err.status;
}

/** HTTP status to send a chat client: 529 is not a chat-format status; it becomes 503. */
export function chatErrorStatus(err: GatewayError): number {
  return err.status === 529 ? 503 : err.status;
}

/**
 * The messages-format error body: `{type:"error", error:{type, message}}`.
 *
 * @example
 * ```ts
 * renderMessagesError(new GatewayError({ status: 429, message: "slow down" }));
 * // → { type: "error", error: { type: "rate_limit_error", message: "slow down" } }
 * ```
 */
export function renderMessagesError(err: GatewayError): MessagesErrorBody {
  const type = MESSAGES_TYPE_SET.has(err.type) ? err.type : messagesErrorTypeForStatus(err.status);
  return { type: "error", error: { type, message: err.message } };
}

/**
 * The chat-format error body: `{error:{message, type, param, code}}`. A quota error keeps its
 * chat identity (`insufficient_quota`) whatever type it was created with.
 */
export function renderChatError(err: GatewayError): ChatErrorBody {
  const byStatus = chatTypeForStatus(err.status);
  let type = CHAT_TYPE_SET.has(err.type) ? err.type : byStatus.type;
  if (err.code === "insufficient_quota") type = "insufficient_quota";
  return { error: { message: err.message, type, param: err.param ?? null, code: err.code ?? byStatus.code } };
}

/** A messages-format error event's `error` (no HTTP status) → GatewayError, status from its type. */
export function gatewayErrorFromMessagesError(error: { type?: unknown; message?: unknown }): GatewayError {
  const type = typeof error.type === "string" ? error.type : "api_error";
  const status = (MESSAGES_ERROR_STATUS as Record<string, number>)[type] ?? 500;
  const message = typeof error.message === "string" ? error.message : "upstream error";
  return new GatewayError({ status, type, message });
}
