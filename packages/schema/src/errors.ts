/** Error bodies of both formats (docs/protocols.md §1.8 and §2.7). */
import { Type, type Static } from "@sinclair/typebox";
import { Nullable } from "./nullable.js";

/**
 * The `error.type` values of the messages format, by HTTP status (docs/protocols.md §1.8).
 *
 * @example
 * ```ts
 * const t: MessagesErrorType = "rate_limit_error"; // 429
 * ```
 */
export const MessagesErrorType = Type.Union([
  Type.Literal("invalid_request_error"), // 400
  Type.Literal("authentication_error"), // 401
  Type.Literal("billing_error"), // 402
  Type.Literal("permission_error"), // 403
  Type.Literal("not_found_error"), // 404
  Type.Literal("request_too_large"), // 413
  Type.Literal("rate_limit_error"), // 429
  Type.Literal("api_error"), // 500
  Type.Literal("timeout_error"), // 504
  Type.Literal("overloaded_error"), // 529
]);
export type MessagesErrorType = Static<typeof MessagesErrorType>;

/** `error` of a messages-format error body. `type` is a string: upstreams may add new ones. */
export const MessagesErrorDetail = Type.Object({
  type: Type.String(),
  message: Type.String(),
  details: Type.Optional(Type.Unknown()),
});
export type MessagesErrorDetail = Static<typeof MessagesErrorDetail>;

/**
 * A messages-format error reply.
 *
 * @example
 * ```ts
 * const body: MessagesErrorBody = {
 *   type: "error",
 *   error: { type: "invalid_request_error", message: "max_tokens: required integer, got nothing" },
 *   request_id: "req_011C...",
 * };
 * ```
 */
export const MessagesErrorBody = Type.Object({
  type: Type.Literal("error"),
  error: MessagesErrorDetail,
  request_id: Type.Optional(Nullable(Type.String())),
});
export type MessagesErrorBody = Static<typeof MessagesErrorBody>;

/** `error` of a chat-completions error body; `param` names the offending field. */
export const ChatErrorDetail = Type.Object({
  message: Type.String(),
  type: Type.String(),
  param: Type.Optional(Nullable(Type.String())),
  code: Type.Optional(Nullable(Type.String())),
});
export type ChatErrorDetail = Static<typeof ChatErrorDetail>;

/**
 * A chat-completions error reply (also the shape of a mid-stream error chunk).
 *
 * @example
 * ```ts
 * const body: ChatErrorBody = {
 *   error: { message: "temperature: must be between 0 and 2, got 3", type: "invalid_request_error", param: "temperature", code: null },
 * };
 * ```
 */
export const ChatErrorBody = Type.Object({ error: ChatErrorDetail });
export type ChatErrorBody = Static<typeof ChatErrorBody>;
