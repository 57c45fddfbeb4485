import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { migrateSqlite } from "./migrations";
import type { CheckpointStart } from "./wal-checkpoint-worker";
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
import { sqliteRunner } from "./sql-runner";
import { SqliteReader } from "./sqlite-reader";
import { KEY_COLUMNS, type KeyRow, fromKey, toKey } from "./key-rows";
import { latencySql, toLatency } from "./usage-latency";
import {
  GUARDRAIL_DIMS,
  GUARDRAIL_ON_CONFLICT,
  GUARDRAIL_SUMS,
  guardrailRollupRows,
  guardrailTotalsSql,
  toGuardrailTotals,
} from "./guardrail-rollup";
import {
  aggregateSql,
  DIM_COLUMNS,
  type Dialect,
  ON_CONFLICT,
  PRUNE_SLICE,
  rollupRows,
  SUM_COLUMNS,
  toAggregates,
} from "./usage-rollup";

interface UsageRow extends Omit<UsageRecord, "stream" | "aborted" | "estimated"> {
  stream: number;
  aborted: number;
  estimated: number;
}

const toUsage = (r: UsageRow): UsageRecord => ({
  ...withoutEmptyOptionals(r),
  stream: r.stream === 1,
  aborted: r.aborted === 1,
  estimated: r.estimated === 1,
});

/**
 * Starts the worker that checkpoints the database at `path` once a second; `fallback` runs if no
 * worker can (the caller checkpoints on its own thread then).
 */
function startCheckpointer(path: string, fallback: () => void): Worker | undefined {
  try {
    const w = new Worker(new URL("./wal-checkpoint-worker.ts", import.meta.url).href);
    (w as Worker & { unref(): void }).unref(); // Bun's Worker has it; the DOM type does not
    w.onerror = () => {
      w.terminate();
      fallback();
    };
    w.postMessage({ path, everyMs: 1000 } satisfies CheckpointStart);
    return w;
  } catch {
    fallback();
    return undefined;
  }
}

/** The embedded store: one SQLite file in WAL mode (`TURNPIKE_DB`). */
export class SqliteStore implements Store {
  private readonly db: Database;
  private readonly insertUsageStmt;
  private readonly insertBatch: (rows: readonly UsageRecord[]) => void;
  private checkpointTimer: ReturnType<typeof setInterval> | undefined;
  private checkpointer: Worker | undefined;
  /** The ledger's reads, on a worker thread of their own (sqlite-reader.ts). */
  private readonly reader: SqliteReader;

  constructor(path: string) {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path, { create: true, strict: true });
    this.db.exec("PRAGMA journal_mode = WAL;");
    // NORMAL is durable against a crash of the process (the WAL is in the OS page cache);
    // only a power loss can take the last commits.
    this.db.exec("PRAGMA synchronous = NORMAL;");
    this.db.exec("PRAGMA busy_timeout = 5000;");
    // Checkpoints copy the WAL into the database and fsync; done by SQLite inside a commit they
    // stall that request. Instead: none automatically, one (non-blocking, PASSIVE) per second, by
    // a worker thread over its own connection: on the server's thread a checkpoint after a batch
    // file's 100 MB held the loop 0.5–2 s, and each fsync 10–140 ms on a busy disk.
    if (path !== ":memory:") {
      this.db.exec("PRAGMA wal_autocheckpoint = 0;");
      this.checkpointer = startCheckpointer(path, () => {
        // No worker: the server's thread checkpoints, as it did before there was one.
        this.checkpointTimer = setInterval(() => this.db.exec("PRAGMA wal_checkpoint(PASSIVE);"), 1000);
        this.checkpointTimer.unref?.();
      });
    }
    try {
      migrateSqlite(this.db);
    } catch (e) {
      // A database this build cannot use (newer than it, or a failed migration): nothing left open.
      void this.checkpointer?.terminate();
      clearInterval(this.checkpointTimer);
      this.db.close();
      throw e;
    }
    this.reader = new SqliteReader(this.db, path);
    this.insertUsageStmt = this.db.prepare(
      `INSERT OR IGNORE INTO usage VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const columns = [...DIM_COLUMNS, ...SUM_COLUMNS];
    const upsertRollup = this.db.prepare(
      `INSERT INTO usage_rollup (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")}) ${ON_CONFLICT}`,
    );
    const guardColumns = [...GUARDRAIL_DIMS, ...GUARDRAIL_SUMS];
    const upsertGuardrail = this.db.prepare(
      `INSERT INTO guardrail_rollup (${guardColumns.join(", ")}) VALUES (${guardColumns.map(() => "?").join(", ")}) ${GUARDRAIL_ON_CONFLICT}`,
    );
    this.insertBatch = this.db.transaction((rows: readonly UsageRecord[]) => {
      const stmt = this.insertUsageStmt;
      // Only the rows really added are rolled up (a replayed record is ignored by both).
      const added: UsageRecord[] = [];
      // Positional values, in the table's column order (binding by name costs a lookup each).
      for (const r of rows) {
        const { changes } = stmt.run(
          r.request_id,
          r.key_id,
          r.model,
          r.endpoint,
          r.stream ? 1 : 0,
          r.input_tokens,
          r.output_tokens,
          r.cache_read_tokens,
          r.cache_write_tokens,
          r.reasoning_tokens,
          r.cost_usd,
          r.status,
          r.upstream_status,
          r.latency_ms,
          r.aborted ? 1 : 0,
          r.estimated ? 1 : 0,
          r.created_at,
          r.cache_write_1h_tokens ?? 0,
          r.upstream_model ?? null,
          r.deployment ?? null,
          r.attempts ?? null,
          r.requested_model ?? null,
          r.bytes_in ?? null,
          r.bytes_out ?? null,
          r.cache_reset_from ?? null,
          r.guardrail ? JSON.stringify(r.guardrail) : null,
          r.continuations ?? null,
        );
        if (changes > 0) added.push(r);
      }
      // Summed in memory first: one upsert per period and dimensions, however many rows share them.
      for (const row of rollupRows(added)) upsertRollup.run(...row);
      for (const row of guardrailRollupRows(added)) upsertGuardrail.run(...row);
    });
  }

