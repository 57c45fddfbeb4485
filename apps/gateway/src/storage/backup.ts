import { Database } from "bun:sqlite";
import { existsSync, statSync } from "node:fs";

/** What a backup wrote. */
export interface BackupResult {
  path: string;
  bytes: number;
  /** The schema version of the copy (the `schema_version` it holds). */
  schemaVersion: number;
}

/** The highest version in a database's `schema_version`; 0 when it has none. */
export function sqliteSchemaVersion(db: Database): number {
  const table = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").get();
  if (!table) return 0;
  return db.query<{ v: number | null }, []>("SELECT MAX(version) AS v FROM schema_version").get()?.v ?? 0;
}

/**
 * An online backup of the SQLite store: `VACUUM INTO` writes a consistent, compacted copy of the
 * database as one transaction saw it (WAL included), while the gateway goes on reading and writing
 * (SQLite's documentation, "VACUUM INTO"); the copy is then checked (`PRAGMA quick_check`). The
 * source is opened read-only; an existing target is never overwritten.
 */
export function backupSqlite(source: string, target: string): BackupResult {
  if (!existsSync(source)) throw new Error(`no SQLite database at ${source} (TURNPIKE_DB)`);
  if (existsSync(target)) throw new Error(`${target} exists already: a backup never overwrites a file`);
  const db = new Database(source, { readonly: true });
  try {
    // A writer holds the lock briefly at most (group commits): wait for it rather than fail.
    db.exec("PRAGMA busy_timeout = 10000;");
    db.query("VACUUM INTO ?").run(target);
  } finally {
    db.close();
  }
  const copy = new Database(target, { readonly: true });
  try {
    const check = copy.query<{ quick_check: string }, []>("PRAGMA quick_check").get()?.quick_check;
    if (check !== "ok") throw new Error(`the copy at ${target} fails SQLite's quick_check: ${check}`);
    return { path: target, bytes: statSync(target).size, schemaVersion: sqliteSchemaVersion(copy) };
  } finally {
    copy.close();
  }
}

/**
 * The `pg_dump` command that backs up the PostgreSQL store: the custom format (compressed, read by
 * `pg_restore`, which can restore in parallel and into another database), without owners or
 * grants so that it restores under any role. One consistent snapshot, taken while the gateway
 * runs. The password leaves the URL for `PGPASSWORD`, so it never shows in a process listing.
 */
export function pgDumpCommand(databaseUrl: string, target: string): { argv: string[]; env: Record<string, string> } {
  const url = new URL(databaseUrl);
  const password = decodeURIComponent(url.password);
  url.password = "";
  return {
    argv: [
      "pg_dump",
      "--format=custom",
      "--no-owner",
      "--no-privileges",
      "--quote-all-identifiers",
      `--file=${target}`,
      `--dbname=${url.toString()}`,
    ],
    env: password ? { PGPASSWORD: password } : {},
  };
}

/** Runs {@link pgDumpCommand}; refuses an existing target; the error names pg_dump's own reason. */
export async function backupPostgres(databaseUrl: string, target: string): Promise<{ path: string; bytes: number }> {
  if (existsSync(target)) throw new Error(`${target} exists already: a backup never overwrites a file`);
  const { argv, env } = pgDumpCommand(databaseUrl, target);
  let proc: ReturnType<typeof Bun.spawn>;
  try {
    proc = Bun.spawn(argv, { env: { ...process.env, ...env }, stdout: "ignore", stderr: "pipe" });
  } catch {
    throw new Error("pg_dump is not installed: install the PostgreSQL client tools of the server's major version");
  }
  const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr as ReadableStream).text()]);
  if (code !== 0) throw new Error(`pg_dump failed (exit ${code}): ${err.trim()}`);
  return { path: target, bytes: statSync(target).size };
}
