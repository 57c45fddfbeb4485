/** How the mock answers, as the gateway does: id headers on every reply, errors in the caller's format. */
import type { MockError, MockReply } from "./mock-reply.js";
import { renderChatError } from "./render-chat.js";
import { renderGenerateError } from "./render-generate.js";
import { renderMessagesError } from "./render-messages.js";

/** The ids and format of one reply. */
export interface ResponseIds {
  /** Sequence number, for generated ids. */
  n: string;
  requestId: string;
  dialect: "messages" | "chat" | "generate";
}

/** Like the gateway: a caller with the messages format's key or version header speaks messages. */
export function isMessagesCaller(headers: Headers): boolean {
  return headers.has("x-api-key") || headers.has("alpha-version") || headers.has("anthropic-version");
}

/** `x-request-id` on every reply, plus `request-id` on messages-format replies. */
export function idHeaders(ids: ResponseIds): Record<string, string> {
  const base = { "x-request-id": ids.requestId, "x-turnpike-upstream": "mock" };
  return ids.dialect === "messages" ? { ...base, "request-id": ids.requestId } : base;
}

/** A 200 JSON reply. */
export function json(body: unknown, ids: ResponseIds, reply: MockReply): Response {
  return jsonResponse(body, 200, { ...idHeaders(ids), ...reply.headers });
}

/** A complete JSON error in the caller's format (never SSE, docs/protocols.md §4.8). */
export function errorResponse(error: MockError, ids: ResponseIds, extra: Record<string, string> | undefined): Response {
  const headers: Record<string, string> = { ...idHeaders(ids), ...extra, ...error.headers };
  if (error.retryAfter !== undefined) headers["retry-after"] = String(error.retryAfter);
  if (ids.dialect === "generate") {
    const rendered = renderGenerateError(error);
    return jsonResponse(rendered.body, rendered.status, headers);
  }
  const body = ids.dialect === "messages" ? renderMessagesError(error, ids.requestId) : renderChatError(error);
  // A chat client never sees 529 (docs/protocols.md §4.8).
  const status = ids.dialect === "chat" && error.status === 529 ? 503 : error.status;
  return jsonResponse(body, status, headers);
}

function jsonResponse(body: unknown, status: number, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}
