import { heapStats } from "bun:jsc";
import { Counter, Gauge, Registry } from "prom-client";
import type { Upstream } from "../vocabulary/target";
import { OPERATION_NAMES, providerName } from "./gen-ai-names";
import { LatencyWindow } from "./latency-window";
import { LightCounter, LightHistogram } from "./light-metrics";
import type { RequestSummary, TrailListener, UpstreamErrorClass } from "./request-trail";

/**
 * Bucket bounds advised by the OpenTelemetry GenAI semantic conventions for each instrument
 * (docs/operations.md, "Metrics"), so that dashboards built for those conventions read ours.
 */
const BUCKETS = {
  tokens: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
  duration: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
  ttft: [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
  tpot: [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5],
};

/** The attributes the conventions give each GenAI metric, in this order in every label set below. */
const GEN_AI = [
  "gen_ai_operation_name",
  "gen_ai_provider_name",
  "gen_ai_request_model",
  "gen_ai_response_model",
] as const;

export const BREAKER_STATES = ["closed", "half_open", "open"] as const;
export type BreakerState = (typeof BREAKER_STATES)[number];

/** One deployment's circuit breaker as the routing code reports it at scrape time. */
export interface BreakerReading {
  deployment: string;
  model: string;
  state: BreakerState;
}

/** One monthly budget as it stands: a key's (with the key's team) or a team's (key id empty). */
export interface BudgetReading {
  scope: "key" | "team";
  keyId: string;
  team: string;
  limitUsd: number;
  spentUsd: number;
}

/** What the metrics need besides the pipeline's events, read only when scraped. */
export interface MetricsSources {
  /** Usage records handed to the ledger and not yet committed. */
  ledgerPending: () => number;
  /** The team id of a key (empty: none), for the cost counter's team label; kept in memory by the caller. */
  teamOf?: (keyId: string) => string | undefined;
  /** Every budget that is set (keys not revoked, teams), with this month's spend. */
  budgets?: () => Promise<BudgetReading[]>;
  /** Usage records the store refused for their values, set aside (not shipped); absent: none can be. */
  ledgerSetAside?: () => number;
  /** Also the runtime's own metrics (memory, CPU, event-loop lag): on for a gateway, off for unit tests. */
  processMetrics: boolean;
}

/**
 * The gateway's Prometheus metrics (`GET /metrics`), fed by the request trail. Names follow the
 * OpenTelemetry GenAI conventions where they exist, `turnpike_*` elsewhere. Each instance has its
 * own registry (several gateways can live in one process, as in the tests).
 */
export class GatewayMetrics implements TrailListener {
  readonly registry = new Registry();
  /** This instance's last requests' latency and first token, for the dashboard (`GET /admin/latency`). */
  readonly recent = new LatencyWindow();
  private readonly breakerSources: (() => Iterable<BreakerReading>)[] = [];
  private readonly tokens: LightHistogram;
  private readonly duration: LightHistogram;
  private readonly ttft: LightHistogram;
  private readonly tpot: LightHistogram;
  private readonly requests: LightCounter;
  private readonly cost: LightCounter;
  private readonly upstreamErrors: LightCounter;
  private readonly rateLimited: LightCounter;
  private readonly guardrails: LightCounter;
  private readonly teamOf: MetricsSources["teamOf"];
  /** Streams flowing now: a plain number, read by its gauge when scraped. */
  private openStreams = 0;

  constructor(sources: MetricsSources) {
    const r = this.registry;
    this.teamOf = sources.teamOf;
    if (sources.processMetrics) processMetrics(r);
    // Label names are the conventions' attribute names as Prometheus writes them (dots become
    // underscores); Turnpike's own carry a `turnpike_` prefix (docs/operations.md, "Metrics").
    this.tokens = new LightHistogram(
      "gen_ai_client_token_usage",
      "Tokens used per request, by token type (input, output, cache_read, cache_write).",
      [...GEN_AI, "gen_ai_token_type", "turnpike_vendor"],
      BUCKETS.tokens,
      r,
    );
    this.duration = new LightHistogram(
      "gen_ai_server_request_duration_seconds",
      "Time from a request's arrival to its end (a stream's last byte), by the deployment that served.",
      [...GEN_AI, "error_type", "turnpike_endpoint", "turnpike_deployment"],
      BUCKETS.duration,
      r,
    );
    this.ttft = new LightHistogram(
      "gen_ai_server_time_to_first_token_seconds",
      "Time from a streamed request's arrival to its first piece of reply, by the deployment that served.",
      [...GEN_AI, "turnpike_endpoint", "turnpike_deployment"],
      BUCKETS.ttft,
      r,
    );
    this.tpot = new LightHistogram(
      "gen_ai_server_time_per_output_token_seconds",
      "Time per output token after the first, of a whole streamed reply.",
      [...GEN_AI, "turnpike_endpoint"],
      BUCKETS.tpot,
      r,
    );
    this.requests = new LightCounter(
      "turnpike_requests_total",
      "Requests finished, by the status the client saw (model empty: refused before one was chosen).",
      ["turnpike_endpoint", "gen_ai_request_model", "http_response_status_code"],
      r,
    );
    this.cost = new LightCounter(
      "turnpike_cost_usd_total",
      "Cost billed in US dollars, by model, key id and the key's team id.",
      ["gen_ai_request_model", "turnpike_key_id", "turnpike_team"],
      r,
    );
    this.upstreamErrors = new LightCounter(
      "turnpike_upstream_errors_total",
      "Upstream attempts that failed, by provider, vendor and class.",
      ["gen_ai_provider_name", "turnpike_vendor", "error_type"],
      r,
    );
    this.rateLimited = new LightCounter(
      "turnpike_rate_limited_total",
      "Requests refused with a 429 by Turnpike itself: a key's limits (by key id), or failed-authentication lockout (no key id).",
      ["turnpike_endpoint", "turnpike_key_id"],
      r,
    );
    this.guardrails = new LightCounter(
      "turnpike_guardrail_detections_total",
      "Values the guardrail policies found, by policy, category, action (a dry run's: what it would have done) and key id; never a value.",
      ["turnpike_policy", "turnpike_category", "turnpike_action", "turnpike_dry_run", "turnpike_key_id"],
      r,
    );
    const metrics = this;
    new Gauge({
      name: "turnpike_open_streams",
      help: "Streamed replies flowing to clients now.",
      registers: [r],
      collect() {
        this.set(metrics.openStreams);
      },
    });
    new Gauge({
      name: "turnpike_ledger_pending",
      help: "Usage records handed to the ledger and not yet committed.",
      registers: [r],
      collect() {
        this.set(sources.ledgerPending());
      },
    });
    if (sources.budgets) budgetGauges(r, sources.budgets);
    new Gauge({
      name: "turnpike_ledger_set_aside",
      help: "Usage records the store refused for their values, set aside in the journal's set-aside.jsonl (alert on any).",
      registers: [r],
      collect() {
        this.set(sources.ledgerSetAside?.() ?? 0);
      },
    });
    new Gauge({
      name: "turnpike_deployment_breaker_state",
      help: "Each deployment's circuit breaker: 1 on its current state, 0 on the others.",
      labelNames: ["turnpike_deployment", "gen_ai_request_model", "turnpike_breaker_state"],
      registers: [r],
      collect() {
        this.reset();
        for (const read of metrics.breakerSources) {
          for (const b of read())
            for (const s of BREAKER_STATES) this.labels(b.deployment, b.model, s).set(s === b.state ? 1 : 0);
        }
      },
    });
  }

  /**
   * The seam for deployments' circuit breakers: the routing code registers a reader of their
   * states once, and every scrape reads it (nothing is paid per request).
   */
  watchBreakers(read: () => Iterable<BreakerReading>): void {
    this.breakerSources.push(read);
  }

  finished(s: RequestSummary): void {
    const model = s.model ?? "";
    const op = OPERATION_NAMES[s.endpoint];
    const provider = s.upstream ? providerName(s.upstream) : "";
    const r = s.record;
    const responseModel = r?.upstream_model ?? "";
    const deployment = r?.deployment ?? "";
    this.requests.child(s.endpoint, model, s.status).value += 1;
    // error.type: set only when the request failed; the status code is its low-cardinality class.
    const errorType = s.status >= 400 ? s.status : "";
    this.duration.observe(
      this.duration.child(op, provider, model, responseModel, errorType, s.endpoint, deployment),
      s.latencyMs / 1000,
    );
    if (s.streamed) this.openStreams -= 1;
    if (s.status === 429 && !r) this.rateLimited.child(s.endpoint, s.keyId ?? "").value += 1;
    if (!r) return;
    this.recent.add(model, deployment, s.latencyMs, s.ttftMs, s.status);
    const vendor = s.vendor ?? "";
    const tokens = this.tokens;
    tokens.observe(tokens.child(op, provider, model, responseModel, "input", vendor), r.input_tokens);
    tokens.observe(tokens.child(op, provider, model, responseModel, "output", vendor), r.output_tokens);
    if (r.cache_read_tokens > 0)
      tokens.observe(tokens.child(op, provider, model, responseModel, "cache_read", vendor), r.cache_read_tokens);
    if (r.cache_write_tokens > 0)
      tokens.observe(tokens.child(op, provider, model, responseModel, "cache_write", vendor), r.cache_write_tokens);
    // Labels from bounded sets: the config's policies and labels, the categories, the keys.
    if (r.guardrail)
      for (const d of r.guardrail.detections)
        this.guardrails.child(d.policy, d.category, d.action, String(d.dry_run), r.key_id).value += d.n;
    if (r.cost_usd > 0) this.cost.child(model, r.key_id, this.teamOf?.(r.key_id) ?? "").value += r.cost_usd;
    if (s.ttftMs !== undefined) {
      this.ttft.observe(this.ttft.child(op, provider, model, responseModel, s.endpoint, deployment), s.ttftMs / 1000);
      // The pace of generation after the first piece, as the conventions define it: of whole replies only.
      if (r.output_tokens > 1 && s.status === 200 && !r.aborted)
        this.tpot.observe(
          this.tpot.child(op, provider, model, responseModel, s.endpoint),
          (s.latencyMs - s.ttftMs) / 1000 / (r.output_tokens - 1),
        );
    }
  }

  upstreamError(upstream: Upstream, klass: UpstreamErrorClass): void {
    this.upstreamErrors.child(providerName(upstream), upstream.vendor, klass).value += 1;
  }

  streamStarted(): void {
    this.openStreams += 1;
  }

  /** The Prometheus text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * Each budget's limit and this month's spend, read once per scrape for both gauges (the registry
 * collects its metrics concurrently: the first gauge starts the read, the second takes the same).
 * One series per budget that is set: as many as keys and teams with budgets, no more.
 */
function budgetGauges(r: Registry, read: () => Promise<BudgetReading[]>): void {
  let reading: Promise<BudgetReading[]> | undefined;
  let takers = 0;
  const once = () => {
    if (!reading) {
      reading = read();
      takers = 0;
    }
    const p = reading;
    if (++takers === 2) reading = undefined;
    return p;
  };
  const labelNames = ["turnpike_budget_scope", "turnpike_key_id", "turnpike_team"];
  for (const [name, help, pick] of [
    [
      "turnpike_budget_limit_usd",
      "Monthly budget in US dollars, by key (with its team) or by team.",
      (b: BudgetReading) => b.limitUsd,
    ],
    [
      "turnpike_budget_spent_usd",
      "Spent this calendar month (UTC) in US dollars against each budget.",
      (b: BudgetReading) => b.spentUsd,
    ],
  ] as const) {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [r],
      async collect() {
        const list = await once();
        this.reset();
        for (const b of list) this.labels(b.scope, b.keyId, b.team).set(pick(b));
      },
    });
  }
}