  async createKey(k: KeyRecord): Promise<void> {
    this.db
      .prepare(`INSERT INTO keys (${KEY_COLUMNS.join(", ")}) VALUES (${KEY_COLUMNS.map((c) => "$" + c).join(", ")})`)
      .run(fromKey(k));
  }

  async updateKey(k: KeyRecord): Promise<void> {
    this.db
      .prepare(
        `UPDATE keys SET ${KEY_COLUMNS.filter((c) => c !== "id")
          .map((c) => `${c} = $${c}`)
          .join(", ")} WHERE id = $id`,
      )
      .run(fromKey(k));
  }

  async listKeys(): Promise<KeyRecord[]> {
    return this.db.query<KeyRow, []>("SELECT * FROM keys ORDER BY created_at, id").all().map(toKey);
  }

  async insertUsage(records: readonly UsageRecord[]): Promise<void> {
    this.insertBatch(records);
  }

  private where(f: UsageFilter): { sql: string; params: (string | number)[] } {
    const params: (string | number)[] = [];
    const where: string[] = [];
    const clauses = [
      ["key_id = ?", f.key_id],
      ["model = ?", f.model],
      ["created_at >= ?", f.since],
      ["created_at < ?", f.until],
    ] as const;
    for (const [clause, value] of clauses) {
      if (!value) continue;
      where.push(clause);
      params.push(value);
    }
    if (f.failed) where.push("status >= 400");
    if (f.before) {
      where.push("(created_at < ? OR (created_at = ? AND request_id < ?))");
      params.push(f.before.created_at, f.before.created_at, f.before.request_id);
    }
    return { sql: where.length ? "WHERE " + where.join(" AND ") : "", params };
  }

  async queryUsage(f: UsageFilter): Promise<UsageRecord[]> {
    const { sql, params } = this.where(f);
    params.push(f.limit ?? 1000);
    const rows = await this.reader.all<UsageRow>(
      `SELECT * FROM usage ${sql} ORDER BY ${f.newestFirst ? "created_at DESC, request_id DESC" : "created_at, request_id"} LIMIT ?`,
      params,
    );
    return rows.map(toUsage);
  }

  /** Positional parameters for {@link aggregateSql}, in SQLite's dialect. */
  private dialect(params: (string | number)[]): Dialect {
    return {
      param: (v) => {
        params.push(v);
        return "?";
      },
      sum: (e) => `COALESCE(${e}, 0)`,
    };
  }

  async aggregateUsage(f: UsageFilter, groupBy: readonly UsageGroup[]): Promise<UsageAggregate[]> {
    const params: (string | number)[] = [];
    const sql = aggregateSql(f, groupBy, this.dialect(params));
    return toAggregates(await this.reader.all<UsageAggregate>(sql, params));
  }

  async latencyUsage(f: UsageFilter, groupBy: readonly LatencyGroup[]): Promise<LatencyAggregate[]> {
    const params: (string | number)[] = [];
    const sql = latencySql(f, groupBy, this.dialect(params));
    return toLatency(await this.reader.all<Record<string, unknown>>(sql, params), groupBy);
  }

  async guardrailTotals(first: string, last: string): Promise<GuardrailTotal[]> {
    const params: (string | number)[] = [];
    const sql = guardrailTotalsSql(first, last, this.dialect(params).param, (e) => e);
    return toGuardrailTotals(await this.reader.all(sql, params));
  }

  /** Read from the rollups: what it costs follows keys and days, not the month's requests. */
  async spendSince(since: string): Promise<Map<string, number>> {
    const params: (string | number)[] = [];
    const sql = aggregateSql({ since }, ["key"], this.dialect(params));
    const rows = await this.reader.all<{ key_id: string; team_id: string | null; cost: number }>(
      `SELECT a.key_id, k.team_id, a.cost_usd AS cost FROM (${sql}) a LEFT JOIN keys k ON k.id = a.key_id WHERE a.requests > 0`,
      params,
    );
    return spendByBudget(rows);
  }

  async pruneUsage(before: string, between: () => Promise<void> = () => Promise.resolve()): Promise<number> {
    // By the time index, oldest first; the rows' own key names each (the table has no rowid).
    const slice = this.db.prepare<unknown, [string, number]>(
      "DELETE FROM usage WHERE (key_id, created_at, request_id) IN (SELECT key_id, created_at, request_id FROM usage WHERE created_at < ? ORDER BY created_at LIMIT ?)",
    );
    let removed = 0;
    for (;;) {
      const { changes } = slice.run(before, PRUNE_SLICE);
      removed += changes;
      if (changes < PRUNE_SLICE) return removed;
      await between();
    }
  }

  connection(): Connection {
    return { dialect: "sqlite", db: this.db, runner: sqliteRunner(this.db) };
  }

  async close(): Promise<void> {
    if (this.checkpointTimer) clearInterval(this.checkpointTimer);
    this.checkpointer?.terminate();
    this.reader.close();
    this.db.close();
  }
}
