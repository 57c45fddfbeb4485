/**
 * A line of the live request log (`GET /admin/requests`): a metered request, or one refused
 * before any upstream call (with its reason). What happened, never what was said.
 *
 * The one definition: the gateway writes it (admin/usage-series.ts) and the dashboard reads it
 * (apps/dashboard/src/api.ts imports this type; a type import leaves nothing in its bundle). So
 * this file imports nothing.
 */
export interface RequestLine {
  request_id: string;
  created_at: string;
  key_id: string;
  model: string;
  endpoint: string;
  stream: boolean;
  status: number;
  latency_ms: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  aborted: boolean;
  /** An MCP tool call's arguments and result in bytes (`endpoint: "mcp"`, `model` is `<server>__<tool>`). */
  bytes_in?: number;
  bytes_out?: number;
  /** Refused before any upstream call: nothing used; `reason` is what the client was told. */
  refused?: true;
  error_type?: string;
  reason?: string;
}
