import { describe, expect, test } from "bun:test";
import type { ScenarioResult, TargetMetrics, TtfbRow } from "./results";
import { checkFloorTargets, checkTargets, passthroughOf } from "./targets";

const m = (rps: number, p50_ms: number): TargetMetrics => ({
  rps,
  p50_ms,
  p99_ms: p50_ms * 3,
  cpu_us_per_req: 40,
  errors: 0,
  core0_busy: 0.5,
});
const row = (
  name: string,
  kind: "passthrough" | "translation",
  stream: boolean,
  concurrency: number,
  gw: TargetMetrics,
  bare: TargetMetrics,
): ScenarioResult => ({
  name,
  kind,
  stream,
  baseline: "messages",
  concurrency,
  gateway: gw,
  bare_proxy: bare,
  direct: m(40000, 0.5),
});

describe("checkTargets", () => {
  test("throughput floors by kind, JSON or stream, and concurrency", () => {
    const checks = checkTargets(
      [
        row("messages passthrough", "passthrough", false, 32, m(20000, 1.2), m(25000, 1.0)), // 0.80×: met exactly
        row("messages passthrough", "passthrough", false, 128, m(1000, 1.0), m(25000, 1.0)), // not judged at 128
        row("chat→messages", "translation", false, 32, m(14000, 1.2), m(25000, 1.0)), // 0.56× < 0.6: missed
        row("stream chat passthrough", "passthrough", true, 32, m(17000, 1), m(25000, 1)), // 0.68× < 0.7: missed
        row("stream chat passthrough", "passthrough", true, 128, m(15000, 1), m(25000, 1)), // 0.6×: met
        row("stream messages→chat", "translation", true, 32, m(12600, 1), m(25000, 1)), // 0.504× ≥ 0.5: met
        row("stream messages→chat", "translation", true, 128, m(100, 1), m(25000, 1)), // not judged at 128
      ],
      [],
      [],
    );
    expect(checks.map((c) => [c.scenario, c.concurrency, c.limit, c.met])).toEqual([
      ["messages passthrough", 32, 0.8, true],
      ["chat→messages", 32, 0.6, false],
      ["stream chat passthrough", 32, 0.7, false],
      ["stream chat passthrough", 128, 0.6, true],
      ["stream messages→chat", 32, 0.5, true],
    ]);
    expect(checks[1]!.value).toBeCloseTo(0.56, 5);
    expect(checks[1]!.margin).toBeCloseTo(-0.0667, 3); // 6.7 % short of 0.6×
  });

  test("stream TTFB may be at most 0.25 ms over the bare proxy's, and memory at most 24 KiB per flowing stream", () => {
    const ttfb = (name: string, gw: number, bare: number): TtfbRow => ({
      name,
      gateway: { p50_ms: gw, p99_ms: 2 },
      bare_proxy: { p50_ms: bare, p99_ms: 1 },
      direct: { p50_ms: 0.2, p99_ms: 0.4 },
      overhead_p50_ms: gw - 0.2,
      bare_overhead_p50_ms: bare - 0.2,
    });
    const mem = (scenario: string, kib: number) => ({ scenario, requested: 1000, open: 1000, per_stream_kib: kib });
    const checks = checkTargets(
      [],
      [ttfb("s1", 0.7, 0.45), ttfb("s2", 0.71, 0.45)],
      [mem("stream a", 24), mem("stream b", 24.1)],
    );
    expect(checks.map((c) => [c.scenario, c.met])).toEqual([
      ["s1", true],
      ["s2", false],
      ["stream a, 1,000 streams of 15 s", true],
      ["stream b, 1,000 streams of 15 s", false],
    ]);
  });

  test("a memory figure over fewer streams than asked for is a miss, whatever its value", () => {
    const check = checkTargets([], [], [{ scenario: "stream a", requested: 1000, open: 256, per_stream_kib: 10 }]).at(
      -1,
    )!;
    expect(check.met).toBe(false);
    expect(check.scenario).toBe("stream a, 1,000 streams of 15 s (only 256 opened)");
  });
});

