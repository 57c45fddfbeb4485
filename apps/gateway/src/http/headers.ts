/** Response header names of Turnpike's own, one table (docs/style.md rule 10). */
export const HEADER = {
  requestId: "x-request-id",
  /** Turnpike's own request id, when `x-request-id` is the caller's (http/request-id.ts). */
  turnpikeRequestId: "x-turnpike-request-id",
  upstream: "x-turnpike-upstream",
  /** The vendor's own name of the model that answered (a JSON reply's), else the one asked of it. */
  upstreamModel: "x-turnpike-upstream-model",
  warning: "x-turnpike-warning",
  /** The catalog id that served, and the one asked for when a fallback served. */
  model: "x-turnpike-model",
  fallbackFrom: "x-turnpike-fallback-from",
  /** The service tier the call was sent and billed at, when not the default one. */
  serviceTier: "x-turnpike-service-tier",
  deployment: "x-turnpike-deployment",
  attempts: "x-turnpike-attempts",
  count: "x-turnpike-count",
  retryAfter: "retry-after",
  retryAfterMs: "retry-after-ms",
  shouldRetry: "x-should-retry",
} as const;

export const SSE_HEADERS: Record<string, string> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
  connection: "keep-alive",
};
