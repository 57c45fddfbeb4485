import type { UsageAggregate, UsageFilter, UsageGroup, UsageRecord } from "./store";
import { nanoDollars } from "../vocabulary/money";

/**
 * The ledger's rollups: usage summed as it is written, per UTC hour, day and month, by key, model,
 * deployment and status (a key's team is fixed when the key is made, so a team's totals are its
 * keys'). A chart or a total reads these, whose size follows keys × models × periods, not the raw
 * rows; only the part of a range that does not fill an hour (at most an hour at each end) is
 * summed from the raw rows. Both stores keep the same table (`usage_rollup`, migration 16).
 *
 * Days and months are also kept narrow: per model alone (`key_id` empty) and per key alone
 * (`model` empty), deployments together, so a chart per model or per key reads one row per model
 * or key and day and status, not one per key × model × deployment (100 keys using 10 models on
 * two deployments: 2,000 rows a day against 10 or 100).
 */

/** The grains, coarsest first: a range is read from the coarsest grain whose periods it fills. */
export const GRAINS = ["m", "d", "h"] as const;
export type Grain = (typeof GRAINS)[number];

/**
 * Which dimensions a rollup row keeps: all (`full`), or all but the key (`model`) or the model
 * (`key`); the dropped one is stored as the empty string, which no key id or model id is.
 */
export type Variant = "full" | "model" | "key";

/** Every rollup written: each grain in full, and days and months narrow too. */
export const ROLLUPS: readonly { grain: Grain; variant: Variant }[] = [
  ...GRAINS.map((grain) => ({ grain, variant: "full" as const })),
  ...(["m", "d"] as const).flatMap((grain) => (["model", "key"] as const).map((variant) => ({ grain, variant }))),
];

/** A period's name as the `bucket` column holds it: the ISO time cut to its month, day or hour. */
const BUCKET_CHARS: Record<Grain, number> = { m: 7, d: 10, h: 13 };

/**
 * Upper bounds (ms, exclusive) of the latency buckets; a last bucket holds the rest. Doubling from
 * 25 ms: a percentile read from them is within a factor of two, enough for a chart. Never edited
 * once shipped (the rollup columns and the backfill follow it).
 */
export const LATENCY_BOUNDS = [25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200, 102400] as const;
export const LATENCY_COLUMNS = Array.from({ length: LATENCY_BOUNDS.length + 1 }, (_, i) => `lat_${i}`);

export function latencyBucket(ms: number): number {
  for (let i = 0; i < LATENCY_BOUNDS.length; i++) if (ms < LATENCY_BOUNDS[i]!) return i;
  return LATENCY_BOUNDS.length;
}

/** The summed columns, in the table's order (requests first, the latency buckets last). */
export const SUM_COLUMNS = [
  "requests",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "cache_write_1h_tokens",
  "reasoning_tokens",
  "cost_usd",
  "latency_ms_sum",
  ...LATENCY_COLUMNS,
] as const;

/** The columns a rollup row is told apart by (its primary key). */
export const DIM_COLUMNS = ["grain", "bucket", "key_id", "model", "deployment", "status"] as const;

/** Migration 16's table, in either dialect's types. */
export function rollupTable(
  int: "INTEGER" | "BIGINT",
  real: "REAL" | "DOUBLE PRECISION",
  withoutRowid: boolean,
): string {
  return `CREATE TABLE usage_rollup (
  grain TEXT NOT NULL,
  bucket TEXT NOT NULL,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  deployment TEXT NOT NULL,
  status INTEGER NOT NULL,
  requests ${int} NOT NULL,
  input_tokens ${int} NOT NULL,
  output_tokens ${int} NOT NULL,
  cache_read_tokens ${int} NOT NULL,
  cache_write_tokens ${int} NOT NULL,
  cache_write_1h_tokens ${int} NOT NULL,
  reasoning_tokens ${int} NOT NULL,
  cost_usd ${real} NOT NULL,
  latency_ms_sum ${real} NOT NULL,
${LATENCY_COLUMNS.map((c) => `  ${c} ${int} NOT NULL,`).join("\n")}
  PRIMARY KEY (grain, bucket, key_id, model, deployment, status)
)${withoutRowid ? " WITHOUT ROWID" : ""};`;
}

