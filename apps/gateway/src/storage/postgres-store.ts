import { SQL } from "bun";
import { migratePostgres } from "./postgres-migrate";
import { unavailable } from "./postgres-errors";
import { spendByBudget } from "./spend-ids";

import {
  type KeyRecord,
  type LatencyAggregate,
  type LatencyGroup,
  type Connection,
  type GuardrailTotal,
  type Store,
  type UsageAggregate,
  type UsageFilter,
  type UsageGroup,
  type UsageRecord,
  withoutEmptyOptionals,
} from "./store";
import { postgresRunner } from "./sql-runner";
import { KEY_COLUMNS, type KeyRow, fromKey, toKey } from "./key-rows";
import { dropUsagePartitions, ensureUsagePartitions } from "./usage-partitions";
import { latencySql, toLatency } from "./usage-latency";
import { guardrailRollupInsert, guardrailTotalsSql, toGuardrailTotals } from "./guardrail-rollup";
import { aggregateSql, type Dialect, PRUNE_SLICE, ROLLUPS, rollupInsert, toAggregates } from "./usage-rollup";

const USAGE_COLUMNS = [
  "request_id",
  "key_id",
  "model",
  "endpoint",
  "stream",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "reasoning_tokens",
  "cost_usd",
  "status",
  "upstream_status",
  "latency_ms",
  "aborted",
  "estimated",
  "created_at",
  "cache_write_1h_tokens",
  "upstream_model",
  "deployment",
  "attempts",
  "requested_model",
  "bytes_in",
  "bytes_out",
  "cache_reset_from",
  "guardrail",
  "continuations",
] as const;
/** Rows per statement: bounded so that one insert stays short. */
const ROWS_PER_INSERT = 2000;
const USAGE_TYPES: Record<(typeof USAGE_COLUMNS)[number], string> = {
  request_id: "text",
  key_id: "text",
  model: "text",
  endpoint: "text",
  stream: "bool",
  input_tokens: "int4",
  output_tokens: "int4",
  cache_read_tokens: "int4",
  cache_write_tokens: "int4",
  reasoning_tokens: "int4",
  cost_usd: "float8",
  status: "int4",
  upstream_status: "int4",
  latency_ms: "float8",
  aborted: "bool",
  estimated: "bool",
  created_at: "text",
  cache_write_1h_tokens: "int4",
  upstream_model: "text",
  deployment: "text",
  attempts: "int4",
  requested_model: "text",
  bytes_in: "int4",
  bytes_out: "int4",
  cache_reset_from: "text",
  guardrail: "text",
  continuations: "int4",
};
/**
 * The records go as one JSON text, read back into rows by the server: handing the driver one
 * array per column cost the gateway about 4 µs of CPU per record (each element quoted into an
 * array literal in JavaScript); one `JSON.stringify` of the batch is native (bound as text, then
 * cast: a parameter the server types as json is sent by the driver as a JSON string). Rows whose request
 * id is already there are skipped: a replayed journal cannot duplicate a record. The same
 * transaction takes the requests out of the book of requests in flight (limits/postgres-inflight.ts),
 * by its primary key (`= ANY` of an array: written as `IN (SELECT …)` the planner scanned the
 * whole book, dead rows included, on every insert). The rows really added (`RETURNING`: a replayed
 * one is not) are rolled up in the same statement, per hour, day and month (storage/usage-rollup.ts),
 * and their guardrail notes per day (storage/guardrail-rollup.ts).
 * The table is partitioned by month (storage/usage-partitions.ts), so its unique key holds the
 * time too: a request id already there at another time (the row a survivor reaped for it) is
 * skipped by `NOT EXISTS`.
 */
const INSERT_USAGE = `WITH r AS (SELECT * FROM json_to_recordset($1::text::json) AS r(${USAGE_COLUMNS.map((c) => `${c} ${USAGE_TYPES[c]}`).join(", ")})),
gone AS (DELETE FROM inflight WHERE request_id = ANY (ARRAY(SELECT request_id FROM r))),
added AS (INSERT INTO usage (${USAGE_COLUMNS.join(", ")}) SELECT ${USAGE_COLUMNS.join(", ")} FROM r
  WHERE NOT EXISTS (SELECT 1 FROM usage u WHERE u.request_id = r.request_id)
  ON CONFLICT (request_id, created_at) DO NOTHING RETURNING *),
${ROLLUPS.map((r) => `rollup_${r.grain}_${r.variant} AS (${rollupInsert("added", r, true)})`).join(",\n")},
guardrails AS (${guardrailRollupInsert("postgres", "added", true)})
SELECT 1`;

