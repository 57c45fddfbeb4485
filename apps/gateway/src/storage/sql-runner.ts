import type { Database } from "bun:sqlite";
import type { SQL } from "bun";

/** A value bound to a `?` of a statement (bytes: a BLOB in SQLite, a BYTEA in PostgreSQL). */
export type SqlValue = string | number | null | Uint8Array;

/**
 * The SQL the stores written once for both databases run (teams/team-store.ts,
 * storage/batch-store.ts): one dialect — `?` placeholders, plain column types, rows as plain
 * objects — and transactions. One implementation of those tables then serves SQLite and
 * PostgreSQL alike.
 */
export interface SqlRunner {
  all<T = Record<string, unknown>>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  run(sql: string, params?: readonly SqlValue[]): Promise<void>;
  /** Runs `fn` in one transaction: every statement of `tx` commits together, or none does. */
  transaction<T>(fn: (tx: SqlRunner) => Promise<T>): Promise<T>;
}

/**
 * SQLite. Its calls are synchronous, so a transaction's statements run back to back, in one
 * BEGIN IMMEDIATE … COMMIT, with nothing else in between.
 */
export function sqliteRunner(db: Database): SqlRunner {
  const runner: SqlRunner = {
    all: <T>(sql: string, params: readonly SqlValue[] = []) =>
      Promise.resolve(db.query<T, SqlValue[]>(sql).all(...params)),
    run: (sql: string, params: readonly SqlValue[] = []) => {
      db.query<unknown, SqlValue[]>(sql).run(...params);
      return Promise.resolve();
    },
    async transaction(fn) {
      db.exec("BEGIN IMMEDIATE");
      try {
        const out = await fn(runner);
        db.exec("COMMIT");
        return out;
      } catch (e) {
        db.exec("ROLLBACK");
        throw e;
      }
    },
  };
  return runner;
}

/** `?` → `$1`, `$2`… (no statement of these stores holds a `?` in a literal). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/**
 * PostgreSQL. `onError` turns a failure into the store's own error (an unreachable database
 * into a 503 the client can retry; postgres-errors.ts).
 */
export function postgresRunner(sql: SQL, onError: (e: unknown) => never): SqlRunner {
  const over = (s: SQL): SqlRunner => ({
    all: async <T>(text: string, params: readonly SqlValue[] = []) =>
      (await s.unsafe(numbered(text), [...params]).catch(onError)) as T[], // rows of the columns the statement selects
    run: async (text: string, params: readonly SqlValue[] = []) => {
      await s.unsafe(numbered(text), [...params]).catch(onError);
    },
    transaction: (fn) => s.begin((tx) => fn(over(tx))).catch(onError) as ReturnType<typeof fn>, // begin resolves with fn's result
  });
  return over(sql);
}
