/**
 * The cost table (`bun run cost`, src/cost-table.ts): where a request's CPU goes, step by step,
 * for Turnpike, the bare proxy and the metering floor. Pure: the shape and its rendering.
 *
 * Each proxy's CPU per request is measured thread by thread with every proxy loaded at the same
 * time (src/side-by-side.ts), without a profiler. The JavaScript thread's share is then split by
 * step in the proportions of a CPU profile of the same scenario (src/steps.ts); Bun's HTTP
 * client thread and the runtime's other threads (GC, JIT) are rows of their own.
 */
import { STEPS, type Step } from "./steps";
import type { ThreadGroup } from "./threads";

/** One proxy in one scenario. */
export interface CostColumn {
  /** CPU µs per request by thread group (mean over the rounds). */
  threads: Record<ThreadGroup, number>;
  /** The JavaScript thread's µs per request by step (its thread total split by the profile's shares). */
  steps: Record<Step, number>;
  /** Profile samples the split rests on. */
  samples: number;
  /** Median of the per-round CPU µs per request. */
  median: number;
}

export interface CostRow {
  scenario: string;
  stream: boolean;
  kind: "passthrough" | "translation";
  rounds: number;
  gateway: CostColumn;
  bare: CostColumn;
  floor?: CostColumn;
  /** The peer gateway: CPU per request only (no profile). */
  peer?: { median: number; threads: Record<ThreadGroup, number> };
  /** Per-round CPU ratios, sorted: Turnpike over the bare proxy, over the floor; the peer over the bare proxy. */
  ratios: { gw_bare: number[]; gw_floor?: number[]; peer_bare?: number[] };
}

export interface CostTable {
  meta: { started_at: string; bun: string; connections: number; seconds: number; peer?: string };
  rows: CostRow[];
}

/** A column's split: the JavaScript thread's steps scaled to its measured total. */
export function splitColumn(
  threads: Record<ThreadGroup, number>,
  shares: Record<Step, number>,
  samples: number,
  median: number,
): CostColumn {
  const steps = Object.fromEntries(STEPS.map((s) => [s, shares[s] * threads.js])) as Record<Step, number>;
  return { threads, steps, samples, median };
}

export const total = (t: Record<ThreadGroup, number>) => t.js + t["http client"] + t["gc, jit and others"];

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length
    ? s.length % 2
      ? s[(s.length - 1) / 2]!
      : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
    : Number.NaN;
};
const us = (x: number | undefined) => (x === undefined ? "—" : x < 0.05 ? "0" : x.toFixed(1));
const ratio = (xs: number[] | undefined) =>
  xs?.length ? `${median(xs).toFixed(2)}× (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})` : "—";

function table(head: string[], rows: string[][]): string {
  return [
    `| ${head.join(" | ")} |`,
    `| ${head.map(() => "---").join(" | ")} |`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
}

/** The steps that cost anything in some column (a row of zeros says nothing). */
function stepsShown(cols: (CostColumn | undefined)[]): Step[] {
  return STEPS.filter((s) => cols.some((c) => c && c.steps[s] >= 0.05));
}

/** One scenario: Turnpike beside the bare proxy and the floor, step by step. */
export function renderScenario(r: CostRow): string {
  const cols = [r.gateway, r.bare, r.floor];
  const head = ["step (µs CPU per request)", "Turnpike", "bare proxy", "metering floor"];
  const rows: string[][] = stepsShown(cols).map((s) => [s, ...cols.map((c) => us(c?.steps[s]))]);
  rows.push(["**JavaScript thread**", ...cols.map((c) => `**${us(c?.threads.js)}**`)]);
  rows.push(["Bun's HTTP client thread", ...cols.map((c) => us(c?.threads["http client"]))]);
  rows.push(["GC, JIT and other threads", ...cols.map((c) => us(c?.threads["gc, jit and others"]))]);
  rows.push(["**total**", ...cols.map((c) => `**${us(c ? total(c.threads) : undefined)}**`)]);
  const notes = [
    `Turnpike over the bare proxy ${ratio(r.ratios.gw_bare)}`,
    r.ratios.gw_floor ? `over the floor ${ratio(r.ratios.gw_floor)}` : "",
    r.peer ? `the peer ${us(total(r.peer.threads))} µs, over the bare proxy ${ratio(r.ratios.peer_bare)}` : "",
  ].filter(Boolean);
  return [
    `#### ${r.scenario}`,
    "",
    table(head, rows),
    "",
    `Per-round CPU ratios, median (range) over ${r.rounds} rounds: ${notes.join("; ")}. Profile samples: ` +
      `Turnpike ${r.gateway.samples}, bare ${r.bare.samples}${r.floor ? `, floor ${r.floor.samples}` : ""}.`,
  ].join("\n");
}

/** Every scenario's Turnpike steps in one table, the references' totals under it. */
export function renderSummary(t: CostTable): string {
  const head = ["step (µs CPU per request)", ...t.rows.map((r) => r.scenario)];
  const rows: string[][] = stepsShown(t.rows.map((r) => r.gateway)).map((s) => [
    s,
    ...t.rows.map((r) => us(r.gateway.steps[s])),
  ]);
  rows.push(["**JavaScript thread**", ...t.rows.map((r) => `**${us(r.gateway.threads.js)}**`)]);
  rows.push(["Bun's HTTP client thread", ...t.rows.map((r) => us(r.gateway.threads["http client"]))]);
  rows.push(["GC, JIT and other threads", ...t.rows.map((r) => us(r.gateway.threads["gc, jit and others"]))]);
  rows.push(["**Turnpike total**", ...t.rows.map((r) => `**${us(total(r.gateway.threads))}**`)]);
  rows.push(["bare proxy total", ...t.rows.map((r) => us(total(r.bare.threads)))]);
  rows.push(["metering floor total", ...t.rows.map((r) => (r.floor ? us(total(r.floor.threads)) : "—"))]);
  rows.push(["peer total", ...t.rows.map((r) => (r.peer ? us(total(r.peer.threads)) : "—"))]);
  rows.push(["Turnpike ÷ bare (per round)", ...t.rows.map((r) => ratio(r.ratios.gw_bare))]);
  rows.push(["Turnpike ÷ floor (per round)", ...t.rows.map((r) => ratio(r.ratios.gw_floor))]);
  return table(head, rows);
}

export function renderCostTable(t: CostTable): string {
  return [
    `## Cost table — ${t.meta.started_at}, Bun ${t.meta.bun}, c=${t.meta.connections}, ${t.meta.seconds} s rounds${t.meta.peer ? `; peer: ${t.meta.peer}` : ""}`,
    "",
    renderSummary(t),
    "",
    ...t.rows.map(renderScenario).flatMap((s) => [s, ""]),
  ].join("\n");
}