/**
 * The shared store: PostgreSQL (`TURNPIKE_DATABASE_URL`), for several instances behind one load
 * balancer. The same contract as the SQLite store (test/scaleout/store-contract.test.ts runs both);
 * usage inserts are idempotent by request id, so a journal replayed after a crash cannot
 * duplicate a record.
 */
export class PostgresStore implements Store {
  private constructor(readonly sql: SQL) {}

  /** Connects and applies missing migrations (under an advisory lock, see postgres-migrate.ts). */
  static async open(url: string, opts: { max?: number } = {}): Promise<PostgresStore> {
    const sql = new SQL(url, { max: opts.max ?? 8, idleTimeout: 30, connectionTimeout: 3 });
    try {
      await migratePostgres(sql);
      await ensureUsagePartitions(sql, Date.now());
    } catch (e) {
      await sql.close().catch(() => {});
      throw e;
    }
    return new PostgresStore(sql);
  }

  /**
   * Runs `fn` while holding a cluster-wide lock (a PostgreSQL advisory lock): what must happen
   * once however many instances start at once, such as making the first key.
   */
  async exclusive<T>(lock: bigint, fn: () => Promise<T>): Promise<T> {
    const conn = await this.sql.reserve();
    try {
      await conn`SELECT pg_advisory_lock(${lock.toString()}::bigint)`;
      try {
        return await fn();
      } finally {
        await conn`SELECT pg_advisory_unlock(${lock.toString()}::bigint)`;
      }
    } finally {
      conn.release();
    }
  }

  /** A cheap round trip, for readiness. */
  async ping(): Promise<void> {
    await this.sql`SELECT 1`;
  }

  async createKey(k: KeyRecord): Promise<void> {
    await this.sql`INSERT INTO keys ${this.sql(fromKey(k), ...KEY_COLUMNS)}`.catch(unavailable);
  }

  async updateKey(k: KeyRecord): Promise<void> {
    const row = fromKey(k);
    const cols = KEY_COLUMNS.filter((c) => c !== "id");
    await this.sql`UPDATE keys SET ${this.sql(row, ...cols)} WHERE id = ${k.id}`.catch(unavailable);
  }

  async listKeys(): Promise<KeyRecord[]> {
    // BIGINT comes back as a string: read the limits as float8 (exact for any integer below 2^53).
    const rows: KeyRow[] = await this.sql
      .unsafe(
        `SELECT ${KEY_COLUMNS.map((c) => (c === "rpm" || c === "tpm" ? `${c}::float8 AS ${c}` : c)).join(", ")} FROM keys ORDER BY created_at, id`,
      )
      .catch(unavailable);
    return rows.map((r) => toKey({ ...r }));
  }

