import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { sqliteSchemaVersion } from "./backup";
import { MIGRATIONS, type Migration, migrateSqlite } from "./migrations";
import { migratePostgres } from "./postgres-migrate";

/** What `turnpike migrate` did to a store. */
export interface MigrateResult {
  /** The store, as an operator names it: the SQLite file, or the PostgreSQL database (no password). */
  store: string;
  from: number;
  to: number;
  applied: Migration[];
}

/**
 * Brings the store up to this build's schema, as a start would (the same migrations, under the
 * same lock on PostgreSQL), without starting the gateway: an upgrade's schema change made (and
 * seen to succeed) before the new release takes traffic. A newer database is refused
 * (SchemaTooNewError).
 */
export async function migrateStore(where: { databaseUrl: string | undefined; dbPath: string }): Promise<MigrateResult> {
  const named = (versions: number[]) => MIGRATIONS.filter((m) => versions.includes(m.version));
  if (where.databaseUrl) {
    const url = new URL(where.databaseUrl);
    url.password = "";
    const sql = new SQL(where.databaseUrl, { max: 1, connectionTimeout: 5 });
    try {
      const [had] = await sql`SELECT to_regclass('schema_version') IS NOT NULL AS present`;
      const from = had?.present
        ? Number((await sql`SELECT COALESCE(MAX(version), 0)::int AS v FROM schema_version`)[0]?.v ?? 0)
        : 0;
      const applied = named(await migratePostgres(sql));
      const [row] = await sql`SELECT COALESCE(MAX(version), 0)::int AS v FROM schema_version`;
      return { store: url.toString(), from, to: Number(row?.v ?? 0), applied };
    } finally {
      await sql.close();
    }
  }
  if (where.dbPath !== ":memory:") mkdirSync(dirname(where.dbPath), { recursive: true });
  const db = new Database(where.dbPath, { create: true, strict: true });
  try {
    db.exec("PRAGMA journal_mode = WAL;");
    db.exec("PRAGMA busy_timeout = 10000;");
    const from = sqliteSchemaVersion(db);
    const applied = named(migrateSqlite(db));
    return { store: where.dbPath, from, to: sqliteSchemaVersion(db), applied };
  } finally {
    db.close();
  }
}