/**
 * The process's own figures under their usual names, read only when scraped. (prom-client's
 * default collectors watch the event loop and the collector continuously: on Bun that cost a
 * JSON request about 100 µs of CPU in the benchmark, more than all of the gateway's own work.)
 */
function processMetrics(r: Registry): void {
  const started = Date.now() / 1000 - process.uptime();
  new Counter({
    name: "process_cpu_seconds_total",
    help: "User and system CPU time spent, in seconds.",
    registers: [r],
    collect() {
      const { user, system } = process.cpuUsage();
      this.reset();
      this.inc((user + system) / 1e6);
    },
  });
  new Gauge({
    name: "process_resident_memory_bytes",
    help: "Resident memory size, in bytes.",
    registers: [r],
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  new Gauge({
    name: "process_start_time_seconds",
    help: "Start time of the process since the Unix epoch, in seconds.",
    registers: [r],
    collect() {
      this.set(started);
    },
  });
  // Bun's process.memoryUsage() keeps heapUsed from the last collection while heapTotal is read
  // live, so "used" could exceed "total"; JavaScriptCore's own figures are read together instead.
  let heap: { heapSize: number; heapCapacity: number } | undefined;
  new Gauge({
    name: "nodejs_heap_size_used_bytes",
    help: "JavaScript heap in use, in bytes.",
    registers: [r],
    collect() {
      heap = heapStats();
      this.set(heap.heapSize);
    },
  });
  new Gauge({
    name: "nodejs_heap_size_total_bytes",
    help: "JavaScript heap size (in use and free), in bytes.",
    registers: [r],
    collect() {
      // The reading the "used" gauge took a moment before (collected first: registered first).
      const h = heap ?? heapStats();
      heap = undefined;
      this.set(h.heapCapacity);
    },
  });
}
