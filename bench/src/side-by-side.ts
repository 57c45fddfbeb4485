/**
 * Several proxies loaded at the same time, round after round, each by its own wrk (the method of
 * `bun run ab`, README "Comparing two builds on a noisy machine"): they share the proxy core and
 * whatever the machine does meanwhile, so their CPU per request is taken over the very same
 * seconds. The loads start in an order rotated each round; a round during which the host took
 * more than 2 % of the machine (steal) is measured again.
 */
import { availableParallelism } from "node:os";
import { type Measured, runWrk } from "./load";
import { cpuTimes, stolenCores } from "./machine-load";
import { THREAD_GROUPS, type ThreadGroup, threadDelta, threadMicros } from "./threads";

export interface Loaded {
  name: string;
  pid: number;
  /** Full URL the load goes to. */
  url: string;
  /** Its wrk script (load.ts `writeScript`). */
  script: string;
}

export interface Together {
  /** Per build, per round: CPU µs per request. */
  cpu: number[][];
  /** Per build, per round: requests completed. */
  requests: number[][];
  /** Per build: CPU µs per request by thread group, over all rounds (Σ CPU ÷ Σ requests). */
  threads: Record<ThreadGroup, number>[];
  retakes: number;
}

/**
 * Untimed seconds of load each build gets before the rounds: its JIT compilers finish their work
 * on the hot path there, not in the measured rounds (README, "Comparing two builds").
 */
export const WARMUP_SECONDS = 10;

export async function measureTogether(opts: {
  wrk: string;
  simPid: number;
  builds: Loaded[];
  rounds: number;
  seconds: number;
  connections: number;
  /** Untimed load given each build first, in seconds (default WARMUP_SECONDS). */
  warmupSeconds?: number;
  log?: (line: string) => void;
}): Promise<Together> {
  const { builds } = opts;
  const load = (b: Loaded, durationS: number) =>
    runWrk({
      wrk: opts.wrk,
      url: b.url,
      scriptPath: b.script,
      connections: opts.connections,
      durationS,
      pidUnderTest: b.pid,
      upstreamPid: opts.simPid,
    });
  // Warm-up: each build once, untimed (none when told 0: builds warmed by an earlier call).
  const warmup = opts.warmupSeconds ?? WARMUP_SECONDS;
  if (warmup > 0) for (const b of builds) await load(b, warmup);
  const cpu: number[][] = builds.map(() => []);
  const requests: number[][] = builds.map(() => []);
  const threadUs = builds.map(
    () => Object.fromEntries(THREAD_GROUPS.map((g) => [g, 0])) as Record<ThreadGroup, number>,
  );
  const cores = availableParallelism();
  let retakes = 0;
  for (let r = 0; r < opts.rounds; r++) {
    const before = cpuTimes();
    const threadsBefore = builds.map((b) => threadMicros(b.pid));
    const started: Promise<Measured>[] = [];
    for (let k = 0; k < builds.length; k++) {
      const i = (k + r) % builds.length;
      started[i] = load(builds[i]!, opts.seconds);
    }
    const ms = await Promise.all(started);
    const threadsAfter = builds.map((b) => threadMicros(b.pid));
    const stolen = stolenCores(before, cpuTimes(), cores);
    if (stolen > 0.02 * cores && retakes < opts.rounds) {
      retakes++;
      opts.log?.(`round ${r + 1}: the host took ${stolen.toFixed(2)} cores (steal); measured again`);
      r--;
      continue;
    }
    for (const [i, m] of ms.entries()) {
      cpu[i]!.push(m.cpuUsPerReq);
      requests[i]!.push(m.wrk.requests);
      const d = threadDelta(threadsBefore[i]!, threadsAfter[i]!);
      for (const g of THREAD_GROUPS) threadUs[i]![g] += d[g];
    }
    opts.log?.(
      `round ${r + 1}: ${ms.map((m, i) => `${builds[i]!.name} ${m.cpuUsPerReq.toFixed(1)} µs (${Math.round(m.rps)} rps)`).join(" · ")}`,
    );
  }
  const threads = threadUs.map((t, i) => {
    const n = requests[i]!.reduce((a, b) => a + b, 0);
    return Object.fromEntries(THREAD_GROUPS.map((g) => [g, n ? t[g] / n : 0])) as Record<ThreadGroup, number>;
  });
  return { cpu, requests, threads, retakes };
}

/** Per-round ratios of build `i` to build `ref` (the same seconds each). */
export function roundRatios(t: Together, i: number, ref: number): number[] {
  return t.cpu[i]!.map((x, r) => x / t.cpu[ref]![r]!);
}
