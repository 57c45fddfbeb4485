/**
 * The targets, as ratios against the bare proxy measured in the same run:
 * throughput ≥ 0.8× (passthrough) / ≥ 0.6× (translation) at concurrency 32; p50 ≤ 1.25× the
 * bare proxy's; stream time-to-first-byte overhead < 1 ms at p50; ≤ 64 KiB per open stream.
 */
import type { ScenarioResult, TargetCheck, TtfbRow } from "./results";

export const TARGETS = {
  throughputConcurrency: 32,
  throughput: { passthrough: 0.8, translation: 0.6 },
  p50Ratio: 1.25,
  ttfbOverheadMs: 1,
  perStreamKib: 64,
} as const;

function atLeast(target: string, scenario: string, value: number, limit: number, concurrency?: number): TargetCheck {
  return { target, scenario, concurrency, value, limit, rule: "≥", met: value >= limit, margin: value / limit - 1 };
}

function atMost(target: string, scenario: string, value: number, limit: number, rule: "≤" | "<", concurrency?: number): TargetCheck {
  const met = rule === "≤" ? value <= limit : value < limit;
  return { target, scenario, concurrency, value, limit, rule, met, margin: 1 - value / limit };
}

export function checkTargets(
  rows: ScenarioResult[],
  ttfb: TtfbRow[],
  memory: { requested: number; open: number; perStreamKib: number } | undefined,
): TargetCheck[] {
  const out: TargetCheck[] = [];
  for (const r of rows) {
    if (r.concurrency !== TARGETS.throughputConcurrency) continue;
    const limit = TARGETS.throughput[r.kind];
    out.push(atLeast(`throughput ≥ ${limit}× bare proxy`, r.name, r.gateway.rps / r.bare_proxy.rps, limit, r.concurrency));
  }
  for (const r of rows) {
    out.push(atMost(`p50 ≤ ${TARGETS.p50Ratio}× bare proxy`, r.name, r.gateway.p50_ms / r.bare_proxy.p50_ms, TARGETS.p50Ratio, "≤", r.concurrency));
  }
  for (const t of ttfb) {
    out.push(atMost(`stream TTFB overhead < ${TARGETS.ttfbOverheadMs} ms at p50`, t.name, t.overhead_p50_ms, TARGETS.ttfbOverheadMs, "<"));
  }
  if (memory) {
    const where = `${memory.requested.toLocaleString("en-US")} open streams` + (memory.open < memory.requested ? ` (only ${memory.open} opened)` : "");
    const check = atMost(`≤ ${TARGETS.perStreamKib} KiB per open stream`, where, memory.perStreamKib, TARGETS.perStreamKib, "≤");
    // A figure over fewer streams than asked for is not the measure (queued requests weigh too).
    if (memory.open < memory.requested) check.met = false;
    out.push(check);
  }
  return out;
}
