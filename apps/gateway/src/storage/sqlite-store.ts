import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { migrateSqlite } from "./migrations";
import type { CheckpointStart } from "./wal-checkpoint-worker";
import { spendByBudget } from "../limits/spend-store";
import {
  type KeyRecord,
  type Store,
  type UsageAggregate,
  type UsageFilter,
  type UsageGroup,
  type UsageRecord,
  withoutEmptyOptionals,
} from "./store";
import type { ResponseStore } from "../stored-responses/response-store";
import { SqliteResponseStore } from "../stored-responses/sqlite-response-store";
import { TeamStore } from "../teams/team-store";
import { sqliteRunner } from "./sql-runner";
import { BatchStore } from "../batches/batch-store";
import { GROUP_COLUMN, KEY_COLUMNS, type KeyRow, fromKey, toKey } from "./key-rows";

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
    this.insertUsageStmt = this.db.prepare(
      `INSERT OR IGNORE INTO usage VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertBatch = this.db.transaction((rows: readonly UsageRecord[]) => {
      const stmt = this.insertUsageStmt;
      // Positional values, in the table's column order (binding by name costs a lookup each).
      for (const r of rows) {
        stmt.run(
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
        );
      }
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

  private where(f: UsageFilter): { sql: string; params: Record<string, string | number> } {
    const params: Record<string, string | number> = {};
    const where: string[] = [];
    const clauses = [
      ["key_id", "key_id = $key_id", f.key_id],
      ["model", "model = $model", f.model],
      ["since", "created_at >= $since", f.since],
      ["until", "created_at < $until", f.until],
    ] as const;
    for (const [name, clause, value] of clauses) {
      if (!value) continue;
      where.push(clause);
      params[name] = value;
    }
    if (f.failed) where.push("status >= 400");
    if (f.before) {
      where.push("(created_at < $before_at OR (created_at = $before_at AND request_id < $before_id))");
      params.before_at = f.before.created_at;
      params.before_id = f.before.request_id;
    }
    return { sql: where.length ? "WHERE " + where.join(" AND ") : "", params };
  }

  async queryUsage(f: UsageFilter): Promise<UsageRecord[]> {
    const { sql, params } = this.where(f);
    params.limit = f.limit ?? 1000;
    return this.db
      .query<UsageRow, typeof params>(
        `SELECT * FROM usage ${sql} ORDER BY ${f.newestFirst ? "created_at DESC, request_id DESC" : "created_at, request_id"} LIMIT $limit`,
      )
      .all(params)
      .map(toUsage);
  }

  async aggregateUsage(f: UsageFilter, groupBy: readonly UsageGroup[]): Promise<UsageAggregate[]> {
    const { sql, params } = this.where(f);
    const cols = groupBy.map((g) => `${GROUP_COLUMN[g]} AS ${g === "key" ? "key_id" : g}`);
    const group = groupBy.length
      ? `GROUP BY ${groupBy.map((g) => GROUP_COLUMN[g]).join(", ")} ORDER BY ${groupBy.map((g) => GROUP_COLUMN[g]).join(", ")}`
      : "";
    const rows = this.db
      .query<UsageAggregate, typeof params>(
        `SELECT ${cols
          .concat([
            "COUNT(*) AS requests",
            "SUM(input_tokens) AS input_tokens",
            "SUM(output_tokens) AS output_tokens",
            "SUM(cache_read_tokens) AS cache_read_tokens",
            "SUM(cache_write_tokens) AS cache_write_tokens",
            "SUM(reasoning_tokens) AS reasoning_tokens",
            "SUM(cost_usd) AS cost_usd",
          ])
          .join(", ")} FROM usage ${sql} ${group}`,
      )
      .all(params);
    // An empty filter with no grouping still yields one row of zeros, not nulls.
    return rows
      .filter((r) => r.requests > 0)
      .map((r) => ({ ...r, cost_usd: Math.round((r.cost_usd ?? 0) * 1e9) / 1e9 }));
  }

  async spendSince(since: string): Promise<Map<string, number>> {
    const rows = this.db
      .query<{ key_id: string; team_id: string | null; cost: number }, { since: string }>(
        "SELECT u.key_id, k.team_id, SUM(u.cost_usd) AS cost FROM usage u LEFT JOIN keys k ON k.id = u.key_id WHERE u.created_at >= $since GROUP BY u.key_id, k.team_id",
      )
      .all({ since });
    return spendByBudget(rows);
  }

  responseStore(): ResponseStore {
    return new SqliteResponseStore(this.db);
  }

  teamStore(): TeamStore {
    return new TeamStore(sqliteRunner(this.db));
  }

  batchStore(): BatchStore {
    return new BatchStore(sqliteRunner(this.db));
  }

  async close(): Promise<void> {
    if (this.checkpointTimer) clearInterval(this.checkpointTimer);
    this.checkpointer?.terminate();
    this.db.close();
  }
}
