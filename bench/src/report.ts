/** The printed report: one table of load cells, the stream TTFB table, memory, and the targets. */
import { renderFeatureCost } from "./feature-cost";
import type { MemoryResult } from "./memory";
import type { BenchResults, TargetCheck } from "./results";

/** Lays rows out in columns: text left-aligned, numbers right-aligned. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const numeric = header.map((_, i) => rows.every((r) => /^[-+]?[\d.,]+[k×%]?$|^—$/.test(r[i] ?? "")));
  const fmt = (r: string[]) =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [fmt(header), widths.map((w) => "─".repeat(w)).join("  "), ...rows.map(fmt)].join("\n");
}

export const fmt = {
  rps: (n: number) => (Number.isFinite(n) ? (n >= 1000 ? `${(n / 1000).toFixed(1)}k` : n.toFixed(0)) : "—"),
  ms: (n: number) => (Number.isFinite(n) ? n.toFixed(3) : "—"),
  us: (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "—"),
  ratio: (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)}×` : "—"),
  signedMs: (n: number) => (Number.isFinite(n) ? `${n >= 0 ? "+" : ""}${n.toFixed(3)}` : "—"),
};

function describe(t: TargetCheck): string {
  const where = t.concurrency !== undefined ? `${t.scenario} @ c=${t.concurrency}` : t.scenario;
  const isRatio = t.target.includes("×");
  const unit = t.target.includes("KiB") ? " KiB" : t.target.includes("ms") ? " ms" : "";
  const value = isRatio ? fmt.ratio(t.value) : `${t.value.toFixed(unit === " KiB" ? 1 : 3)}${unit}`;
  const limit = isRatio ? `${t.limit}×` : `${t.limit}${unit}`;
  const by = `${Math.abs(t.margin * 100).toFixed(0)} %`;
  return `${t.met ? "✓ met   " : "✗ MISSED"}  ${t.target.padEnd(38)} ${where.padEnd(40)} ${value} (limit ${t.rule} ${limit}; ${t.met ? "by" : "short by"} ${by})`;
}

export function renderReport(r: BenchResults): string {
  const out: string[] = [];
  const rows = r.scenarios.map((s) => [
    s.name,
    String(s.concurrency),
    fmt.rps(s.gateway.rps),
    fmt.rps(s.bare_proxy.rps),
    fmt.rps(s.direct.rps),
    fmt.ratio(s.gateway.rps / s.bare_proxy.rps),
    fmt.ms(s.gateway.p50_ms),
    fmt.ms(s.bare_proxy.p50_ms),
    fmt.ms(s.direct.p50_ms),
    fmt.ratio(s.gateway.p50_ms / s.bare_proxy.p50_ms),
    fmt.ms(s.gateway.p99_ms),
    fmt.ms(s.bare_proxy.p99_ms),
    fmt.ms(s.direct.p99_ms),
    fmt.us(s.gateway.cpu_us_per_req),
    fmt.us(s.bare_proxy.cpu_us_per_req),
    fmt.us(s.direct.cpu_us_per_req),
    fmt.ratio(s.gateway.cpu_us_per_req / s.bare_proxy.cpu_us_per_req),
    fmt.signedMs(s.gateway.p50_ms - s.direct.p50_ms),
    fmt.signedMs(s.bare_proxy.p50_ms - s.direct.p50_ms),
  ]);
  out.push(
    table(
      [
        "scenario",
        "c",
        "rps gw",
        "bare",
        "direct",
        "gw/bare",
        "p50 gw",
        "bare",
        "direct",
        "gw/bare",
        "p99 gw",
        "bare",
        "direct",
        "cpu µs gw",
        "bare",
        "sim",
        "gw/bare",
        "+p50 gw",
        "+p50 bare",
      ],
      rows,
    ),
  );
  out.push(
    "rps: requests/s · p50/p99: latency in ms · cpu µs: CPU of the process under test per request (direct: the simulator's;" +
      " the cpu gw/bare ratio is the least noisy figure: 1 / it bounds the throughput ratio when both are CPU-bound) · +p50: p50 over direct-to-upstream, ms",
  );
  const bad = r.scenarios.flatMap((s) =>
    (["gateway", "bare_proxy", "direct", "metering_floor", "peer"] as const)
      .filter((t) => (s[t]?.errors ?? 0) > 0)
      .map((t) => `${s.name} @ c=${s.concurrency} ${t}: ${s[t]!.errors} errors`),
  );
  if (bad.length) out.push(`\n⚠ cells with errors (not valid measures):\n  ${bad.join("\n  ")}`);
  const bound = r.scenarios.filter((s) => s.concurrency > 1 && s.bare_proxy.core0_busy > 0.95);
  if (bound.length) {
    out.push(
      `\nnote: core 0 (simulator + wrk) was saturated in ${bound.length} bare-proxy cell(s); there the bare proxy's rate is a floor, not its ceiling.`,
    );
  }

  const floored = r.scenarios.filter((s) => s.metering_floor);
  if (floored.length) {
    out.push(
      "\nMetering floor: the least a gateway that bills each token adds (bench/metering-floor), same request, same run",
    );
    out.push(
      table(
        [
          "scenario",
          "c",
          "rps floor",
          "bare",
          "floor/bare",
          "gw/bare",
          "cpu µs floor",
          "bare",
          "floor/bare",
          "gw/bare",
        ],
        floored.map((s) => {
          const f = s.metering_floor!;
          return [
            s.name,
            String(s.concurrency),
            fmt.rps(f.rps),
            fmt.rps(s.bare_proxy.rps),
            fmt.ratio(f.rps / s.bare_proxy.rps),
            fmt.ratio(s.gateway.rps / s.bare_proxy.rps),
            fmt.us(f.cpu_us_per_req),
            fmt.us(s.bare_proxy.cpu_us_per_req),
            fmt.ratio(f.cpu_us_per_req / s.bare_proxy.cpu_us_per_req),
            fmt.ratio(s.gateway.cpu_us_per_req / s.bare_proxy.cpu_us_per_req),
          ];
        }),
      ),
    );
  }

  const peered = r.scenarios.filter((s) => s.peer);
  if (peered.length) {
    const who = r.meta.peer ? `${r.meta.peer.name} ${r.meta.peer.version} on ${r.meta.peer.runtime}` : "the peer";
    out.push(
      `\nPeer: ${who} (src/peer.ts), same client request, same run; it keeps no keys, limits or usage of its own in this shape`,
    );
    out.push(
      table(
        [
          "scenario",
          "c",
          "rps peer",
          "gw",
          "bare",
          "peer/bare",
          "gw/bare",
          "cpu µs peer",
          "gw",
          "bare",
          "peer/bare",
          "gw/bare",
        ],
        peered.map((s) => {
          const p = s.peer!;
          return [
            s.name,
            String(s.concurrency),
            fmt.rps(p.rps),
            fmt.rps(s.gateway.rps),
            fmt.rps(s.bare_proxy.rps),
            fmt.ratio(p.rps / s.bare_proxy.rps),
            fmt.ratio(s.gateway.rps / s.bare_proxy.rps),
            fmt.us(p.cpu_us_per_req),
            fmt.us(s.gateway.cpu_us_per_req),
            fmt.us(s.bare_proxy.cpu_us_per_req),
            fmt.ratio(p.cpu_us_per_req / s.bare_proxy.cpu_us_per_req),
            fmt.ratio(s.gateway.cpu_us_per_req / s.bare_proxy.cpu_us_per_req),
          ];
        }),
      ),
    );
  }

  for (const s of r.scenarios.filter((x) => x.published)) {
    out.push(`\nSide by side with a published benchmark: ${s.published} (${s.name}, same run)`);
    out.push(
      table(
        ["target", "c", "rps", "p50 ms", "p99 ms", "+p50 over direct", "cpu µs/req", "cpu/bare"],
        (
          [
            ["Turnpike", s.gateway],
            ["bare proxy", s.bare_proxy],
            ["direct (simulator)", s.direct],
          ] as const
        ).map(([who, m]) => [
          who,
          String(s.concurrency),
          fmt.rps(m.rps),
          fmt.ms(m.p50_ms),
          fmt.ms(m.p99_ms),
          who === "direct (simulator)" ? "—" : fmt.signedMs(m.p50_ms - s.direct.p50_ms),
          fmt.us(m.cpu_us_per_req),
          who === "direct (simulator)" ? "—" : fmt.ratio(m.cpu_us_per_req / s.bare_proxy.cpu_us_per_req),
        ]),
      ),
    );
    out.push(
      "  the peer does not serve a messages client on a chat upstream (src/peer.ts); its figures are in the peer table above",
    );
  }

  if (r.feature_cost) out.push("\n" + renderFeatureCost(r.feature_cost));

  if (r.ttfb.length) {
    out.push("\nStream time to first byte (sequential requests), ms");
    out.push(
      table(
        ["scenario", "p50 gw", "bare", "direct", "p99 gw", "bare", "direct", "+p50 gw", "+p50 bare"],
        r.ttfb.map((t) => [
          t.name,
          fmt.ms(t.gateway.p50_ms),
          fmt.ms(t.bare_proxy.p50_ms),
          fmt.ms(t.direct.p50_ms),
          fmt.ms(t.gateway.p99_ms),
          fmt.ms(t.bare_proxy.p99_ms),
          fmt.ms(t.direct.p99_ms),
          fmt.signedMs(t.overhead_p50_ms),
          fmt.signedMs(t.bare_overhead_p50_ms),
        ]),
      ),
    );
    for (const t of r.ttfb.filter((x) => x.metering_floor)) {
      const f = t.metering_floor!;
      out.push(
        `  metering floor, ${t.name}: p50 ${fmt.ms(f.p50_ms)}, p99 ${fmt.ms(f.p99_ms)}; over the bare proxy at p50 ${fmt.signedMs(f.p50_ms - t.bare_proxy.p50_ms)} (the gateway ${fmt.signedMs(t.gateway.p50_ms - t.bare_proxy.p50_ms)})`,
      );
    }
    for (const t of r.ttfb.filter((x) => x.peer)) {
      const p = t.peer!;
      out.push(
        `  peer, ${t.name}: p50 ${fmt.ms(p.p50_ms)}, p99 ${fmt.ms(p.p99_ms)}; over the bare proxy at p50 ${fmt.signedMs(p.p50_ms - t.bare_proxy.p50_ms)} (the gateway ${fmt.signedMs(t.gateway.p50_ms - t.bare_proxy.p50_ms)})`,
      );
    }
  }

  const memoryLine = (m: MemoryResult) =>
    `${m.requested} open streams (${m.scenario}, ${m.pace}): gateway ${m.open} open` +
    (m.refused ? `, ${m.refused} refused` : "") +
    `, RSS ${(m.idle_rss_kib / 1024).toFixed(1)} → ${(m.loaded_rss_kib / 1024).toFixed(1)} MiB = ${m.per_stream_kib.toFixed(1)} KiB per stream;` +
    ` bare proxy ${m.bare_proxy.per_stream_kib.toFixed(1)} KiB per stream (${m.bare_proxy.open} open)`;
  out.push("\nMemory per open stream");
  if (r.memory) out.push(`  held still: ${memoryLine(r.memory)}`);
  for (const m of r.memory_long) {
    out.push(`  flowing:    ${memoryLine(m)}`);
    if (m.metering_floor)
      out.push(
        `              metering floor ${m.metering_floor.per_stream_kib.toFixed(1)} KiB per stream (${m.metering_floor.open} open)`,
      );
    if (m.peer) out.push(`              peer ${m.peer.per_stream_kib.toFixed(1)} KiB per stream (${m.peer.open} open)`);
  }
  if (!r.memory && r.memory_long.length === 0)
    out.push("  not measured (the gateway could not serve its stream scenarios, or --only left them out).");
  const f = r.meta.foreign_load_cores;
  if (Math.max(f.before, f.mean) > 0.25) {
    out.push(
      `\n⚠ the machine was not idle: other processes used ${f.before.toFixed(2)} cores before the run and ${f.mean.toFixed(2)} on average` +
        ` (max ${f.max.toFixed(2)}) during the load runs` +
        (f.steal_mean !== undefined && f.steal_mean >= 0.05
          ? `, of which the host took ${f.steal_mean.toFixed(2)} (steal: a virtual machine's neighbours)`
          : "") +
        "; on 2 cores that shifts every number — run again on a quiet machine, or compare builds with `bun run ab`.",
    );
  }

  out.push("\nTargets (against the bare proxy in this run)");
  for (const t of r.targets) out.push("  " + describe(t));
  const missed = r.targets.filter((t) => !t.met).length;
  const floorChecks = r.floor_targets;
  if (floorChecks.length) {
    out.push("\nTargets of the performance issue (against the metering floor and the passthroughs, in this run)");
    for (const t of floorChecks) out.push("  " + describe(t));
  }
  const floorMissed = floorChecks.filter((t) => !t.met).length;
  out.push(
    `\n${r.targets.length - missed} of ${r.targets.length} target checks met; ${missed} missed.` +
      (floorChecks.length
        ? ` Against the floor: ${floorChecks.length - floorMissed} of ${floorChecks.length} met; ${floorMissed} missed.`
        : ""),
  );
  return out.join("\n");
}