  /**
   * One statement per batch with one array per column (`unnest`): 22 parameters however many rows,
   * which PostgreSQL parses and plans far faster than 19 per row.
   */
  async insertUsage(records: readonly UsageRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += ROWS_PER_INSERT) {
      // The fields a record may leave out get their column's default.
      const chunk = records.slice(i, i + ROWS_PER_INSERT).map((r) => ({
        ...r,
        cache_write_1h_tokens: r.cache_write_1h_tokens ?? 0,
        upstream_model: r.upstream_model ?? null,
        deployment: r.deployment ?? null,
        attempts: r.attempts ?? null,
        requested_model: r.requested_model ?? null,
        bytes_in: r.bytes_in ?? null,
        bytes_out: r.bytes_out ?? null,
        cache_reset_from: r.cache_reset_from ?? null,
        guardrail: r.guardrail ? JSON.stringify(r.guardrail) : null,
        continuations: r.continuations ?? null,
      }));
      const ids = chunk.map((r) => r.request_id);
      await this.sql
        .begin(async (tx) => {
          // Waits for a reaper that holds one of these requests' rows in the book: the insert's
          // own snapshot, taken after, then sees the row it billed (the table's unique key,
          // partitioned, no longer spans request ids alone).
          await tx.unsafe("SELECT 1 FROM inflight WHERE request_id = ANY ($1::text[]) FOR UPDATE", [ids]);
          await tx.unsafe(INSERT_USAGE, [JSON.stringify(chunk)]);
        })
        .catch(unavailable);
    }
  }

  private where(f: UsageFilter): { sql: string; params: (string | number)[] } {
    const params: (string | number)[] = [];
    const where: string[] = [];
    const clauses = [
      ["key_id = ", f.key_id],
      ["model = ", f.model],
      ["created_at >= ", f.since],
      ["created_at < ", f.until],
    ] as const;
    for (const [clause, value] of clauses) {
      if (!value) continue;
      params.push(value);
      where.push(`${clause}$${params.length}`);
    }
    if (f.failed) where.push("status >= 400");
    if (f.before) {
      params.push(f.before.created_at, f.before.request_id);
      where.push(
        `(created_at < $${params.length - 1} OR (created_at = $${params.length - 1} AND request_id < $${params.length}))`,
      );
    }
    return { sql: where.length ? "WHERE " + where.join(" AND ") : "", params };
  }

  async queryUsage(f: UsageFilter): Promise<UsageRecord[]> {
    const { sql, params } = this.where(f);
    params.push(f.limit ?? 1000);
    const rows: UsageRecord[] = await this.sql
      .unsafe(
        `SELECT ${USAGE_COLUMNS.join(", ")} FROM usage ${sql} ORDER BY ${f.newestFirst ? "created_at DESC, request_id DESC" : "created_at, request_id"} LIMIT $${params.length}`,
        params,
      )
      .catch(unavailable);
    return rows.map((r) => withoutEmptyOptionals(r));
  }

  /** Numbered parameters for {@link aggregateSql}, in PostgreSQL's dialect. */
  private dialect(params: (string | number)[]): Dialect {
    return {
      param: (v) => {
        params.push(v);
        return `$${params.length}`;
      },
      // SUM and COUNT are bigint/numeric in PostgreSQL: cast back to JavaScript numbers.
      sum: (e) => `COALESCE(${e}, 0)::float8`,
    };
  }

  async aggregateUsage(f: UsageFilter, groupBy: readonly UsageGroup[]): Promise<UsageAggregate[]> {
    const params: (string | number)[] = [];
    const sql = aggregateSql(f, groupBy, this.dialect(params));
    const rows: UsageAggregate[] = await this.sql.unsafe(sql, params).catch(unavailable);
    return toAggregates(rows);
  }

  async latencyUsage(f: UsageFilter, groupBy: readonly LatencyGroup[]): Promise<LatencyAggregate[]> {
    const params: (string | number)[] = [];
    const sql = latencySql(f, groupBy, this.dialect(params));
    const rows: Record<string, unknown>[] = await this.sql.unsafe(sql, params).catch(unavailable);
    return toLatency(rows, groupBy);
  }

  async guardrailTotals(first: string, last: string): Promise<GuardrailTotal[]> {
    const params: (string | number)[] = [];
    const d = this.dialect(params);
    const rows: Parameters<typeof toGuardrailTotals>[0] = await this.sql
      .unsafe(guardrailTotalsSql(first, last, d.param, d.sum), params)
      .catch(unavailable);
    return toGuardrailTotals(rows);
  }

  /** Read from the rollups: what it costs follows keys and days, not the month's requests. */
  async spendSince(since: string): Promise<Map<string, number>> {
    const params: (string | number)[] = [];
    const sql = aggregateSql({ since }, ["key"], this.dialect(params));
    const rows: { key_id: string; team_id: string | null; cost: number }[] = await this.sql
      .unsafe(
        `SELECT a.key_id, k.team_id, a.cost_usd AS cost FROM (${sql}) a LEFT JOIN keys k ON k.id = a.key_id WHERE a.requests > 0`,
        params,
      )
      .catch(unavailable);
    return spendByBudget(rows);
  }

  async pruneUsage(before: string, between: () => Promise<void> = () => Promise.resolve()): Promise<number> {
    // Hourly with the retention: the months ahead made, the months past the cut dropped whole;
    // only the month the cut falls in (and the default partition) is deleted from by slices.
    await ensureUsagePartitions(this.sql, Date.now()).catch(unavailable);
    let removed = await dropUsagePartitions(this.sql, before).catch(unavailable);
    for (;;) {
      const rows: unknown[] = await this.sql
        .unsafe(
          // The outer bound on the time too: the planner then looks the slice's rows up only in the
          // partitions before the cut, by their primary key (request id and time).
          "DELETE FROM usage WHERE created_at < $1 AND (request_id, created_at) IN (SELECT request_id, created_at FROM usage WHERE created_at < $1 ORDER BY created_at LIMIT $2) RETURNING 1",
          [before, PRUNE_SLICE],
        )
        .catch(unavailable);
      removed += rows.length;
      if (rows.length < PRUNE_SLICE) return removed;
      await between();
    }
  }

  connection(): Connection {
    return { dialect: "postgres", sql: this.sql, runner: postgresRunner(this.sql, unavailable) };
  }

  async close(): Promise<void> {
    await this.sql.close();
  }
}
