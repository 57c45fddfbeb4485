/**
 * Drives load with wrk (Debian's package; installed on the fly when missing and running as root)
 * pinned to the load-generator core, and measures the process under test around each run.
 */
import { join } from "node:path";
import { availableParallelism } from "node:os";
import { busyCores, cpuTimes, stolenCores } from "./machine-load";
import { cpuMicros } from "./proc-stat";
import { CORE, priorityPrefix } from "./processes";
import { errorCount, parseWrkOutput, rps, type WrkResult } from "./wrk-result";

/** Makes sure `wrk` is on PATH: installs it with apt-get when running as root, else says how. */
export function ensureWrk(): string {
  const found = Bun.which("wrk");
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error(
      "wrk is not installed. Install it from Debian's packages: `sudo apt-get update && sudo apt-get install -y wrk`, then run `bun run bench` again.",
    );
  }
  console.log("wrk is not installed: installing it from Debian's packages (apt-get install -y wrk) …");
  for (const cmd of [
    ["apt-get", "update", "-qq"],
    ["apt-get", "install", "-y", "-qq", "wrk"],
  ]) {
    const r = Bun.spawnSync(cmd, {
      stdout: "inherit",
      stderr: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
    if (r.exitCode !== 0)
      throw new Error(`\`${cmd.join(" ")}\` failed (exit ${r.exitCode}); install wrk by hand and run again.`);
  }
  const installed = Bun.which("wrk");
  if (!installed) throw new Error("apt-get installed wrk but it is not on PATH");
  return installed;
}

/** One measured cell: wrk's numbers plus the CPU the processes spent on it. */
export interface Measured {
  wrk: WrkResult;
  rps: number;
  errors: number;
  /** CPU (user + system) of the process under test, per completed request, µs. */
  cpuUsPerReq: number;
  /** Share of core 0 (simulator + wrk) that was busy, 0–1: near 1 means the upstream side was the bottleneck. */
  core0Busy: number;
  /** Cores' worth of CPU that processes outside the bench used meanwhile (noise), the host's steal included. */
  foreignCores: number;
  /** Of those, what the host took away (steal: a virtual machine's neighbours). */
  stealCores: number;
}

export interface LoadRun {
  wrk: string;
  url: string;
  scriptPath: string;
  connections: number;
  durationS: number;
  /** pid whose CPU is charged to the requests (proxy under test, or the simulator when direct). */
  pidUnderTest: number;
  /** The simulator's pid, for the core-0 load. */
  upstreamPid: number;
}

export async function runWrk(r: LoadRun): Promise<Measured> {
  const machine0 = cpuTimes();
  const cpu0 = cpuMicros(r.pidUnderTest);
  const up0 = cpuMicros(r.upstreamPid);
  const proc = Bun.spawn(
    [
      ...priorityPrefix(),
      "taskset",
      "-c",
      String(CORE.loadgen),
      r.wrk,
      "-t1",
      `-c${r.connections}`,
      `-d${r.durationS}s`,
      "--timeout",
      "10s",
      "-s",
      r.scriptPath,
      r.url,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  const cpu1 = cpuMicros(r.pidUnderTest);
  const up1 = cpuMicros(r.upstreamPid);
  const machine1 = cpuTimes();
  const cores = availableParallelism();
  const machine = busyCores(machine0, machine1, cores);
  const wrk = parseWrkOutput(out + err);
  const usage = proc.resourceUsage();
  const wrkCpu = usage ? Number(usage.cpuTime.user + usage.cpuTime.system) : 0;
  const sameProcess = r.pidUnderTest === r.upstreamPid;
  const core0 = (sameProcess ? cpu1 - cpu0 : up1 - up0) + wrkCpu;
  const ours = (cpu1 - cpu0 + (sameProcess ? 0 : up1 - up0) + wrkCpu) / wrk.durationUs;
  return {
    wrk,
    rps: rps(wrk),
    errors: errorCount(wrk),
    cpuUsPerReq: wrk.requests > 0 ? (cpu1 - cpu0) / wrk.requests : 0,
    core0Busy: wrk.durationUs > 0 ? core0 / wrk.durationUs : 0,
    foreignCores: wrk.durationUs > 0 ? Math.max(0, machine - ours) : 0,
    stealCores: stolenCores(machine0, machine1, cores),
  };
}

/** Writes one Lua script per request shape into `dir`; returns its path. */
export async function writeScript(dir: string, name: string, lua: string): Promise<string> {
  const path = join(dir, name.replace(/[^a-z0-9-]+/gi, "_") + ".lua");
  await Bun.write(path, lua);
  return path;
}
