import type { LatencyAggregate, LatencyGroup, UsageFilter } from "./store";
import { type Dialect, LATENCY_BOUNDS, LATENCY_CASE, LATENCY_COLUMNS, planRange } from "./usage-rollup";

/**
 * Latency percentiles from the ledger's rollups: each rollup row counts its requests per latency
 * bucket (usage-rollup.ts, doubling from 25 ms), so a p50, p90 or p99 over any range and grouping
 * reads the same rows a chart does, never the raw requests. A percentile read from buckets is
 * placed inside the bucket that holds the true one (see {@link percentile}); the bucket is the
 * resolution, within a factor of two.
 *
 * Only requests that succeeded (status below 400) count, as in `GET /admin/latency`: a 429 that
 * answered in 2 ms says nothing about how fast a model is.
 */

/** What latency can be grouped by; deployments are kept only in the full rollup rows. */
export const LATENCY_GROUPS: readonly LatencyGroup[] = ["key", "model", "deployment"];

/** The percentiles served, as fractions and as the fields that carry them. */
export const PERCENTILES = [
  { q: 0.5, field: "p50_ms" },
  { q: 0.9, field: "p90_ms" },
  { q: 0.99, field: "p99_ms" },
] as const;

const GROUP_COLUMN: Record<LatencyGroup, string> = { key: "key_id", model: "model", deployment: "deployment" };

/**
 * The SQL of the bucket counts per group for `f`: whole months, days and hours from the rollups,
 * the range's ragged ends from the raw rows (the same cut as the totals, `planRange`). Months and
 * days by model or by key alone use the narrow rollup rows; a grouping by deployment, or by key
 * and model, reads the full ones.
 */
export function latencySql(f: UsageFilter, groupBy: readonly LatencyGroup[], d: Dialect): string {
  const needsKey = f.key_id !== undefined || groupBy.includes("key");
  const needsModel = f.model !== undefined || groupBy.includes("model");
  const full = groupBy.includes("deployment") || (needsKey && needsModel);
  const parts = planRange(f.since, f.until).map((p) => {
    const raw = p.from === "usage";
    const where: string[] = raw ? ["status < 400"] : [`grain = '${p.from}'`, "status < 400"];
    if (!raw) {
      // Hours are kept in full only; months and days narrow too (usage-rollup.ts ROLLUPS).
      if (p.from === "h" || full) where.push("key_id <> ''", "model <> ''");
      else if (!needsKey) where.push("key_id = ''");
      else where.push("model = ''");
    }
    const at = raw ? "created_at" : "bucket";
    if (p.lo !== undefined) where.push(`${at} >= ${d.param(p.lo)}`);
    if (p.hi !== undefined) where.push(`${at} < ${d.param(p.hi)}`);
    if (f.key_id) where.push(`key_id = ${d.param(f.key_id)}`);
    if (f.model) where.push(`model = ${d.param(f.model)}`);
    const counts = raw
      ? LATENCY_COLUMNS.map((c, i) => `CASE WHEN ${LATENCY_CASE} = ${i} THEN 1 ELSE 0 END AS ${c}`)
      : LATENCY_COLUMNS;
    const deployment = raw ? "COALESCE(deployment, '') AS deployment" : "deployment";
    return `SELECT key_id, model, ${deployment}, ${counts.join(", ")} FROM ${raw ? "usage" : "usage_rollup"} WHERE ${where.join(" AND ")}`;
  });
  if (parts.length === 0)
    parts.push(
      `SELECT key_id, model, deployment, ${LATENCY_COLUMNS.map((c) => `0 AS ${c}`).join(", ")} FROM usage WHERE 1 = 0`,
    );
  const groups = groupBy.map((g) => GROUP_COLUMN[g]);
  const sums = LATENCY_COLUMNS.map((c) => `${d.sum(`SUM(${c})`)} AS ${c}`);
  const group = groups.length ? ` GROUP BY ${groups.join(", ")} ORDER BY ${groups.join(", ")}` : "";
  return `SELECT ${[...groups, ...sums].join(", ")} FROM (${parts.join(" UNION ALL ")}) t${group}`;
}

/**
 * The `q` quantile of the latencies counted in `buckets`: the request of rank `q × n` is found in
 * its bucket, and placed inside it in proportion to its rank among the bucket's requests (linear
 * within the bucket, from 0 ms for the first). The last bucket has no upper bound; a rank there
 * reads as its lower bound, the largest figure the buckets can vouch for. 0 with no requests.
 */
export function percentile(buckets: readonly number[], q: number): number {
  const n = buckets.reduce((a, b) => a + b, 0);
  if (n === 0) return 0;
  const rank = q * n;
  let below = 0;
  for (let i = 0; i < buckets.length; i++) {
    const count = buckets[i]!;
    if (count > 0 && below + count >= rank) {
      const lo = i === 0 ? 0 : LATENCY_BOUNDS[i - 1]!;
      const hi = LATENCY_BOUNDS[i];
      if (hi === undefined) return lo;
      return Math.round((lo + ((hi - lo) * (rank - below)) / count) * 10) / 10;
    }
    below += count;
  }
  return LATENCY_BOUNDS[LATENCY_BOUNDS.length - 1]!;
}

/** The rows of {@link latencySql} as {@link LatencyAggregate}s: groups with no request dropped. */
export function toLatency(
  rows: readonly Record<string, unknown>[],
  groupBy: readonly LatencyGroup[],
): LatencyAggregate[] {
  const out: LatencyAggregate[] = [];
  for (const r of rows) {
    const buckets = LATENCY_COLUMNS.map((c) => Number(r[c] ?? 0));
    const requests = buckets.reduce((a, b) => a + b, 0);
    if (requests === 0) continue;
    const a: LatencyAggregate = { requests, latency_buckets: buckets, p50_ms: 0, p90_ms: 0, p99_ms: 0 };
    for (const g of groupBy) a[GROUP_COLUMN[g] as "key_id" | "model" | "deployment"] = String(r[GROUP_COLUMN[g]]); // the three group columns are these fields
    for (const { q, field } of PERCENTILES) a[field] = percentile(buckets, q);
    out.push(a);
  }
  return out;
}
