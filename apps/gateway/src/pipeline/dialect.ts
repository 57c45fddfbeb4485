import { GatewayError, chatErrorStatus, messagesErrorStatus, renderChatError, renderMessagesError } from "@turnpike/providers";

/** The two wire formats a client can speak. */
export type Dialect = "messages" | "chat";

/** Response header names, one table (STYLE rule 10). */
export const HEADER = {
  requestId: "x-request-id",
  /** The messages format's own request-id header. */
  messagesRequestId: "request-id",
  upstream: "x-turnpike-upstream",
  warning: "x-turnpike-warning",
  retryAfter: "retry-after",
  shouldRetry: "x-should-retry",
} as const;

/**
 * The dialect of a call that the path does not decide (`/v1/models`, unknown routes): a caller
 * that sends the messages format's key or version header speaks messages; anyone else, chat.
 */
export function dialectOfHeaders(headers: Headers): Dialect {
  return headers.has("x-api-key") || headers.has("anthropic-version") || headers.has("alpha-version") ? "messages" : "chat";
}

export function dialectOfPath(path: string, headers: Headers): Dialect {
  if (path.startsWith("/v1/messages")) return "messages";
  if (path.startsWith("/v1/chat/")) return "chat";
  return dialectOfHeaders(headers);
}

export function idHeaders(dialect: Dialect, requestId: string): Record<string, string> {
  return dialect === "messages"
    ? { [HEADER.requestId]: requestId, [HEADER.messagesRequestId]: requestId }
    : { [HEADER.requestId]: requestId };
}

/** Any thrown value as a GatewayError; unknown failures become a 500 that names no internals. */
export function toGatewayError(e: unknown): GatewayError {
  if (e instanceof GatewayError) return e;
  console.error("turnpike: unexpected error", e);
  return new GatewayError({ status: 500, type: "api_error", message: "Internal error in Turnpike; the request was not completed." });
}

/** A complete JSON error in the caller's own format, never an SSE body. */
export function errorResponse(dialect: Dialect, e: unknown, requestId: string, extra: Record<string, string> = {}): Response {
  const err = toGatewayError(e);
  const body = dialect === "messages" ? renderMessagesError(err) : renderChatError(err);
  if (dialect === "messages") (body as { request_id?: string }).request_id = requestId;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    ...idHeaders(dialect, requestId),
    ...(err.headers ?? {}),
    ...extra,
  };
  // "Overloaded" is 529 in the messages format and 503 in the chat format.
  const status = dialect === "messages" ? messagesErrorStatus(err) : chatErrorStatus(err);
  return new Response(JSON.stringify(body), { status, headers });
}
