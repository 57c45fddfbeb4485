import { guardrailNote, type GuardrailRun } from "../guardrails/run";
import { Counter, Histogram, type Registry } from "prom-client";
import { newRequestId } from "../http/request-id";
import type { Ledger } from "../metering/ledger";
import { emit, type PipelineHooks } from "../request/events";
import type { UsageRecord } from "../storage/store";
import type { Logger } from "../log/logger";

/** How one MCP request ended, as the ledger's `status` says it (HTTP words for what MCP has no status for). */
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
  /** A guardrail policy refused the call's arguments (nothing reached the server). */
  blocked: 400,
} as const;

/** The MCP requests that are admitted, forwarded and metered: each is one ledger row. */
export const MCP_METHODS = [
  "tools/list",
  "tools/call",
  "prompts/list",
  "prompts/get",
  "resources/list",
  "resources/templates/list",
  "resources/read",
] as const;
export type McpMethod = (typeof MCP_METHODS)[number];

/** The metric label of a tool no configured server listed (a client may send any name). */
export const OTHER_TOOL = "other";

/** Tool names remembered per server for metric labels; past this, further names are `other`. */
const MAX_KNOWN_TOOLS = 1000;

/** One admitted MCP request, as it is metered. */
export interface McpOperation {
  method: McpMethod;
  keyId: string;
  /** The server it went to; undefined for a list gathered from every server the key may see. */
  server: string | undefined;
  /** The upstream's own tool or prompt name (tools/call, prompts/get). */
  name: string | undefined;
  startedAt: number;
  status: number;
  /** Did the upstream answer at all (with a result or its own error)? */
  answered: boolean;
  /** The client cancelled the call (`notifications/cancelled`) or went away before its result. */
  aborted: boolean;
  bytesIn: number;
  bytesOut: number;
  /** The request's headers, for the trace (a caller's `traceparent`). */
  headers: Headers | undefined;
  /** The call's guardrails, whose findings the record notes (docs/guardrails.md). */
  guard?: GuardrailRun | undefined;
}

/**
 * The metering of MCP requests — every call, read, get and list: one ledger record each
 * (`endpoint: "mcp"`, `model` the namespaced tool or prompt, else the method; `deployment` the
 * server; cost 0: Turnpike prices no MCP request), one request line (`msg: "request"`, as every
 * request writes), the `onOperation` event (the trace's span), and the `turnpike_mcp_*` metrics,
 * whose labels come from bounded sets: the method, a configured server, and a tool name only when
 * a configured server listed it (else `other`), so a client's made-up names add no series.
 */
export class CallMeter {
  private readonly calls: Counter<"server" | "tool" | "status">;
  private readonly requests: Counter<"method" | "server" | "status">;
  private readonly duration: Histogram<"server">;
  private readonly bytes: Counter<"server" | "direction">;
  private readonly refused: Counter<"reason">;
  private readonly known = new Map<string, Set<string>>();

  constructor(
    private readonly ledger: Ledger,
    private readonly logger: Logger,
    registry: Registry,
    readonly now: () => number,
    private readonly hooks: readonly PipelineHooks[] = [],
  ) {
    this.calls = new Counter({
      name: "turnpike_mcp_tool_calls_total",
      help: `MCP tool calls forwarded upstream, by server, tool (a tool its server did not list: "${OTHER_TOOL}") and the ledger's status.`,
      labelNames: ["server", "tool", "status"],
      registers: [registry],
    });
    this.requests = new Counter({
      name: "turnpike_mcp_requests_total",
      help: 'MCP requests admitted (calls, reads, gets and lists), by method, server ("" for a list of every server) and the ledger\'s status.',
      labelNames: ["method", "server", "status"],
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
      help: "MCP requests Turnpike refused itself: an invalid name, not on the key's allow-list, a spent budget, rate-limited, arguments too large.",
      labelNames: ["reason"],
      registers: [registry],
    });
  }

  /** Tools a configured server listed: their names become metric labels (up to {@link MAX_KNOWN_TOOLS} a server). */
  listed(server: string, tools: readonly string[]): void {
    let set = this.known.get(server);
    if (!set) {
      set = new Set();
      this.known.set(server, set);
    }
    for (const t of tools) {
      if (set.size >= MAX_KNOWN_TOOLS) break;
      set.add(t);
    }
  }

  /** The metric label of a tool: its name if its server listed it, else {@link OTHER_TOOL}. */
  toolLabel(server: string, tool: string): string {
    return this.known.get(server)?.has(tool) ? tool : OTHER_TOOL;
  }

  record(op: McpOperation): void {
    const endedAt = this.now();
    const latency = endedAt - op.startedAt;
    const model = op.name !== undefined && op.server !== undefined ? `${op.server}__${op.name}` : op.method;
    const record: UsageRecord = {
      request_id: newRequestId(),
      key_id: op.keyId,
      model,
      endpoint: "mcp",
      stream: false,
      input_tokens: 0,
      output_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
      cost_usd: 0,
      deployment: op.server ?? null,
      bytes_in: op.bytesIn,
      bytes_out: op.bytesOut,
      status: op.status,
      upstream_status: op.answered ? 200 : 0,
      latency_ms: latency,
      aborted: op.aborted,
      estimated: false,
      created_at: new Date(endedAt).toISOString(),
    };
    const found = op.guard?.summary();
    if (found) record.guardrail = guardrailNote(found);
    this.ledger
      .record(record)
      .catch((e) => this.logger.error("recording an MCP request failed", { key_id: op.keyId }, e));
    const server = op.server ?? "";
    this.requests.labels(op.method, server, String(op.status)).inc();
    if (op.method === "tools/call" && op.server !== undefined && op.name !== undefined) {
      this.calls.labels(op.server, this.toolLabel(op.server, op.name), String(op.status)).inc();
      this.duration.labels(op.server).observe(latency / 1000);
      this.bytes.labels(op.server, "in").inc(op.bytesIn);
      this.bytes.labels(op.server, "out").inc(op.bytesOut);
    }
    this.logger.request({
      request_id: record.request_id,
      key_id: op.keyId,
      endpoint: "mcp",
      method: op.method,
      model,
      server: op.server,
      status: op.status,
      upstream_status: record.upstream_status,
      latency_ms: Math.round(latency),
      bytes_in: op.bytesIn,
      bytes_out: op.bytesOut,
      aborted: op.aborted,
    });
    emit(this.hooks, "onOperation", {
      requestId: record.request_id,
      keyId: op.keyId,
      endpoint: "mcp",
      method: op.method,
      name: model,
      server: op.server,
      status: op.status,
      startedAt: op.startedAt,
      endedAt,
      headers: op.headers,
    });
  }

  /** A request Turnpike refused itself: counted by reason, logged with the name escaped and cut short. */
  refusal(
    reason: "invalid_name" | "not_allowed" | "budget" | "rate_limited" | "too_large",
    keyId: string,
    name: string,
  ): void {
    this.refused.labels(reason).inc();
    this.logger.warn(`mcp request refused (${reason}): ${JSON.stringify(name.slice(0, 200))}`, { key_id: keyId });
  }
}
