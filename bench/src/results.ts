/** The shape of `bench/results/latest.json` (a superset of the contract). */
import type { FeatureCost } from "./feature-cost";
import type { MemoryResult } from "./memory";
import type { BaselineName, ScenarioKind } from "./scenarios";

/** What one load run of one target measured. */
export interface TargetMetrics {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  /** CPU of the process under test per request: the proxy, or the simulator for `direct`. */
  cpu_us_per_req: number;
  /** Non-2xx replies, socket errors and timeouts (a cell with errors is not a valid measure). */
  errors: number;
  /** How busy core 0 (simulator + wrk) was, 0–1. Near 1: the upstream side capped the rate. */
  core0_busy: number;
}

export interface ScenarioResult {
  name: string;
  kind: ScenarioKind;
  stream: boolean;
  /** The same-protocol request the bare proxy and direct runs sent (see scenarios.ts). */
  baseline: BaselineName;
  concurrency: number;
  /** The published benchmark whose request shape this row is (scenarios.ts), reported beside it. */
  published?: string;
  gateway: TargetMetrics;
  bare_proxy: TargetMetrics;
  direct: TargetMetrics;
  /** The metering floor (metering-floor/) under the same request, for the scenarios it speaks. */
  metering_floor?: TargetMetrics;
  /** The peer gateway (src/peer.ts) under the same client request, for the scenarios it serves. */
  peer?: TargetMetrics;
}

export interface TtfbRow {
  name: string;
  gateway: { p50_ms: number; p99_ms: number };
  bare_proxy: { p50_ms: number; p99_ms: number };
  direct: { p50_ms: number; p99_ms: number };
  /** The metering floor's, for the scenarios it speaks. */
  metering_floor?: { p50_ms: number; p99_ms: number };
  /** The peer gateway's, for the scenarios it serves. */
  peer?: { p50_ms: number; p99_ms: number };
  /** gateway p50 − direct p50. */
  overhead_p50_ms: number;
  /** bare proxy p50 − direct p50, for comparison. */
  bare_overhead_p50_ms: number;
}

export interface TargetCheck {
  /** What is checked, e.g. "throughput ≥ 0.8× bare proxy at c=32". */
  target: string;
  scenario: string;
  concurrency?: number;
  value: number;
  limit: number;
  /** "≥" or "≤" or "<": how value must compare with limit. */
  rule: "≥" | "≤" | "<";
  met: boolean;
  /** Signed distance to the limit, relative (e.g. +0.12 = 12 % better than needed, −0.2 = 20 % short). */
  margin: number;
}

export interface BenchResults {
  meta: {
    started_at: string;
    duration_s: number;
    cell_seconds: number;
    warmup_seconds: number;
    cpus: number;
    bun: string;
    wrk: string;
    pinning: string;
    /** BUN_CONFIG_MAX_HTTP_REQUESTS given to both proxies (0 = Bun's default, 256). */
    fetch_cap: number;
    /** Niceness of every benchmark process (-10 when run as root, else 0). */
    nice: number;
    /** Cores' worth of CPU used by processes outside the bench: before the run, and during load runs. */
    foreign_load_cores: { before: number; mean: number; max: number; steal_mean?: number };
    /** The peer gateway loaded beside Turnpike (src/peer.ts), when installed. */
    peer?: { name: string; version: string; runtime: string };
  };
  scenarios: ScenarioResult[];
  ttfb: TtfbRow[];
  /** Streams held still; null when the gateway could not serve the stream scenario it is measured with (or --only left it out). */
  memory: MemoryResult | null;
  /** Streams that flow for 15 s (150 chunks 100 ms apart), per stream scenario measured so. */
  memory_long: MemoryResult[];
  /** What each feature adds per request when on, against the same chain without it (src/feature-cost.ts). */
  feature_cost?: FeatureCost;
  /** Against the bare proxy (the first targets). */
  targets: TargetCheck[];
  /** The performance issue's targets: against the metering floor and Turnpike's own passthroughs (targets.ts). */
  floor_targets: TargetCheck[];
}
