/**
 * One row of `GET /admin/latency` (telemetry/latency-window.ts): a model and deployment's
 * latency and time to first token over this instance's recent requests, exact percentiles of the requests kept. The
 * dashboard reads the same type (apps/dashboard/src/api.ts).
 */
export interface LatencyRow {
  model: string;
  deployment: string;
  /** Requests in the window that reached this deployment, and those the client saw fail. */
  requests: number;
  errors: number;
  /** Arrival to last byte, of the requests that succeeded (null: none did). */
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
  /** Arrival to first streamed piece, of the streams (null: none). */
  streams: number;
  ttft_p50_ms: number | null;
  ttft_p95_ms: number | null;
}
