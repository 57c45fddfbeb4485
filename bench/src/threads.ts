/**
 * CPU time of a process thread by thread (`/proc/<pid>/task/<tid>/stat`), grouped the way the
 * cost table reads them: the JavaScript thread (the main thread, tid = pid), Bun's HTTP client
 * thread (`fetch`'s sockets and parsing run there, not on the JavaScript thread, so a profile of
 * the JavaScript thread does not see them), and the rest (garbage-collector helpers, JIT
 * compilers, the allocator's scavenger).
 */
import { readdirSync, readFileSync } from "node:fs";
import { clockTicksPerSecond, parseStatTicks } from "./proc-stat";

export const THREAD_GROUPS = ["js", "http client", "gc, jit and others"] as const;
export type ThreadGroup = (typeof THREAD_GROUPS)[number];

/** The group of a thread, by its id and its name (`comm`). */
export function threadGroup(pid: number, tid: number, comm: string): ThreadGroup {
  if (tid === pid) return "js";
  if (comm === "HTTP Client") return "http client";
  return "gc, jit and others";
}

/** CPU (user + system) used so far by each thread of a process, in µs, by thread id. */
export function threadMicros(pid: number): Map<number, { group: ThreadGroup; us: number }> {
  const out = new Map<number, { group: ThreadGroup; us: number }>();
  const hz = clockTicksPerSecond();
  for (const name of readdirSync(`/proc/${pid}/task`)) {
    const tid = Number(name);
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      out.set(tid, { group: threadGroup(pid, tid, comm), us: (parseStatTicks(stat) * 1e6) / hz });
    } catch {
      // The thread ended between the listing and the read: its time is lost to both readings.
    }
  }
  return out;
}

/** CPU used between two readings, per group, in µs (a thread born in between counts from zero). */
export function threadDelta(
  before: Map<number, { group: ThreadGroup; us: number }>,
  after: Map<number, { group: ThreadGroup; us: number }>,
): Record<ThreadGroup, number> {
  const out = Object.fromEntries(THREAD_GROUPS.map((g) => [g, 0])) as Record<ThreadGroup, number>;
  for (const [tid, a] of after) out[a.group] += a.us - (before.get(tid)?.us ?? 0);
  return out;
}