/** The latency bucket of `latency_ms` in SQL (the same in both dialects). */
export const LATENCY_CASE = `CASE ${LATENCY_BOUNDS.map((b, i) => `WHEN latency_ms < ${b} THEN ${i}`).join(" ")} ELSE ${LATENCY_BOUNDS.length} END`;

/**
 * Rolls up the raw rows `from` holds (`usage`, or a CTE of rows just inserted) into every grain;
 * with `upsert`, a rollup row already there is added to.
 */
export function rollupInsert(
  from: string,
  { grain, variant }: { grain: Grain; variant: Variant },
  upsert: boolean,
): string {
  const sums = [
    "COUNT(*)",
    "SUM(input_tokens)",
    "SUM(output_tokens)",
    "SUM(cache_read_tokens)",
    "SUM(cache_write_tokens)",
    "SUM(cache_write_1h_tokens)",
    "SUM(reasoning_tokens)",
    "SUM(cost_usd)",
    "SUM(latency_ms)",
    ...LATENCY_COLUMNS.map((_, i) => `SUM(CASE WHEN ${LATENCY_CASE} = ${i} THEN 1 ELSE 0 END)`),
  ];
  const dims = [
    `substr(created_at, 1, ${BUCKET_CHARS[grain]})`,
    variant === "model" ? "''" : "key_id",
    variant === "key" ? "''" : "model",
    variant === "full" ? "COALESCE(deployment, '')" : "''",
    "status",
  ];
  // PostgreSQL refuses a constant to group or order by: only the dimensions kept.
  const kept = dims.filter((d) => d !== "''").join(", ");
  return `INSERT INTO usage_rollup (${[...DIM_COLUMNS, ...SUM_COLUMNS].join(", ")})
SELECT '${grain}', ${dims.join(", ")}, ${sums.join(", ")} FROM ${from} WHERE true GROUP BY ${kept} ORDER BY ${kept}${upsert ? ` ${ON_CONFLICT}` : ""}`;
}

/** Adds a new rollup row's sums to the stored row of the same period and dimensions. */
export const ON_CONFLICT = `ON CONFLICT (${DIM_COLUMNS.join(", ")}) DO UPDATE SET ${SUM_COLUMNS.map((c) => `${c} = usage_rollup.${c} + excluded.${c}`).join(", ")}`;

/** Migration 16 in full: the table, filled from the rows already there, and the time index. */
export function rollupMigration(dialect: "sqlite" | "postgres"): string {
  const table =
    dialect === "sqlite" ? rollupTable("INTEGER", "REAL", true) : rollupTable("BIGINT", "DOUBLE PRECISION", false);
  return [
    table,
    ...ROLLUPS.map((r) => `${rollupInsert("usage", r, false)};`),
    // Newest-first listings (the request log, usage pages without a key) walk this from its end.
    "CREATE INDEX usage_time ON usage (created_at, request_id);",
  ].join("\n");
}

/** One rollup row in the making (the embedded store sums a batch in memory before its upserts). */
export type RollupRow = (string | number)[];

/**
 * The rollup rows of `records` (the rows a batch really added), one per grain, period and
 * dimensions, as positional values in the order of {@link DIM_COLUMNS} then {@link SUM_COLUMNS}.
 */
