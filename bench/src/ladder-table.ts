/**
 * The ladder's table (`bun run ladder`, src/ladder.ts): from the CPU per request of every rung,
 * round by round in the same seconds, what each rung costs over the metering floor, what its step
 * adds to the rung below, and what share of the gap between the features floor and Turnpike that
 * step is.
 */
import { percentile } from "./stats";
import type { ThreadGroup } from "./threads";

export interface Rung {
  name: string;
  /** CPU µs per request, one a round. */
  cpu: number[];
  /** Mean CPU µs per request by thread group over the rounds. */
  threads: Record<ThreadGroup, number>;
}

export interface LadderRow {
  name: string;
  /** Median over the rounds, µs. */
  us: number;
  /** Median of the per-round ratios to the metering floor, and their range. */
  overFloor: { median: number; min: number; max: number };
  /** Median of the per-round differences to the rung below (a ladder's steps only), µs. */
  step?: number;
  /** `step` as a share of the median per-round gap between the features floor and Turnpike. */
  share?: number;
  js: number;
  httpClient: number;
  others: number;
}

const median = (xs: readonly number[]) => percentile(xs, 50);

/**
 * The rows of a ladder. `floor`, `features` and `turnpike` are indices into `rungs`; `steps` the
 * indices of the rungs climbed from the features floor, in order (each read against the one
 * before it, the first against the features floor). `isolated`: each step is read against the
 * features floor instead (the steps taken one at a time).
 */
export function ladderRows(
  rungs: readonly Rung[],
  at: { floor: number; features: number; turnpike: number; steps: readonly number[]; isolated?: boolean },
): LadderRow[] {
  const rounds = rungs[at.floor]!.cpu.length;
  for (const r of rungs)
    if (r.cpu.length !== rounds) throw new Error(`${r.name}: ${r.cpu.length} rounds, the floor has ${rounds}`);
  const perRound = (i: number, f: (x: number, r: number) => number) => rungs[i]!.cpu.map((x, r) => f(x, r));
  const gap = median(perRound(at.turnpike, (x, r) => x - rungs[at.features]!.cpu[r]!));
  const below = new Map<number, number>();
  for (const [k, i] of at.steps.entries()) below.set(i, at.isolated || k === 0 ? at.features : at.steps[k - 1]!);
  return rungs.map((rung, i) => {
    const ratios = perRound(i, (x, r) => x / rungs[at.floor]!.cpu[r]!);
    const row: LadderRow = {
      name: rung.name,
      us: median(rung.cpu),
      overFloor: { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) },
      js: rung.threads.js,
      httpClient: rung.threads["http client"],
      others: rung.threads["gc, jit and others"],
    };
    const under = below.get(i);
    if (under !== undefined) {
      row.step = median(perRound(i, (x, r) => x - rungs[under]!.cpu[r]!));
      row.share = gap > 0 ? row.step / gap : undefined;
    }
    return row;
  });
}

/** The rows as a Markdown table. */
export function ladderMarkdown(rows: readonly LadderRow[]): string {
  const f1 = (x: number) => x.toFixed(1);
  const lines = [
    "| rung | CPU µs/request (median) | over the metering floor (rounds) | step (µs, median of rounds) | share of the features→Turnpike gap | JS thread | HTTP client | GC, JIT, others |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const r of rows)
    lines.push(
      `| ${r.name} | ${f1(r.us)} | ${r.overFloor.median.toFixed(2)}× (${r.overFloor.min.toFixed(2)}–${r.overFloor.max.toFixed(2)}) | ${
        r.step === undefined ? "" : (r.step >= 0 ? "+" : "") + f1(r.step)
      } | ${r.share === undefined ? "" : `${Math.round(r.share * 100)} %`} | ${f1(r.js)} | ${f1(r.httpClient)} | ${f1(r.others)} |`,
    );
  return lines.join("\n");
}

/** One thread's CPU so far: its name (`comm`) and µs. */
export type ThreadReading = Map<number, { name: string; us: number }>;

/**
 * CPU µs per request by thread name between two readings of one process (threads of the same
 * name summed, a thread born in between counted from zero), largest first.
 */
export function byThreadName(before: ThreadReading, after: ThreadReading, requests: number): [string, number][] {
  const out = new Map<string, number>();
  for (const [tid, a] of after) out.set(a.name, (out.get(a.name) ?? 0) + a.us - (before.get(tid)?.us ?? 0));
  return [...out]
    .map(([name, us]) => [name, requests > 0 ? us / requests : 0] as [string, number])
    .sort((x, y) => y[1] - x[1]);
}
