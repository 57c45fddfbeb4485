import type { SQL } from "bun";
import { checkNotNewer, MIGRATIONS, type Migration } from "./migrations";

/**
 * The advisory lock every instance takes before migrating (any fixed 64-bit number; this one is
 * "turnpike" in ASCII): several instances starting at once apply each migration once, in order,
 * the others waiting and then finding nothing left to do.
 */
export const MIGRATION_LOCK = 0x7475726e70696b65n;

/**
 * Brings a PostgreSQL database up to the newest version (the same mechanism and `schema_version`
 * table as SQLite's `migrateSqlite`): each missing migration in its own transaction, together with
 * its version row. Every transaction first takes {@link MIGRATION_LOCK} (released at its commit)
 * and checks the version again under it, so instances starting at once apply each migration once,
 * in order, the others waiting and then finding it done. Returns the versions applied; a database
 * newer than `migrations` is refused (SchemaTooNewError).
 */
export async function migratePostgres(sql: SQL, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const lock = MIGRATION_LOCK.toString();
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${lock}::bigint)`;
    await tx.unsafe(
      "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
    );
  });
  const [row] = await sql`SELECT COALESCE(MAX(version), 0)::int AS v FROM schema_version`;
  const current = Number(row?.v ?? 0);
  checkNotNewer(current, migrations);
  const applied: number[] = [];
  for (const m of migrations) {
    if (m.version <= current) continue;
    const done = await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${lock}::bigint)`;
      const [seen] = await tx`SELECT 1 AS one FROM schema_version WHERE version = ${m.version}`;
      if (seen) return false;
      await tx.unsafe(m.postgres);
      await tx`INSERT INTO schema_version (version, name, applied_at) VALUES (${m.version}, ${m.name}, ${new Date().toISOString()})`;
      return true;
    });
    if (done) applied.push(m.version);
  }
  return applied;
}
