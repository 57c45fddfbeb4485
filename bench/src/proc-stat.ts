/**
 * CPU time and memory of a process, read from Linux procfs (proc(5)): `/proc/<pid>/stat` fields
 * 14 and 15 (utime, stime, in clock ticks, summed over all threads) and `/proc/<pid>/status`
 * `VmRSS`.
 */
import { readFileSync } from "node:fs";

/** utime + stime of a `/proc/<pid>/stat` line, in clock ticks. */
export function parseStatTicks(stat: string): number {
  // Field 2 (comm) is in parentheses and may itself hold spaces and ")": split after the last ")".
  const close = stat.lastIndexOf(")");
  if (close < 0) throw new Error(`not a /proc/<pid>/stat line: ${JSON.stringify(stat.slice(0, 80))}`);
  const rest = stat
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  // rest[0] is field 3 (state), so field 14 (utime) is rest[11] and field 15 (stime) rest[12].
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) {
    throw new Error(`no utime/stime in /proc/<pid>/stat line: ${JSON.stringify(stat.slice(0, 120))}`);
  }
  return utime + stime;
}

/** `VmRSS` of a `/proc/<pid>/status` text, in KiB. */
export function parseStatusRssKib(status: string): number {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!m) throw new Error("no VmRSS line in /proc/<pid>/status (has the process exited?)");
  return Number(m[1]);
}

let ticksPerSecond: number | undefined;

/** USER_HZ: `getconf CLK_TCK`, 100 on every mainstream Linux build. */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    const out = Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim();
    const n = Number(out);
    ticksPerSecond = Number.isInteger(n) && n > 0 ? n : 100;
  }
  return ticksPerSecond;
}

/** CPU time (user + system, all threads) the process has used so far, in µs. */
export function cpuMicros(pid: number): number {
  return (parseStatTicks(readFileSync(`/proc/${pid}/stat`, "utf8")) * 1e6) / clockTicksPerSecond();
}

/** Resident set size of the process now, in KiB. */
export function rssKib(pid: number): number {
  return parseStatusRssKib(readFileSync(`/proc/${pid}/status`, "utf8"));
}
