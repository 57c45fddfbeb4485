import type { SQL } from "bun";

/**
 * PostgreSQL's ledger partitioned by month (migration 21): `usage` is a table partitioned by range
 * of `created_at`, one partition per UTC month named `usage_YYYY_MM` holding the instants from
 * its first midnight (`YYYY-MM-01T00:00:00.000Z`, the form every record's time has) to the next
 * month's, and `usage_default` for anything else (a row never fails to insert for
 * want of a partition). Retention drops a month whose every row is past the cut as one table
 * (milliseconds, no dead rows left to vacuum) instead of deleting its rows a slice at a time.
 *
 * `created_at` is ISO 8601 text, so the column is collated "C": byte order is time order and the
 * month bounds compare the same under any database locale (the planner prunes partitions only
 * when a query's comparison uses the partition key's collation, which is the column's).
 *
 * A unique key of a partitioned table must hold the partition key: the primary key is
 * `(request_id, created_at)`. A replayed record carries its time, so `ON CONFLICT (request_id,
 * created_at)` still drops it; a record and the reaped row of the same request (metering/
 * postgres-inflight.ts) differ in time, and each insert skips a request id already present
 * (`NOT EXISTS`, served by the primary key's leading column in each partition).
 */

/** Months kept ready ahead of now: this one and the next two (made at start and hourly). */
export const MONTHS_AHEAD = 2;

/** `YYYY-MM` of `ms` plus `add` months. */
export function monthOf(ms: number, add = 0): string {
  const d = new Date(ms);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + add, 1)).toISOString().slice(0, 7);
}

/** What follows `YYYY-MM` in a bound: the month's first instant, as records write times. */
const START = "-01T00:00:00.000Z";

/** Whole months from `a`'s to `b`'s (negative when `b` is earlier). */
function monthsBetween(a: number, b: number): number {
  const [x, y] = [new Date(a), new Date(b)];
  return (y.getUTCFullYear() - x.getUTCFullYear()) * 12 + y.getUTCMonth() - x.getUTCMonth();
}

const NEXT_MONTH_SQL = "to_char(to_date(m || '-01', 'YYYY-MM-DD') + interval '1 month', 'YYYY-MM')";

/** Migration 19 (PostgreSQL): the table rebuilt partitioned, its rows copied, a partition per month they fill. */
export const PARTITION_USAGE = `
ALTER TABLE usage RENAME TO usage_before_partitions;
ALTER INDEX IF EXISTS usage_key_time RENAME TO usage_before_partitions_key_time;
ALTER INDEX IF EXISTS usage_time RENAME TO usage_before_partitions_time;
ALTER TABLE usage_before_partitions RENAME CONSTRAINT usage_pkey TO usage_before_partitions_pkey;
CREATE TABLE usage_columns (LIKE usage_before_partitions INCLUDING DEFAULTS);
ALTER TABLE usage_columns ALTER COLUMN created_at TYPE TEXT COLLATE "C";
CREATE TABLE usage (LIKE usage_columns INCLUDING DEFAULTS) PARTITION BY RANGE (created_at);
DROP TABLE usage_columns;
ALTER TABLE usage ADD PRIMARY KEY (request_id, created_at);
CREATE INDEX usage_key_time ON usage (key_id, created_at);
CREATE INDEX usage_time ON usage (created_at, request_id);
CREATE TABLE usage_default PARTITION OF usage DEFAULT;
DO $$
DECLARE m text;
BEGIN
  FOR m IN
    SELECT DISTINCT substr(created_at, 1, 7) FROM usage_before_partitions WHERE created_at ~ '^[0-9]{4}-[0-9]{2}'
    UNION SELECT to_char(now() AT TIME ZONE 'UTC' + make_interval(months => i), 'YYYY-MM') FROM generate_series(0, ${MONTHS_AHEAD}) i
  LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF usage FOR VALUES FROM (%L) TO (%L)',
      'usage_' || replace(m, '-', '_'), m || '${START}', ${NEXT_MONTH_SQL} || '${START}');
  END LOOP;
END $$;
INSERT INTO usage SELECT * FROM usage_before_partitions;
DROP TABLE usage_before_partitions;`;

/** The statement that makes month `m`'s partition when it is not there yet. */
function partitionFor(m: string): string {
  const [y, mo] = m.split("-").map(Number) as [number, number]; // `YYYY-MM`, from monthOf
  const next = monthOf(Date.UTC(y, mo - 1, 1), 1);
  return `CREATE TABLE IF NOT EXISTS usage_${m.replace("-", "_")} PARTITION OF usage FOR VALUES FROM ('${m}${START}') TO ('${next}${START}')`;
}

/**
 * Makes the partitions of this month and the next {@link MONTHS_AHEAD} that are missing, so rows
 * land in their month's table, never in the default one. Several instances at once: each
 * statement is idempotent; one that loses the race to another's identical CREATE is ignored.
 */
export async function ensureUsagePartitions(sql: SQL, now: number, from = now): Promise<void> {
  // `from` earlier than now: the months back to it as well (a seeded or imported ledger).
  for (let i = Math.min(0, monthsBetween(now, from)); i <= MONTHS_AHEAD; i++)
    await sql.unsafe(partitionFor(monthOf(now, i))).catch((e: unknown) => {
      // Another instance made it between the check and the create; or the default partition
      // already holds rows of that month (written with a clock far ahead): they stay there, still
      // read and pruned, by slices, and the month is tried again at the next look.
      if (!/already exists|would be violated/.test(String(e))) throw e;
    });
}

/**
 * Drops the month partitions that end at or before `before` (ISO 8601), whole; returns how many
 * rows they held (counted first, from each partition's own primary key). Rows of the month that
 * `before` cuts, and any in the default partition, are left to the caller's sliced DELETE.
 */
export async function dropUsagePartitions(sql: SQL, before: string): Promise<number> {
  const parts: { name: string }[] = await sql.unsafe(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'usage'::regclass AND c.relname ~ '^usage_[0-9]{4}_[0-9]{2}$' ORDER BY c.relname`,
  );
  let removed = 0;
  for (const { name } of parts) {
    const m = `${name.slice(6, 10)}-${name.slice(11, 13)}`;
    const [y, mo] = m.split("-").map(Number) as [number, number]; // matched by the pattern above
    const end = new Date(Date.UTC(y, mo, 1)).toISOString();
    if (end > before) continue;
    const [row] = await sql.unsafe(`SELECT count(*)::int AS n FROM ${name}`);
    removed += Number(row?.n ?? 0);
    await sql.unsafe(`DROP TABLE ${name}`);
  }
  return removed;
}