export function rollupRows(records: readonly UsageRecord[]): RollupRow[] {
  const rows = new Map<string, RollupRow>();
  const dims = DIM_COLUMNS.length;
  for (const r of records) {
    const lat = dims + 9 + latencyBucket(r.latency_ms);
    for (const { grain: g, variant: v } of ROLLUPS) {
      const bucket = r.created_at.slice(0, BUCKET_CHARS[g]);
      const keyId = v === "model" ? "" : r.key_id;
      const model = v === "key" ? "" : r.model;
      const deployment = v === "full" ? (r.deployment ?? "") : "";
      const id = `${g}\u0000${bucket}\u0000${keyId}\u0000${model}\u0000${deployment}\u0000${r.status}`;
      let row = rows.get(id);
      if (!row) {
        row = [g, bucket, keyId, model, deployment, r.status, ...SUM_COLUMNS.map(() => 0)];
        rows.set(id, row);
      }
      const add = (i: number, v: number) => {
        row[dims + i] = (row[dims + i] as number) + v; // every sum column starts as a number
      };
      add(0, 1);
      add(1, r.input_tokens);
      add(2, r.output_tokens);
      add(3, r.cache_read_tokens);
      add(4, r.cache_write_tokens);
      add(5, r.cache_write_1h_tokens ?? 0);
      add(6, r.reasoning_tokens);
      add(7, r.cost_usd);
      add(8, r.latency_ms);
      row[lat] = (row[lat] as number) + 1;
    }
  }
  return [...rows.values()];
}

/** One piece of a range: whole periods of a grain, or raw rows; bounds inclusive..exclusive, absent = open. */
export interface Piece {
  from: "usage" | Grain;
  /** A bucket name (rollups) or an ISO time (raw rows). */
  lo?: string;
  hi?: string;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();
const monthFloor = (ms: number) => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
};
const monthCeil = (ms: number) => {
  const f = monthFloor(ms);
  if (f === ms) return ms;
  const d = new Date(f);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
};
const floorTo = (ms: number, step: number) => (Number.isFinite(ms) ? Math.floor(ms / step) * step : ms);
const ceilTo = (ms: number, step: number) => (Number.isFinite(ms) ? Math.ceil(ms / step) * step : ms);

/**
 * Cuts `[since, until)` into the fewest reads: whole months, then whole days, then whole hours
 * from the rollups, and what is left at either end (less than an hour each) from the raw rows.
 * `months: false` when the reader groups by day (a month's rollup row has no day).
 */
export function planRange(since: string | undefined, until: string | undefined, months = true): Piece[] {
  const s = since ? Date.parse(since) : Number.NEGATIVE_INFINITY;
  const u = until ? Date.parse(until) : Number.POSITIVE_INFINITY;
  if (!(s < u)) return [];
  const hs = ceilTo(s, HOUR);
  const hu = floorTo(u, HOUR);
  if (!(hs < hu)) return [{ from: "usage", ...(since ? { lo: since } : {}), ...(until ? { hi: until } : {}) }];
  const pieces: Piece[] = [];
  const add = (from: Piece["from"], lo: number, hi: number) => {
    if (!(lo < hi)) return;
    const cut = (ms: number) => (from === "usage" ? iso(ms) : iso(ms).slice(0, BUCKET_CHARS[from]));
    pieces.push({
      from,
      ...(Number.isFinite(lo) ? { lo: cut(lo) } : {}),
      ...(Number.isFinite(hi) ? { hi: cut(hi) } : {}),
    });
  };
  add("usage", s, hs);
  add("usage", hu, u);
  const ds = ceilTo(hs, DAY);
  const du = floorTo(hu, DAY);
  if (!(ds < du)) {
    add("h", hs, hu);
    return pieces;
  }
  add("h", hs, ds);
  add("h", du, hu);
  const ms = Number.isFinite(ds) ? monthCeil(ds) : ds;
  const mu = Number.isFinite(du) ? monthFloor(du) : du;
  if (!months || !(ms < mu)) {
    add("d", ds, du);
    return pieces;
  }
  add("d", ds, ms);
  add("d", mu, du);
  add("m", ms, mu);
  return pieces;
}

