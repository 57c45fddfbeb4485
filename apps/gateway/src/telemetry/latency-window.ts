import type { LatencyRow } from "../vocabulary/latency-row";

/** The value at quantile q of sorted numbers (nearest rank). */
function quantile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/**
 * This instance's last requests that reached an upstream (at most `capacity`), for the
 * dashboard's latency and time to first token by model and deployment: a ring of plain arrays
 * written once per request (no object made), summarised only when read.
 */
export class LatencyWindow {
  private readonly models: string[];
  private readonly deployments: string[];
  private readonly latency: Float64Array;
  /** NaN: not a stream. */
  private readonly ttft: Float64Array;
  private readonly failed: Uint8Array;
  private next = 0;
  private count = 0;

  constructor(readonly capacity = 5000) {
    this.models = new Array(capacity);
    this.deployments = new Array(capacity);
    this.latency = new Float64Array(capacity);
    this.ttft = new Float64Array(capacity);
    this.failed = new Uint8Array(capacity);
  }

  add(model: string, deployment: string, latencyMs: number, ttftMs: number | undefined, status: number): void {
    const i = this.next;
    this.models[i] = model;
    this.deployments[i] = deployment;
    this.latency[i] = latencyMs;
    this.ttft[i] = ttftMs ?? Number.NaN;
    this.failed[i] = status >= 400 ? 1 : 0;
    this.next = (i + 1) % this.capacity;
    if (this.count < this.capacity) this.count += 1;
  }

  /** One row per model and deployment, busiest first. */
  rows(): LatencyRow[] {
    const groups = new Map<
      string,
      { model: string; deployment: string; ok: number[]; ttft: number[]; n: number; errors: number }
    >();
    for (let i = 0; i < this.count; i++) {
      const slot = `${this.models[i]}\u0000${this.deployments[i]}`;
      let g = groups.get(slot);
      if (!g)
        groups.set(
          slot,
          (g = { model: this.models[i]!, deployment: this.deployments[i]!, ok: [], ttft: [], n: 0, errors: 0 }),
        );
      g.n += 1;
      if (this.failed[i]) g.errors += 1;
      else g.ok.push(this.latency[i]!);
      if (!Number.isNaN(this.ttft[i]!)) g.ttft.push(this.ttft[i]!);
    }
    const round = (x: number | null) => (x === null ? null : Math.round(x * 100) / 100);
    return [...groups.values()]
      .map((g) => {
        g.ok.sort((a, b) => a - b);
        g.ttft.sort((a, b) => a - b);
        return {
          model: g.model,
          deployment: g.deployment,
          requests: g.n,
          errors: g.errors,
          latency_p50_ms: round(quantile(g.ok, 0.5)),
          latency_p95_ms: round(quantile(g.ok, 0.95)),
          streams: g.ttft.length,
          ttft_p50_ms: round(quantile(g.ttft, 0.5)),
          ttft_p95_ms: round(quantile(g.ttft, 0.95)),
        };
      })
      .sort(
        (a, b) => b.requests - a.requests || a.model.localeCompare(b.model) || a.deployment.localeCompare(b.deployment),
      );
  }
}
