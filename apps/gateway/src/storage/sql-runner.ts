import type { Database } from "bun:sqlite";
import type { SQL } from "bun";

/** A value bound to a `?` of a statement. */
export type SqlValue = string | number | null;

/**
 * The few statements the rarely written tables (teams, users, tokens, the audit log) need, in
 * one dialect for both stores: `?` placeholders, plain column types. One implementation of those
 * tables then serves SQLite and PostgreSQL alike (teams/team-store.ts).
 */
export interface SqlRunner {
  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  run(sql: string, params?: readonly SqlValue[]): Promise<void>;
}

export function sqliteRunner(db: Database): SqlRunner {
  return {
    all: <T>(sql: string, params: readonly SqlValue[] = []) =>
      Promise.resolve(db.query<T, SqlValue[]>(sql).all(...params)),
    run: (sql: string, params: readonly SqlValue[] = []) => {
      db.query<unknown, SqlValue[]>(sql).run(...params);
      return Promise.resolve();
    },
  };
}

/** `?` → `$1`, `$2`… (no statement of these tables holds a `?` in a literal). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

export function postgresRunner(sql: SQL, onError: (e: unknown) => never): SqlRunner {
  return {
    all: async <T>(text: string, params: readonly SqlValue[] = []) =>
      (await sql.unsafe(numbered(text), [...params]).catch(onError)) as T[], // rows of the columns the statement selects
    run: async (text: string, params: readonly SqlValue[] = []) => {
      await sql.unsafe(numbered(text), [...params]).catch(onError);
    },
  };
}
