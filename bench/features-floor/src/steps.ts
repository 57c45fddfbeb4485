/**
 * The ladder's rungs (bench/README.md, "The proof: where the rest of the CPU goes"): each step
 * adds to the features floor one runtime difference between it and Turnpike, so that `bun run
 * ladder` can read what each costs in the same seconds as the floor and Turnpike.
 *
 * `FLOOR_STEP=n` turns on the first n steps (a rung of the ladder); `FLOOR_STEP=cells,spin` the
 * steps named (one alone, against the floor). Unset or `0`: the features floor as it is.
 */
import { join } from "node:path";

export const LADDER_STEPS = [
  /** Turnpike's server wiring: Elysia with its serve options, a WebSocket route, the route on Bun's router. */
  "server",
  /** Turnpike's module graph loaded (its app and boot modules and all they import), not run. */
  "modules",
  /** A whole Turnpike booted in the process beside the floor (store, caches, background timers), not serving. */
  "booted",
  /** Turnpike's extra allocation per request: objects, arrays, closures and awaited promises, held to the end. */
  "cells",
  /** The rest of Turnpike's extra bytes per request (its texts: bodies, headers, log lines), as 1 KiB strings held to the end. */
  "bytes",
  /** Turnpike's remaining JavaScript per request, as busy work of the same CPU time. */
  "spin",
  /** The cells of `cells` dropped as soon as made (nothing held over the upstream call): allocation without survival. */
  "garbage",
] as const;
/** The ladder `bun run ladder` climbs by default (`garbage` is read alone, against `cells`). */
export const CLIMB: readonly LadderStep[] = ["server", "modules", "booted", "cells", "bytes", "spin"];
export type LadderStep = (typeof LADDER_STEPS)[number];

/** The steps a `FLOOR_STEP` value turns on: a count (the first n) or names, comma-separated. */
export function stepsFrom(value: string | undefined): Set<LadderStep> {
  const v = (value ?? "").trim();
  if (v === "") return new Set();
  if (/^\d+$/.test(v)) {
    const n = Number(v);
    if (n > LADDER_STEPS.length) throw new Error(`FLOOR_STEP=${v}: there are ${LADDER_STEPS.length} steps`);
    return new Set(LADDER_STEPS.slice(0, n));
  }
  const out = new Set<LadderStep>();
  for (const name of v.split(",").map((s) => s.trim())) {
    if (!(LADDER_STEPS as readonly string[]).includes(name))
      throw new Error(`FLOOR_STEP: no step "${name}"; one of ${LADDER_STEPS.join(", ")}`);
    out.add(name as LadderStep);
  }
  return out;
}

/** Where Turnpike's gateway app is, from this folder (bench/features-floor/src). */
export const GATEWAY_SRC = join(import.meta.dir, "..", "..", "..", "apps", "gateway", "src");

/**
 * How many cells of each kind a request allocates beyond the floor's, per scenario: Turnpike's
 * cells per request less the features floor's, by type (`bun run heap`, 2026-11-28; README).
 */
export interface Cells {
  strings: number;
  objects: number;
  arrays: number;
  closures: number;
  promises: number;
}

/** What a request keeps until it ends, so that the cells live as long as Turnpike's do. */
export type Held = unknown[];

async function tick(held: Held, i: number): Promise<number> {
  held.push(i);
  return i;
}

/**
 * Allocates `c` on behalf of one request, and awaits its promises one after the other (each an
 * async call, as a pipeline's steps are). What is allocated is kept in `held`.
 */
export async function allocate(c: Cells, held: Held): Promise<void> {
  for (let i = 0; i < c.strings; i++) held.push(`s${i}:${held.length}`);
  for (let i = 0; i < c.objects; i++) held.push({ i, at: held.length });
  for (let i = 0; i < c.arrays; i++) held.push([i, held.length]);
  for (let i = 0; i < c.closures; i++) held.push(() => i + held.length);
  for (let i = 0; i < c.promises; i++) await tick(held, i);
}

/** `kib` strings of 1 KiB each (flat, one byte a character), held in `held`. */
export function allocateBytes(kib: number, held: Held): void {
  for (let i = 0; i < kib; i++) held.push(String(i).padEnd(1024, "."));
}

/** Loop iterations per µs of CPU, measured once at start (best of five 50 ms tries). */
export function calibrateSpin(): number {
  let best = 0;
  for (let t = 0; t < 5; t++) {
    const n = 2_000_000;
    const before = process.cpuUsage();
    spinLoop(n);
    const used = process.cpuUsage(before);
    const us = used.user + used.system;
    if (us > 0) best = Math.max(best, n / us);
  }
  return best;
}

let sink = 0;
function spinLoop(n: number): void {
  let x = sink;
  for (let i = 0; i < n; i++) x = (x * 1103515245 + 12345) | 0;
  sink = x;
}

/** Busy work of about `us` µs of CPU, at `rate` iterations a µs (calibrateSpin). */
export function spin(us: number, rate: number): void {
  spinLoop(Math.round(us * rate));
}
