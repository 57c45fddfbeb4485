import type { SQL } from "bun";
import { MIGRATIONS, type Migration } from "./migrations";

/**
 * The advisory lock every instance takes before migrating (any fixed 64-bit number; this one is
 * "turnpike" in ASCII): several instances starting at once apply each migration once, in order,
 * the others waiting and then finding nothing left to do.
 */
export const MIGRATION_LOCK = 0x7475726e70696b65n;

/**
 * Brings a PostgreSQL database up to the newest version under {@link MIGRATION_LOCK}: each
 * missing migration in its own transaction, together with its `schema_version` row (the same
 * mechanism and table as SQLite's `migrateSqlite`). Returns the versions applied.
 */
export async function migratePostgres(sql: SQL, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const conn = await sql.reserve();
  const applied: number[] = [];
  try {
    await conn`SELECT pg_advisory_lock(${MIGRATION_LOCK.toString()}::bigint)`;
    try {
      await conn.unsafe("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
      const [row] = await conn`SELECT COALESCE(MAX(version), 0)::int AS v FROM schema_version`;
      const current = Number(row?.v ?? 0);
      for (const m of migrations) {
        if (m.version <= current) continue;
        await conn.begin(async (tx) => {
          await tx.unsafe(m.postgres);
          await tx`INSERT INTO schema_version (version, name, applied_at) VALUES (${m.version}, ${m.name}, ${new Date().toISOString()})`;
        });
        applied.push(m.version);
      }
    } finally {
      await conn`SELECT pg_advisory_unlock(${MIGRATION_LOCK.toString()}::bigint)`;
    }
  } finally {
    conn.release();
  }
  return applied;
}
