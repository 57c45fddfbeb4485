/**
 * Errors are data (docs/style.md rule 3): one `GatewayError` (status, type, code, message) that each
 * client format renders in its own envelope (docs/protocols.md §1.8, §2.7, §4.8).
 */
import {
  CHAT_ERROR_BY_STATUS,
  type ChatErrorBody,
  MESSAGES_ERROR_STATUS_BY_TYPE,
  MESSAGES_ERROR_TYPE_BY_STATUS,
  type MessagesErrorBody,
  type MessagesErrorType,
  chatClientStatus,
  chatErrorType,
  messagesClientStatus,
  messagesErrorType,
} from "@turnpike/schema";

/** The upstream protocols: one type for the whole repository, defined in `@turnpike/schema`. */
export type { Protocol } from "@turnpike/schema";

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

/**
 * Messages-format `error.type` by HTTP status (docs/protocols.md §1.8): the one table (docs/style.md rule 10),
 * kept in `@turnpike/schema` so the SDKs and mocks read the same one.
 */
export const MESSAGES_ERROR_TYPES = MESSAGES_ERROR_TYPE_BY_STATUS;

/** Chat-format `{type, code}` by HTTP status (docs/protocols.md §2.7, §4.8): the same one table. */
export const CHAT_ERROR_TYPES = CHAT_ERROR_BY_STATUS;

export const MESSAGES_TYPE_SET: ReadonlySet<string> = new Set(Object.values(MESSAGES_ERROR_TYPES));
/** Types a chat client may see; `invalid_request_error` is shared by both formats. */
const CHAT_TYPE_SET: ReadonlySet<string> = new Set([
  ...Object.values(CHAT_ERROR_TYPES).map((t) => t.type),
  "requests",
  "tokens",
]);

/** Status a messages-format error type stands for (an in-stream error has no HTTP status). */
export const MESSAGES_ERROR_STATUS: Record<MessagesErrorType, number> = MESSAGES_ERROR_STATUS_BY_TYPE;
/** The same table, indexable by any string an upstream sends. */
const STATUS_OF_MESSAGES_TYPE: Readonly<Record<string, number>> = MESSAGES_ERROR_STATUS;

/** The messages-format `error.type` for `status`: other 4xx `invalid_request_error`, other 5xx `api_error`. */
export function messagesErrorTypeForStatus(status: number): MessagesErrorType {
  return messagesErrorType(status);
}

/**
 * HTTP status to send a messages client: the format says 529 for "overloaded" where other
 * vendors say 503 (docs/protocols.md §4.8).
 */
export function messagesErrorStatus(err: GatewayError): number {
  return messagesClientStatus(err.status);
}

/** HTTP status to send a chat client: 529 is not a chat-format status; it becomes 503. */
export function chatErrorStatus(err: GatewayError): number {
  return chatClientStatus(err.status);
}

/** The error type and code of a request a guardrail policy refused (the gateway's docs/guardrails.md). */
export const GUARDRAIL_BLOCKED = "guardrail_blocked";

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
  // A guardrail's refusal keeps its own type in every format that has one (a 400 all the same).
  const type =
    err.code === GUARDRAIL_BLOCKED
      ? GUARDRAIL_BLOCKED
      : MESSAGES_TYPE_SET.has(err.type)
        ? err.type
        : messagesErrorTypeForStatus(err.status);
  return { type: "error", error: { type, message: err.message } };
}

/**
 * The chat-format error body: `{error:{message, type, param, code}}`. A quota error keeps its
 * chat identity (`insufficient_quota`) whatever type it was created with.
 */
export function renderChatError(err: GatewayError): ChatErrorBody {
  const byStatus = chatErrorType(err.status);
  let type = CHAT_TYPE_SET.has(err.type) ? err.type : byStatus.type;
  if (err.code === "insufficient_quota") type = "insufficient_quota";
  if (err.code === GUARDRAIL_BLOCKED) type = GUARDRAIL_BLOCKED;
  return { error: { message: err.message, type, param: err.param ?? null, code: err.code ?? byStatus.code } };
}

/** A messages-format error event's `error` (no HTTP status) → GatewayError, status from its type. */
export function gatewayErrorFromMessagesError(error: { type?: unknown; message?: unknown }): GatewayError {
  const type = typeof error.type === "string" ? error.type : "api_error";
  const status = STATUS_OF_MESSAGES_TYPE[type] ?? 500;
  const message = typeof error.message === "string" ? error.message : "upstream error";
  return new GatewayError({ status, type, message });
}
