import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import type { SqlRunner } from "./batch-store";

type Param = string | number | null;

/**
 * SQLite under the batch store: `$1` becomes `?1`. Its calls are synchronous, so a transaction's
 * statements run back to back, in one BEGIN IMMEDIATE … COMMIT, with nothing else in between.
 */
export function sqliteRunner(db: Database): SqlRunner {
  const runner: SqlRunner = {
    all: (query, params) =>
      Promise.resolve(db.query<Record<string, unknown>, Param[]>(query.replace(/\$(\d+)/g, "?$1")).all(...params)),
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

/** PostgreSQL under the batch store. */
export function postgresRunner(sql: SQL): SqlRunner {
  const over = (s: SQL): SqlRunner => ({
    all: async (query, params) => (await s.unsafe(query, [...params])) as Record<string, unknown>[], // rows of a query are plain objects
    transaction: (fn) => s.begin((tx) => fn(over(tx))) as ReturnType<typeof fn>, // begin resolves with fn's result
  });
  return over(sql);
}