describe("checkFloorTargets", () => {
  const cpu = (us: number): TargetMetrics => ({ ...m(1000, 1), cpu_us_per_req: us });
  const at = (
    name: string,
    kind: "passthrough" | "translation",
    stream: boolean,
    baseline: ScenarioResult["baseline"],
    gw: number,
    floor?: number,
    concurrency = 32,
  ): ScenarioResult => ({
    name,
    kind,
    stream,
    baseline,
    concurrency,
    gateway: cpu(gw),
    bare_proxy: cpu(30),
    direct: cpu(20),
    ...(floor === undefined ? {} : { metering_floor: cpu(floor) }),
  });
  const rows = [
    at("messages passthrough", "passthrough", false, "messages", 130, 100), // 1.3×: met exactly
    at("messages passthrough", "passthrough", false, "messages", 500, 100, 128), // not judged at 128
    at("chat passthrough", "passthrough", false, "chat", 80),
    at("messages→chat", "translation", false, "chat", 112), // 1.4× chat passthrough: met
    at("messages→generateContent", "translation", false, "generate", 183), // no generate passthrough: 1.408× messages'
    at("stream messages passthrough", "passthrough", true, "messages-stream", 151, 100), // 1.51×: missed
    at("stream chat passthrough", "passthrough", true, "chat-stream", 200),
    at("stream responses→chat", "translation", true, "chat-stream", 270), // 1.35×: met
  ];

  test("CPU against the floor, translated against the passthrough of their upstream, at c=32", () => {
    const checks = checkFloorTargets(rows, [], []);
    expect(checks.map((c) => [c.target, c.scenario, c.concurrency, Number(c.value.toFixed(3)), c.met])).toEqual([
      ["CPU ≤ 1.3× metering floor", "messages passthrough", 32, 1.3, true],
      ["CPU ≤ 1.5× metering floor", "stream messages passthrough", 32, 1.51, false],
      ["CPU ≤ 1.4× chat passthrough", "messages→chat", 32, 1.4, true],
      ["CPU ≤ 1.4× messages passthrough", "messages→generateContent", 32, 1.408, false],
      ["CPU ≤ 1.4× stream chat passthrough", "stream responses→chat", 32, 1.35, true],
    ]);
  });

  test("a translated scenario with neither passthrough is not judged", () => {
    const lone = at("chat→messages", "translation", false, "messages", 300);
    expect(passthroughOf(lone, [lone])).toBeUndefined();
    expect(checkFloorTargets([lone], [], [])).toEqual([]);
  });

  test("memory against the floor's, both over every stream asked for; TTFB as against the bare proxy", () => {
    const open = (per_stream_kib: number, opened = 1000) => ({
      requested: 1000,
      open: opened,
      refused: 0,
      idle_rss_kib: 0,
      loaded_rss_kib: 0,
      per_stream_kib,
    });
    const checks = checkFloorTargets(
      [],
      [
        {
          name: "s1",
          gateway: { p50_ms: 0.9, p99_ms: 2 },
          bare_proxy: { p50_ms: 0.6, p99_ms: 1 },
          direct: { p50_ms: 0.2, p99_ms: 0.4 },
          overhead_p50_ms: 0.7,
          bare_overhead_p50_ms: 0.4,
        },
      ],
      [
        { scenario: "a", requested: 1000, open: 1000, per_stream_kib: 37.5, metering_floor: open(30) }, // 1.25×: met
        { scenario: "b", requested: 1000, open: 1000, per_stream_kib: 31, metering_floor: open(30, 900) }, // floor short
        { scenario: "c", requested: 1000, open: 1000, per_stream_kib: 60 }, // no floor: not judged
      ],
    );
    expect(checks.map((c) => [c.target, c.scenario, Number(c.value.toFixed(3)), c.met])).toEqual([
      ["memory ≤ 1.25× metering floor", "a, 1,000 streams of 15 s", 1.25, true],
      ["memory ≤ 1.25× metering floor", "b, 1,000 streams of 15 s", 1.033, false],
      ["stream TTFB ≤ bare proxy + 0.25 ms at p50", "s1", 0.3, false],
    ]);
  });
});
