/**
 * Upgrades from every schema a database can be at (each migration version ships in a release),
 * on SQLite and PostgreSQL: a key and a usage record written at that schema are read back by
 * today's store; and a build started on a database newer than it knows refuses, naming both
 * schema versions, before it reads or writes anything.
 */
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  MIGRATIONS,
  type Migration,
  migrateSqlite,
  SCHEMA_VERSION,
  SchemaTooNewError,
} from "../../src/storage/migrations";
import { migratePostgres } from "../../src/storage/postgres-migrate";
import { PostgresStore } from "../../src/storage/postgres-store";
import { SqliteStore } from "../../src/storage/sqlite-store";
import { VERSION } from "../../src/vocabulary/version";
import { freshDatabase, postgresUp } from "../scaleout/servers";

/** The value a required column of a row written at an old schema gets (the id, time and key fields chosen). */
function valueFor(column: string, type: string, row: Record<string, unknown>): unknown {
  if (column in row) return row[column];
  if (/int|real|double|numeric|float/i.test(type)) return 0;
  if (/bool/i.test(type)) return false;
  if (/json/i.test(type)) return "{}";
  return `${column}-value`;
}

const KEY = (v: number) => ({
  id: `key_v${v}`,
  name: `made at schema ${v}`,
  hash: `hash-v${v}`,
  prefix: "sk-tp-abcd",
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
});
const USAGE = (v: number) => ({
  request_id: `req_v${v}`,
  key_id: `key_v${v}`,
  model: "beta-5",
  endpoint: "chat",
  input_tokens: 10 + v,
  output_tokens: 2,
  status: 200,
  upstream_status: 200,
  created_at: "2026-01-02T00:00:00.000Z",
});

/** A SQLite row of `table`: the given fields and every other required column of the schema it is at. */
function insertSqlite(db: Database, table: string, row: Record<string, unknown>): void {
  const cols = db
    .query<{ name: string; type: string; notnull: number; dflt_value: unknown }, []>(
      `SELECT name, type, "notnull", dflt_value FROM pragma_table_info('${table}')`,
    )
    .all()
    .filter((c) => c.name in row || (c.notnull === 1 && c.dflt_value === null));
  const values = cols.map((c) => valueFor(c.name, c.type, row));
  db.query(
    `INSERT INTO ${table} (${cols.map((c) => c.name).join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`,
  ).run(
    ...(values as (string | number | boolean)[]), // column values chosen by valueFor
  );
}

/** A migration one past this build's: what a newer release would have applied. */
const NEXT: Migration = {
  version: SCHEMA_VERSION + 1,
  name: "a newer release's change",
  sqlite: "ALTER TABLE usage ADD COLUMN newer_field TEXT;",
  postgres: "ALTER TABLE usage ADD COLUMN newer_field TEXT;",
};

function tempDir(): { dir: string; [Symbol.dispose](): void } {
  const dir = mkdtempSync(join(tmpdir(), "turnpike-upgrade-"));
  return { dir, [Symbol.dispose]: () => rmSync(dir, { recursive: true, force: true }) };
}

describe("SQLite", () => {
  test("from every schema version, a key and a usage record are kept and read by today's store", async () => {
    using tmp = tempDir();
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    for (const m of MIGRATIONS) {
      const path = join(tmp.dir, `v${m.version}.db`);
      const old = new Database(path, { create: true });
      migrateSqlite(old, MIGRATIONS.slice(0, m.version));
      insertSqlite(old, "keys", KEY(m.version));
      insertSqlite(old, "usage", USAGE(m.version));
      old.close();
      const store = new SqliteStore(path);
      try {
        const keys = await store.listKeys();
        expect({ from: m.version, keys: keys.map((k) => [k.id, k.name]) }).toEqual({
          from: m.version,
          keys: [[`key_v${m.version}`, `made at schema ${m.version}`]],
        });
        const usage = await store.queryUsage({ key_id: `key_v${m.version}` });
        expect(usage.map((u) => [u.request_id, u.input_tokens, u.status])).toEqual([
          [`req_v${m.version}`, 10 + m.version, 200],
        ]);
      } finally {
        await store.close();
      }
      const after = new Database(path);
      expect(after.query<{ v: number }, []>("SELECT MAX(version) AS v FROM schema_version").get()!.v).toBe(
        SCHEMA_VERSION,
      );
      after.close();
    }
  }, 60_000);

  test("a database a newer release migrated is refused, naming both versions, and left untouched", () => {
    using tmp = tempDir();
    const path = join(tmp.dir, "newer.db");
    const db = new Database(path, { create: true });
    migrateSqlite(db, [...MIGRATIONS, NEXT]);
    db.close();
    let error: unknown;
    try {
      new SqliteStore(path);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SchemaTooNewError);
    const message = (error as Error).message;
    expect(message).toContain(`schema version ${SCHEMA_VERSION + 1}`);
    expect(message).toContain(`up to ${SCHEMA_VERSION}`);
    const check = new Database(path);
    expect(check.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM schema_version").get()!.n).toBe(
      SCHEMA_VERSION + 1,
    );
    check.close();
  });
});

