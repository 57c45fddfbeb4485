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
import { SCENARIOS } from "./scenarios";

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

/** Where a flowing-memory figure was read: its scenario and streams (and how many opened, when fewer). */
function streamsWhere(m: Pick<MemoryResult, "scenario" | "requested" | "open">): string {
  return (
    `${m.scenario}, ${m.requested.toLocaleString("en-US")} streams of 15 s` +
    (m.open < m.requested ? ` (only ${m.open} opened)` : "")
  );
}

/** A stream's added time to first byte at p50, one request at a time, against its limit. */
function ttfbCheck(t: TtfbRow): TargetCheck {
  return atMost(
    `stream TTFB ≤ bare proxy + ${TARGETS.ttfbOverBareMs} ms at p50`,
    t.name,
    t.gateway.p50_ms - t.bare_proxy.p50_ms,
    TARGETS.ttfbOverBareMs,
    "≤",
  );
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
  for (const t of ttfb) out.push(ttfbCheck(t));
  for (const m of memory) {
    const check = atMost(
      `≤ ${TARGETS.perStreamKib} KiB per open stream`,
      streamsWhere(m),
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

/**
 * The performance issue's targets, set against the metering floor (bench/metering-floor/: the
 * least a gateway that bills every token does) and against Turnpike's own passthroughs, in the
 * same run:
 * - CPU per request at c=32 ≤ 1.3× the floor's on JSON passthrough, ≤ 1.5× on stream passthrough;
 * - a translated call's or stream's CPU per request at c=32 ≤ 1.4× its passthrough's: the
 *   passthrough to the same upstream protocol (where the run has none, as for generateContent,
 *   the client format's own);
 * - memory per flowing stream (1,000 streams of 15 s) ≤ 1.25× the floor's;
 * - added time to first byte at p50, one request at a time, ≤ 0.25 ms (as above).
 * The scale-out mode's own target (within 10 % of embedded) is read by `--store postgres
 * --limits redis`, a run of its own.
 */
export const FLOOR_TARGETS = {
  cpuOverFloor: { "messages passthrough": 1.3, "stream messages passthrough": 1.5 } as Record<string, number>,
  translatedOverPassthrough: 1.4,
  memoryOverFloor: 1.25,
  concurrency: 32,
} as const;

/** A scenario's client format, by its name in the scenario table. */
function clientFormatOf(name: string): string | undefined {
  return SCENARIOS.find((x) => x.name === name)?.gateway.format;
}

/** The passthrough scenario a translated one is judged against (see FLOOR_TARGETS). */
export function passthroughOf(s: ScenarioResult, rows: readonly ScenarioResult[]): ScenarioResult | undefined {
  const same = (r: ScenarioResult) =>
    r.kind === "passthrough" && r.stream === s.stream && r.concurrency === s.concurrency;
  const client = clientFormatOf(s.name);
  return (
    rows.find((r) => same(r) && r.baseline === s.baseline) ??
    rows.find((r) => same(r) && client !== undefined && clientFormatOf(r.name) === client)
  );
}

export function checkFloorTargets(
  rows: readonly ScenarioResult[],
  ttfb: readonly TtfbRow[],
  memory: readonly Pick<MemoryResult, "scenario" | "requested" | "open" | "per_stream_kib" | "metering_floor">[],
): TargetCheck[] {
  const out: TargetCheck[] = [];
  const c = FLOOR_TARGETS.concurrency;
  for (const r of rows) {
    if (r.concurrency !== c) continue;
    const limit = FLOOR_TARGETS.cpuOverFloor[r.name];
    if (limit !== undefined && r.metering_floor)
      out.push(
        atMost(
          `CPU ≤ ${limit}× metering floor`,
          r.name,
          r.gateway.cpu_us_per_req / r.metering_floor.cpu_us_per_req,
          limit,
          "≤",
          c,
        ),
      );
  }
  for (const r of rows) {
    // A published benchmark's shape (a larger body, a slower upstream) is reported, not set against a passthrough.
    if (r.concurrency !== c || r.kind !== "translation" || r.published) continue;
    const p = passthroughOf(r, rows);
    if (!p) continue;
    const limit = FLOOR_TARGETS.translatedOverPassthrough;
    out.push(
      atMost(`CPU ≤ ${limit}× ${p.name}`, r.name, r.gateway.cpu_us_per_req / p.gateway.cpu_us_per_req, limit, "≤", c),
    );
  }
  for (const m of memory) {
    const f = m.metering_floor;
    if (!f) continue;
    const limit = FLOOR_TARGETS.memoryOverFloor;
    const check = atMost(
      `memory ≤ ${limit}× metering floor`,
      streamsWhere(m),
      m.per_stream_kib / f.per_stream_kib,
      limit,
      "≤",
    );
    // Either side over fewer streams than asked for is not the measure.
    if (m.open < m.requested || f.open < f.requested) check.met = false;
    out.push(check);
  }
  for (const t of ttfb) out.push(ttfbCheck(t));
  return out;
}