/** The rollup rows a read of `grain` takes: the narrowest kept that still has what it filters and groups on. */
function variantWhere(grain: Grain, f: UsageFilter, groupBy: readonly UsageGroup[]): string[] {
  const needsKey = f.key_id !== undefined || groupBy.includes("key");
  const needsModel = f.model !== undefined || groupBy.includes("model");
  const narrow = ROLLUPS.some((r) => r.grain === grain && r.variant !== "full");
  if (narrow && !needsKey) return ["key_id = ''"];
  if (narrow && !needsModel) return ["model = ''"];
  return ["key_id <> ''", "model <> ''"];
}

/** How a store writes a parameter and a summed number in its dialect. */
export interface Dialect {
  /** Binds `v`, returning its placeholder. */
  param(v: string | number): string;
  /** A sum as a JavaScript number (PostgreSQL's SUM of an integer is numeric). */
  sum(expr: string): string;
}

/** The group columns each `group_by` word reads from the union of pieces. */
const GROUP_EXPR: Record<UsageGroup, string> = { key: "key_id", model: "model", day: "day" };

const TOTALS = [
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "reasoning_tokens",
  "cost_usd",
] as const;

/**
 * The SQL of {@link UsageAggregate}s for `f` grouped by `groupBy`, read from the rollups (and the
 * raw rows at the range's ends): requests, tokens and cost per group, ordered by the groups.
 */
export function aggregateSql(f: UsageFilter, groupBy: readonly UsageGroup[], d: Dialect): string {
  const parts = planRange(f.since, f.until, !groupBy.includes("day")).map((p) => {
    const raw = p.from === "usage";
    const where: string[] = p.from === "usage" ? [] : [`grain = '${p.from}'`, ...variantWhere(p.from, f, groupBy)];
    const at = raw ? "created_at" : "bucket";
    if (p.lo !== undefined) where.push(`${at} >= ${d.param(p.lo)}`);
    if (p.hi !== undefined) where.push(`${at} < ${d.param(p.hi)}`);
    if (f.key_id) where.push(`key_id = ${d.param(f.key_id)}`);
    if (f.model) where.push(`model = ${d.param(f.model)}`);
    if (f.failed) where.push("status >= 400");
    const cols = raw
      ? ["key_id", "model", "substr(created_at, 1, 10) AS day", "1 AS requests", ...TOTALS]
      : ["key_id", "model", "substr(bucket, 1, 10) AS day", "requests", ...TOTALS];
    return `SELECT ${cols.join(", ")} FROM ${raw ? "usage" : "usage_rollup"}${where.length ? ` WHERE ${where.join(" AND ")}` : ""}`;
  });
  // Nothing to read (an empty range): a union of no rows, so the shape stays the same.
  if (parts.length === 0)
    parts.push(
      `SELECT key_id, model, substr(created_at, 1, 10) AS day, 1 AS requests, ${TOTALS.join(", ")} FROM usage WHERE 1 = 0`,
    );
  const groups = groupBy.map((g) => GROUP_EXPR[g]);
  const cols = groupBy.map((g) => `${GROUP_EXPR[g]} AS ${g === "key" ? "key_id" : g}`);
  const sums = [`${d.sum("SUM(requests)")} AS requests`, ...TOTALS.map((c) => `${d.sum(`SUM(${c})`)} AS ${c}`)];
  const group = groups.length ? ` GROUP BY ${groups.join(", ")} ORDER BY ${groups.join(", ")}` : "";
  return `SELECT ${[...cols, ...sums].join(", ")} FROM (${parts.join(" UNION ALL ")}) t${group}`;
}

/** Rows as {@link UsageAggregate}s: groups with no request dropped, cost rounded to a nano-dollar. */
export function toAggregates(rows: readonly UsageAggregate[]): UsageAggregate[] {
  return rows.filter((r) => Number(r.requests) > 0).map((r) => ({ ...r, cost_usd: nanoDollars(r.cost_usd ?? 0) }));
}

/** Raw rows deleted per statement when the ledger is pruned: a slice takes milliseconds. */
export const PRUNE_SLICE = 1000;