test("a start on a newer database: one JSON line naming both versions, exit 1, no stack trace", async () => {
  using tmp = tempDir();
  const path = join(tmp.dir, "newer.db");
  const db = new Database(path, { create: true });
  migrateSqlite(db, [...MIGRATIONS, NEXT]);
  db.close();
  const proc = Bun.spawn(["bun", join(import.meta.dir, "../../src/main.ts")], {
    env: { ...process.env, TURNPIKE_DB: path, PORT: "0", HOST: "127.0.0.1", TURNPIKE_CONFIG: "" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ]);
  expect(code).toBe(1);
  expect(JSON.parse(out.split("\n")[0]!)).toMatchObject({ msg: `Turnpike ${VERSION} starting`, version: VERSION });
  const fatal = JSON.parse(err.trim()) as { level: string; msg: string };
  expect(fatal.level).toBe("fatal");
  expect(fatal.msg).toStartWith(
    `This database is at schema version ${SCHEMA_VERSION + 1}, newer than this build knows: Turnpike ${VERSION} reads schema versions up to ${SCHEMA_VERSION}.`,
  );
}, 60_000);

describe.skipIf(!postgresUp)("PostgreSQL", () => {
  /** A PostgreSQL row of `table`: the given fields and every other required column of the schema it is at. */
  async function insertPostgres(sql: SQL, table: string, row: Record<string, unknown>): Promise<void> {
    const cols = (await sql`
      SELECT column_name AS name, data_type AS type FROM information_schema.columns
      WHERE table_schema = 'public' AND table_name = ${table}
      AND (column_name = ANY(${sql.array(Object.keys(row))}) OR (is_nullable = 'NO' AND column_default IS NULL))
      ORDER BY ordinal_position`) as { name: string; type: string }[];
    const values = cols.map((c) => valueFor(c.name, c.type, row));
    await sql.unsafe(
      `INSERT INTO ${table} (${cols.map((c) => c.name).join(", ")}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(", ")})`,
      values,
    );
  }

  test("from every schema version, a key and a usage record are kept and read by today's store", async () => {
    const db = await freshDatabase();
    try {
      for (const m of MIGRATIONS) {
        const sql = new SQL(db.url, { max: 1 });
        try {
          await sql.unsafe("DROP SCHEMA public CASCADE; CREATE SCHEMA public;");
          await migratePostgres(sql, MIGRATIONS.slice(0, m.version));
          await insertPostgres(sql, "keys", KEY(m.version));
          await insertPostgres(sql, "usage", USAGE(m.version));
        } finally {
          await sql.close();
        }
        const store = await PostgresStore.open(db.url, { max: 2 });
        try {
          expect({ from: m.version, keys: (await store.listKeys()).map((k) => [k.id, k.name]) }).toEqual({
            from: m.version,
            keys: [[`key_v${m.version}`, `made at schema ${m.version}`]],
          });
          const usage = await store.queryUsage({ key_id: `key_v${m.version}` });
          expect(usage.map((u) => [u.request_id, u.input_tokens, u.status])).toEqual([
            [`req_v${m.version}`, 10 + m.version, 200],
          ]);
          const [row] = await store.sql`SELECT MAX(version)::int AS v FROM schema_version`;
          expect(row.v).toBe(SCHEMA_VERSION);
        } finally {
          await store.close();
        }
      }
    } finally {
      await db.drop();
    }
  }, 180_000);

  test("a database a newer release migrated is refused, naming both versions", async () => {
    const db = await freshDatabase();
    try {
      const sql = new SQL(db.url, { max: 1 });
      await migratePostgres(sql, [...MIGRATIONS, NEXT]);
      await sql.close();
      const opened = PostgresStore.open(db.url, { max: 1 });
      await expect(opened).rejects.toBeInstanceOf(SchemaTooNewError);
      await expect(opened).rejects.toThrow(
        `This database is at schema version ${SCHEMA_VERSION + 1}, newer than this build knows`,
      );
    } finally {
      await db.drop();
    }
  }, 60_000);
});
