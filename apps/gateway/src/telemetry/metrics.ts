import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { LabelCache } from "./label-cache";
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

export const BREAKER_STATES = ["closed", "half_open", "open"] as const;
export type BreakerState = (typeof BREAKER_STATES)[number];

/** One deployment's circuit breaker as the routing code reports it at scrape time. */
export interface BreakerReading {
  deployment: string;
  model: string;
  state: BreakerState;
}

/** What the metrics need besides the pipeline's events, read only when scraped. */
export interface MetricsSources {
  /** Usage records handed to the ledger and not yet committed. */
  ledgerPending: () => number;
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
  private breakerSources: (() => Iterable<BreakerReading>)[] = [];
  private readonly tokens: LabelCache<Histogram.Internal<string>>;
  private readonly duration: LabelCache<Histogram.Internal<string>>;
  private readonly ttft: LabelCache<Histogram.Internal<string>>;
  private readonly tpot: LabelCache<Histogram.Internal<string>>;
  private readonly requests: LabelCache<Counter.Internal>;
  private readonly cost: LabelCache<Counter.Internal>;
  private readonly upstreamErrors: LabelCache<Counter.Internal>;
  private readonly rateLimited: LabelCache<Counter.Internal>;
  private readonly openStreams: Gauge;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    if (sources.processMetrics) collectDefaultMetrics({ register: this.registry });
    const histogram = (name: string, help: string, labelNames: string[], buckets: number[]) => {
      const h = new Histogram({ name, help, labelNames, buckets, registers });
      return new LabelCache((v) => h.labels(...v));
    };
    const counter = (name: string, help: string, labelNames: string[]) => {
      const c = new Counter({ name, help, labelNames, registers });
      return new LabelCache((v) => c.labels(...v));
    };
    this.tokens = histogram("gen_ai_client_token_usage", "Tokens used per request, by token type (input, output, cache_read, cache_write).", ["token_type", "model", "vendor"], BUCKETS.tokens);
    this.duration = histogram("gen_ai_server_request_duration_seconds", "Time from a request's arrival to its end (a stream's last byte).", ["model", "endpoint"], BUCKETS.duration);
    this.ttft = histogram("gen_ai_server_time_to_first_token_seconds", "Time from a streamed request's arrival to its first piece of reply.", ["model", "endpoint"], BUCKETS.ttft);
    this.tpot = histogram("gen_ai_server_time_per_output_token_seconds", "Time per output token after the first, of a streamed reply.", ["model", "endpoint"], BUCKETS.tpot);
    this.requests = counter("turnpike_requests_total", "Requests finished, by the status the client saw (model empty: refused before one was chosen).", ["endpoint", "model", "status"]);
    this.cost = counter("turnpike_cost_usd_total", "Cost billed in US dollars, by model and key id.", ["model", "key_id"]);
    this.upstreamErrors = counter("turnpike_upstream_errors_total", "Upstream attempts that failed, by vendor and class.", ["vendor", "class"]);
    this.rateLimited = counter("turnpike_rate_limited_total", "Requests refused with a 429 by Turnpike itself (a key's limits, or failed-authentication lockout).", ["endpoint"]);
    this.openStreams = new Gauge({ name: "turnpike_open_streams", help: "Streamed replies flowing to clients now.", registers });
    new Gauge({
      name: "turnpike_ledger_pending",
      help: "Usage records handed to the ledger and not yet committed.",
      registers,
      collect() {
        this.set(sources.ledgerPending());
      },
    });
    const breakers = this.breakerSources;
    new Gauge({
      name: "turnpike_deployment_breaker_state",
      help: "Each deployment's circuit breaker: 1 on its current state, 0 on the others.",
      labelNames: ["deployment", "model", "state"],
      registers,
      collect() {
        this.reset();
        for (const read of breakers) {
          for (const b of read()) for (const s of BREAKER_STATES) this.labels(b.deployment, b.model, s).set(s === b.state ? 1 : 0);
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
    this.requests.get(s.endpoint, model, s.status).inc();
    const seconds = s.latencyMs / 1000;
    this.duration.get(model, s.endpoint).observe(seconds);
    if (s.streamed) this.openStreams.dec();
    if (s.status === 429 && !s.record) this.rateLimited.get(s.endpoint).inc();
    const r = s.record;
    if (!r) return;
    const vendor = s.vendor ?? "";
    this.tokens.get("input", model, vendor).observe(r.input_tokens);
    this.tokens.get("output", model, vendor).observe(r.output_tokens);
    if (r.cache_read_tokens > 0) this.tokens.get("cache_read", model, vendor).observe(r.cache_read_tokens);
    if (r.cache_write_tokens > 0) this.tokens.get("cache_write", model, vendor).observe(r.cache_write_tokens);
    if (r.cost_usd > 0) this.cost.get(model, r.key_id).inc(r.cost_usd);
    if (s.ttftMs !== undefined) {
      this.ttft.get(model, s.endpoint).observe(s.ttftMs / 1000);
      // The pace of generation after the first piece, as the conventions define it: of whole replies only.
      if (r.output_tokens > 1 && s.status === 200 && !r.aborted) this.tpot.get(model, s.endpoint).observe((s.latencyMs - s.ttftMs) / 1000 / (r.output_tokens - 1));
    }
  }

  upstreamError(vendor: string, klass: UpstreamErrorClass): void {
    this.upstreamErrors.get(vendor, klass).inc();
  }

  streamStarted(): void {
    this.openStreams.inc();
  }

  /** The Prometheus text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
