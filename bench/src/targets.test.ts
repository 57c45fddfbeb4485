import { describe, expect, test } from "bun:test";
import type { ScenarioResult, TargetMetrics, TtfbRow } from "./results";
import { checkTargets } from "./targets";

const m = (rps: number, p50_ms: number): TargetMetrics => ({ rps, p50_ms, p99_ms: p50_ms * 3, cpu_us_per_req: 40, errors: 0, core0_busy: 0.5 });
const row = (name: string, kind: "passthrough" | "translation", concurrency: number, gw: TargetMetrics, bare: TargetMetrics): ScenarioResult => ({
  name, kind, stream: false, baseline: "messages", concurrency, gateway: gw, bare_proxy: bare, direct: m(40000, 0.5),
});

describe("checkTargets", () => {
  test("throughput is judged at concurrency 32 only, 0.8× for passthrough and 0.6× for translation", () => {
    const checks = checkTargets(
      [
        row("messages passthrough", "passthrough", 32, m(20000, 1.2), m(25000, 1.0)), // 0.80×: met exactly
        row("messages passthrough", "passthrough", 128, m(1000, 1.0), m(25000, 1.0)), // not a throughput cell
        row("chat→messages", "translation", 32, m(14000, 1.2), m(25000, 1.0)), // 0.56×: missed
      ],
      [],
      undefined,
    );
    const tput = checks.filter((c) => c.target.startsWith("throughput"));
    expect(tput.map((c) => [c.scenario, c.met])).toEqual([["messages passthrough", true], ["chat→messages", false]]);
    expect(tput[1]!.value).toBeCloseTo(0.56, 5);
    expect(tput[1]!.margin).toBeCloseTo(-0.0667, 3); // 6.7 % short of 0.6×
  });

  test("p50 is judged in every cell against 1.25× the bare proxy", () => {
    const checks = checkTargets([row("a", "passthrough", 1, m(1, 0.25), m(1, 0.2)), row("a", "passthrough", 32, m(1, 0.26), m(1, 0.2))], [], undefined);
    const p50 = checks.filter((c) => c.target.startsWith("p50"));
    expect(p50.map((c) => c.met)).toEqual([true, false]);
  });

  test("TTFB overhead must stay under 1 ms and memory at or under 64 KiB per stream", () => {
    const ttfb = (name: string, overhead: number): TtfbRow => ({
      name,
      gateway: { p50_ms: 1, p99_ms: 2 },
      bare_proxy: { p50_ms: 0.5, p99_ms: 1 },
      direct: { p50_ms: 0.2, p99_ms: 0.4 },
      overhead_p50_ms: overhead,
      bare_overhead_p50_ms: 0.3,
    });
    const checks = checkTargets([], [ttfb("s1", 0.99), ttfb("s2", 1)], { requested: 1000, open: 1000, perStreamKib: 64 });
    expect(checks.map((c) => [c.scenario, c.met])).toEqual([["s1", true], ["s2", false], ["1,000 open streams", true]]);
    expect(checkTargets([], [], { requested: 1000, open: 1000, perStreamKib: 64.1 }).at(-1)!.met).toBe(false);
  });

  test("a memory figure over fewer streams than asked for is a miss, whatever its value", () => {
    const check = checkTargets([], [], { requested: 1000, open: 256, perStreamKib: 30 }).at(-1)!;
    expect(check.met).toBe(false);
    expect(check.scenario).toBe("1,000 open streams (only 256 opened)");
  });
});
