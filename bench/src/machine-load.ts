/**
 * How busy the machine is, from the aggregate `cpu` line of /proc/stat (proc(5)): other work on
 * a 2-core machine shifts every number, so the run says when it did not have the machine alone.
 */
import { readFileSync } from "node:fs";

export interface CpuTimes {
  busy: number;
  total: number;
  /** Time the hypervisor ran something else while this machine wanted the CPU (counted in busy). */
  steal: number;
}

/** Busy and total jiffies of the `cpu` line (idle and iowait count as not busy). */
export function parseProcStat(text: string): CpuTimes {
  const line = text.split("\n").find((l) => l.startsWith("cpu "));
  if (!line) throw new Error("no aggregate cpu line in /proc/stat");
  const v = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = v.reduce((a, b) => a + b, 0);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  return { busy: total - idle, total, steal: v[7] ?? 0 };
}

export function cpuTimes(): CpuTimes {
  return parseProcStat(readFileSync("/proc/stat", "utf8"));
}

/** Cores' worth of CPU in use between two readings, e.g. 0.4 = 40 % of one core. */
export function busyCores(a: CpuTimes, b: CpuTimes, cores: number): number {
  const total = b.total - a.total;
  return total > 0 ? ((b.busy - a.busy) / total) * cores : 0;
}

/** Cores' worth of CPU the host took away (steal) between two readings. */
export function stolenCores(a: CpuTimes, b: CpuTimes, cores: number): number {
  const total = b.total - a.total;
  return total > 0 ? ((b.steal - a.steal) / total) * cores : 0;
}

/** Cores' worth of CPU used by anything over `ms` (call it while nothing of the bench runs). */
export async function backgroundLoad(ms: number, cores: number): Promise<number> {
  const a = cpuTimes();
  await Bun.sleep(ms);
  return busyCores(a, cpuTimes(), cores);
}
