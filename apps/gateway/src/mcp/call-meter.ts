import { Counter, Histogram, type Registry } from "prom-client";
import { newRequestId } from "../http/request-id";
import type { Ledger } from "../metering/ledger";
import type { UsageRecord } from "../storage/store";
import type { Logger } from "../telemetry/logger";

/** How one tool call ended, as the ledger's `status` says it (HTTP words for what MCP has no status for). */
export const CALL_STATUS = {
  ok: 200,
  /** The result was larger than `mcp_limits.result_bytes`: not passed on. */
  resultTooLarge: 502,
  /** The upstream answered with an MCP error, or could not be reached. */
  upstreamFailed: 502,
  /** No answer within the server's `timeout_ms`. */
  timedOut: 504,
  /** The client cancelled the call or went away first (the convention of "client closed request"). */
  cancelled: 499,
} as const;

export interface ToolCall {
  keyId: string;
  server: string;
  tool: string;
  startedAt: number;
  status: number;
  /** Did the upstream answer at all (with a result or its own error)? */
  answered: boolean;
  /** The client cancelled the call (`notifications/cancelled`) or went away before its result. */
  aborted: boolean;
  bytesIn: number;
  bytesOut: number;
}

/**
 * The metering of MCP tool calls: one ledger record each (`endpoint: "mcp"`, `model` the
 * namespaced tool, `deployment` the server), one log line, and the `turnpike_mcp_*` metrics.
 */
export class CallMeter {
  private readonly calls: Counter<"server" | "tool" | "status">;
  private readonly duration: Histogram<"server">;
  private readonly bytes: Counter<"server" | "direction">;
  private readonly refused: Counter<"reason">;

  constructor(
    private readonly ledger: Ledger,
    private readonly logger: Logger,
    registry: Registry,
    readonly now: () => number,
  ) {
    this.calls = new Counter({
      name: "turnpike_mcp_tool_calls_total",
      help: "MCP tool calls forwarded upstream, by server, tool and the ledger's status.",
      labelNames: ["server", "tool", "status"],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: "turnpike_mcp_tool_call_duration_seconds",
      help: "Time of an MCP tool call, from its arrival to its result.",
      labelNames: ["server"],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
    this.bytes = new Counter({
      name: "turnpike_mcp_bytes_total",
      help: "Bytes of JSON of MCP tool call arguments (in) and results (out).",
      labelNames: ["server", "direction"],
      registers: [registry],
    });
    this.refused = new Counter({
      name: "turnpike_mcp_refused_total",
      help: "MCP requests Turnpike refused itself: not on the key's allow-list, rate-limited, arguments too large.",
      labelNames: ["reason"],
      registers: [registry],
    });
  }

  record(c: ToolCall): void {
    const latency = this.now() - c.startedAt;
    const record: UsageRecord = {
      request_id: newRequestId(),
      key_id: c.keyId,
      model: `${c.server}__${c.tool}`,
      endpoint: "mcp",
      stream: false,
      input_tokens: 0,
      output_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
      cost_usd: 0,
      deployment: c.server,
      bytes_in: c.bytesIn,
      bytes_out: c.bytesOut,
      status: c.status,
      upstream_status: c.answered ? 200 : 0,
      latency_ms: latency,
      aborted: c.aborted,
      estimated: false,
      created_at: new Date(this.now()).toISOString(),
    };
    this.ledger
      .record(record)
      .catch((e) => this.logger.error("recording an MCP tool call failed", { key_id: c.keyId }, e));
    this.calls.labels(c.server, c.tool, String(c.status)).inc();
    this.duration.labels(c.server).observe(latency / 1000);
    this.bytes.labels(c.server, "in").inc(c.bytesIn);
    this.bytes.labels(c.server, "out").inc(c.bytesOut);
    this.logger.info(`mcp tool call ${c.server}__${c.tool} ${c.status} in ${Math.round(latency)} ms`, {
      key_id: c.keyId,
      request_id: record.request_id,
    });
  }

  refusal(reason: "not_allowed" | "rate_limited" | "too_large", keyId: string, name: string): void {
    this.refused.labels(reason).inc();
    this.logger.warn(`mcp request refused (${reason}): ${name.slice(0, 200)}`, { key_id: keyId });
  }
}
