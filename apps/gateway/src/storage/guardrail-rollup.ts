import type { GuardrailTotal, UsageRecord } from "./store";

/**
 * The guardrail notes of the ledger rolled up per UTC day, key, policy, category, action and dry
 * run, as they are written (docs/guardrails.md, "What is recorded"): `GET /admin/guardrails` reads
 * these, whose size follows days × keys × policies × categories, never the requests. A usage row's
 * note is JSON text; the rows written before the table existed are rolled up by its migration.
 * Like the usage rollups, these stay when retention deletes the raw rows.
 */

/** The columns a row is told apart by (its primary key), then the summed ones. */
export const GUARDRAIL_DIMS = ["day", "key_id", "policy", "category", "action", "dry_run"] as const;
export const GUARDRAIL_SUMS = ["requests", "detections"] as const;

/** The table, in either dialect's integer type; `dry_run` is 0 or 1 in both, so one read serves both. */
function table(int: "INTEGER" | "BIGINT", withoutRowid: boolean): string {
  return `CREATE TABLE guardrail_rollup (
  day TEXT NOT NULL,
  key_id TEXT NOT NULL,
  policy TEXT NOT NULL,
  category TEXT NOT NULL,
  action TEXT NOT NULL,
  dry_run INTEGER NOT NULL,
  requests ${int} NOT NULL,
  detections ${int} NOT NULL,
  PRIMARY KEY (day, key_id, policy, category, action, dry_run)
)${withoutRowid ? " WITHOUT ROWID" : ""};`;
}

/**
 * A detection's fields read out of the note's `detections` array, per dialect: SQLite's
 * `json_each` (`value` of each element; `true` reads as 1), PostgreSQL's `jsonb_array_elements`.
 */
const ELEMENTS = {
  sqlite: {
    from: (rows: string) => `${rows} u, json_each(u.guardrail, '$.detections') d`,
    field: (f: string) => `json_extract(d.value, '$.${f}')`,
    dryRun: "json_extract(d.value, '$.dry_run')",
    n: "json_extract(d.value, '$.n')",
  },
  postgres: {
    from: (rows: string) => `${rows} u, jsonb_array_elements(u.guardrail::jsonb -> 'detections') d`,
    field: (f: string) => `d ->> '${f}'`,
    dryRun: "CASE WHEN (d ->> 'dry_run')::boolean THEN 1 ELSE 0 END",
    n: "(d ->> 'n')::bigint",
  },
} as const;

/**
 * Rolls up the notes of the rows `rows` holds (`usage`, or PostgreSQL's CTE of the rows an insert
 * added); with `upsert`, a row already there is added to. A request counts once per detection
 * entry, as {@link guardrailRollupRows} counts it.
 */
export function guardrailRollupInsert(dialect: "sqlite" | "postgres", rows: string, upsert: boolean): string {
  const e = ELEMENTS[dialect];
  const dims = [
    "substr(u.created_at, 1, 10)",
    "u.key_id",
    e.field("policy"),
    e.field("category"),
    e.field("action"),
    e.dryRun,
  ];
  const upsertClause = upsert ? ` ${GUARDRAIL_ON_CONFLICT}` : "";
  return `INSERT INTO guardrail_rollup (${[...GUARDRAIL_DIMS, ...GUARDRAIL_SUMS].join(", ")})
SELECT ${dims.join(", ")}, COUNT(*), SUM(${e.n}) FROM ${e.from(rows)} WHERE u.guardrail IS NOT NULL GROUP BY 1, 2, 3, 4, 5, 6${upsertClause}`;
}

/** Adds a new row's sums to the stored row of the same day and dimensions. */
export const GUARDRAIL_ON_CONFLICT = `ON CONFLICT (${GUARDRAIL_DIMS.join(", ")}) DO UPDATE SET ${GUARDRAIL_SUMS.map((c) => `${c} = guardrail_rollup.${c} + excluded.${c}`).join(", ")}`;

/** The migration: the table, filled once from the notes already in the ledger. */
export function guardrailRollupMigration(dialect: "sqlite" | "postgres"): string {
  return [
    dialect === "sqlite" ? table("INTEGER", true) : table("BIGINT", false),
    `${guardrailRollupInsert(dialect, "usage", false)};`,
  ].join("\n");
}

/**
 * The rollup rows of `records` (the rows a batch really added), summed in memory, as positional
 * values in the order of {@link GUARDRAIL_DIMS} then {@link GUARDRAIL_SUMS} (the embedded store's
 * upserts).
 */
export function guardrailRollupRows(records: readonly UsageRecord[]): (string | number)[][] {
  const rows = new Map<string, (string | number)[]>();
  for (const r of records)
    for (const d of r.guardrail?.detections ?? []) {
      const dims = [r.created_at.slice(0, 10), r.key_id, d.policy, d.category, d.action, d.dry_run ? 1 : 0];
      const id = dims.join("\u0000");
      const row = rows.get(id);
      if (row) {
        row[6] = (row[6] as number) + 1; // the sums are numbers from the start
        row[7] = (row[7] as number) + d.n;
      } else rows.set(id, [...dims, 1, d.n]);
    }
  return [...rows.values()];
}

/**
 * One statement: the totals of the days `first`..`last` (`YYYY-MM-DD`, both included), per
 * policy, category, action, dry run and key. `p` binds a parameter in the store's dialect; `sum`
 * casts a sum to a JavaScript number.
 */
export function guardrailTotalsSql(
  first: string,
  last: string,
  p: (v: string) => string,
  sum: (e: string) => string,
): string {
  return `SELECT policy, category, action, dry_run, key_id, ${sum("SUM(requests)")} AS requests, ${sum("SUM(detections)")} AS detections
FROM guardrail_rollup WHERE day >= ${p(first)} AND day <= ${p(last)}
GROUP BY policy, category, action, dry_run, key_id`;
}

/** Rows as read: `dry_run` a boolean, sums numbers; most detections first, then by name. */
export function toGuardrailTotals(
  rows: readonly (Omit<GuardrailTotal, "dry_run" | "requests" | "detections"> & {
    dry_run: number | boolean;
    requests: number | string;
    detections: number | string;
  })[],
): GuardrailTotal[] {
  return rows
    .map((r) => ({
      policy: r.policy,
      category: r.category,
      action: r.action,
      dry_run: r.dry_run === true || Number(r.dry_run) === 1,
      key_id: r.key_id,
      requests: Number(r.requests),
      detections: Number(r.detections),
    }))
    .sort(
      (a, b) =>
        b.detections - a.detections ||
        a.policy.localeCompare(b.policy) ||
        a.category.localeCompare(b.category) ||
        a.key_id.localeCompare(b.key_id) ||
        a.action.localeCompare(b.action) ||
        Number(a.dry_run) - Number(b.dry_run),
    );
}
