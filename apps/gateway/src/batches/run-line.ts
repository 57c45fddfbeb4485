import type { GatewayDeps } from "../wiring/deps";
import { handleEmbeddings } from "../embeddings/handle-embeddings";
import { FORMATS } from "../formats";
import { handleInference } from "../pipeline/inference";
import type { Admitted } from "../limits/admit";
import type { KeyRecord } from "../storage/store";
import { isRecord } from "../vocabulary/client-errors";

/** The chat family's batch endpoints, and the client format each is served by. */
export const BATCH_ENDPOINTS = ["/v1/chat/completions", "/v1/responses", "/v1/embeddings"] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];

/** What one line's call came to: the status and body the client would have seen, and its request id. */
export interface LineReply {
  status: number;
  body: unknown;
  requestId: string;
  /** The reply's `retry-after`, in seconds, when it had one. */
  retryAfterS: number | undefined;
}

/** The share of the price a line of `model` is billed at when its upstream's batch API ran it. */
export function batchCostFactor(deps: Pick<GatewayDeps, "catalog">, model: unknown): number {
  const entry = typeof model === "string" ? deps.catalog.get(model) : undefined;
  return 1 - (entry?.batch_discount ?? 0);
}

/** A client endpoint a batch line calls (the chat family's three, or the messages format's). */
export type LineEndpoint = BatchEndpoint | "/v1/messages";

/** A line as the request a client would have sent (JSON, never a stream). */
export function lineRequest(endpoint: LineEndpoint, body: Record<string, unknown>): Request {
  return new Request(`http://batch.internal${endpoint}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(endpoint === "/v1/messages" ? { "anthropic-version": "2023-06-01" } : {}),
    },
    body: JSON.stringify({ ...body, ...(endpoint === "/v1/embeddings" ? {} : { stream: false }) }),
  });
}

/**
 * One batch line through the ordinary pipeline, in process, under the key that made the batch:
 * the same validation, routing, limits, budget and ledger as a call from outside (JSON, never a
 * stream). Through Turnpike's queue it is billed at the normal price; a line an upstream's own
 * batch API answered is replayed with `answer` in place of the upstream call (the pipeline
 * translates it back, meters and records it) and billed at `costFactor`, the batch price, under
 * the admission it was given when it was sent (not admitted again: the upstream already ran it).
 */
export async function runLine(
  deps: GatewayDeps,
  key: KeyRecord,
  endpoint: LineEndpoint,
  body: Record<string, unknown>,
  answered?: { answer: typeof fetch; costFactor: number; admitted: Admitted },
  hookAnswers?: Record<string, unknown>,
): Promise<LineReply> {
  const request = lineRequest(endpoint, body);
  // The hooks' answers kept when the line was prepared: read, not asked again (batches/prepare-line.ts).
  const hooks = hookAnswers ? { hookAnswers } : {};
  const internal = answered
    ? { key, costFactor: answered.costFactor, admitted: answered.admitted, ...hooks }
    : { key, costFactor: 1, ...hooks };
  if (answered) deps = { ...deps, fetch: answered.answer };
  let res: Response;
  switch (endpoint) {
    case "/v1/chat/completions":
      res = await handleInference(deps, request, FORMATS.chat, null, internal);
      break;
    case "/v1/responses":
      res = await handleInference(deps, request, FORMATS.responses, null, internal);
      break;
    case "/v1/messages":
      res = await handleInference(deps, request, FORMATS.messages, null, internal);
      break;
    case "/v1/embeddings":
      res = await handleEmbeddings(deps, request, null, internal);
      break;
    default: {
      const never: never = endpoint;
      return never;
    }
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: kept as text.
  }
  const retry = Number(res.headers.get("retry-after"));
  return {
    status: res.status,
    body: parsed,
    requestId: res.headers.get("x-request-id") ?? res.headers.get("request-id") ?? "",
    retryAfterS: Number.isFinite(retry) && retry > 0 ? retry : undefined,
  };
}

/** A refusal of the key's own limits (not a spent budget): the line waits and is tried again. */
export function waitAndRetry(reply: LineReply): boolean {
  if (reply.status !== 429 || !isRecord(reply.body)) return false;
  const err = isRecord(reply.body.error) ? reply.body.error : undefined;
  return !(err && (err.code === "insufficient_quota" || err.type === "billing_error"));
}
