/**
 * The performance targets, as ratios against the bare proxy measured in the same run (the
 * README's "Performance" section and bench/README.md list them):
 * - throughput at concurrency 32: JSON passthrough ≥ 0.8×, JSON translation ≥ 0.6×, stream
 *   passthrough ≥ 0.7× (and ≥ 0.6× at concurrency 128), translated streams ≥ 0.5×;
 * - stream time to first byte, one request at a time: at most 0.25 ms over the bare proxy's (p50);
 * - memory per open stream at 1,000 streams flowing for 15 s: ≤ 24 KiB.
 * p50 latency and the memory of streams held still are reported beside them, not judged.
 */
import type { MemoryResult } from "./memory";
import type { ScenarioResult, TargetCheck, TtfbRow } from "./results";

export const TARGETS = {
  /** Throughput floors by concurrency, for each kind of scenario. */
  throughput: {
    json: { passthrough: { 32: 0.8 }, translation: { 32: 0.6 } },
    stream: { passthrough: { 32: 0.7, 128: 0.6 }, translation: { 32: 0.5 } },
  } as Record<"json" | "stream", Record<"passthrough" | "translation", Partial<Record<number, number>>>>,
  ttfbOverBareMs: 0.25,
  perStreamKib: 24,
} as const;

function atLeast(target: string, scenario: string, value: number, limit: number, concurrency?: number): TargetCheck {
  return { target, scenario, concurrency, value, limit, rule: "≥", met: value >= limit, margin: value / limit - 1 };
}

function atMost(
  target: string,
  scenario: string,
  value: number,
  limit: number,
  rule: "≤" | "<",
  concurrency?: number,
): TargetCheck {
  const met = rule === "≤" ? value <= limit : value < limit;
  return { target, scenario, concurrency, value, limit, rule, met, margin: 1 - value / limit };
}

export function checkTargets(
  rows: ScenarioResult[],
  ttfb: TtfbRow[],
  memory: readonly Pick<MemoryResult, "scenario" | "requested" | "open" | "per_stream_kib">[],
): TargetCheck[] {
  const out: TargetCheck[] = [];
  for (const r of rows) {
    const limit = TARGETS.throughput[r.stream ? "stream" : "json"][r.kind][r.concurrency];
    if (limit === undefined) continue;
    out.push(
      atLeast(`throughput ≥ ${limit}× bare proxy`, r.name, r.gateway.rps / r.bare_proxy.rps, limit, r.concurrency),
    );
  }
  for (const t of ttfb) {
    out.push(
      atMost(
        `stream TTFB ≤ bare proxy + ${TARGETS.ttfbOverBareMs} ms at p50`,
        t.name,
        t.gateway.p50_ms - t.bare_proxy.p50_ms,
        TARGETS.ttfbOverBareMs,
        "≤",
      ),
    );
  }
  for (const m of memory) {
    const where =
      `${m.scenario}, ${m.requested.toLocaleString("en-US")} streams of 15 s` +
      (m.open < m.requested ? ` (only ${m.open} opened)` : "");
    const check = atMost(
      `≤ ${TARGETS.perStreamKib} KiB per open stream`,
      where,
      m.per_stream_kib,
      TARGETS.perStreamKib,
      "≤",
    );
    // A figure over fewer streams than asked for is not the measure (queued requests weigh too).
    if (m.open < m.requested) check.met = false;
    out.push(check);
  }
  return out;
}
