import { afterEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MIGRATIONS, migrateSqlite, type Migration } from "./migrations";
import { SqliteStore } from "./sqlite-store";

/** The schema a store was created with before versioning existed (no schema_version table). */
const UNVERSIONED_SCHEMA = `
CREATE TABLE IF NOT EXISTS keys (
  id TEXT PRIMARY KEY, name TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL, models TEXT,
  rpm INTEGER, tpm INTEGER, model_limits TEXT, budget_usd REAL, expires_at TEXT, prev_hash TEXT,
  prev_valid_until TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS usage (
  request_id TEXT PRIMARY KEY, key_id TEXT NOT NULL, model TEXT NOT NULL, endpoint TEXT NOT NULL,
  stream INTEGER NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
  cache_read_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL, reasoning_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL, status INTEGER NOT NULL, upstream_status INTEGER NOT NULL, latency_ms REAL NOT NULL,
  aborted INTEGER NOT NULL, estimated INTEGER NOT NULL, created_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS usage_key_time ON usage (key_id, created_at);`;

const OLD_KEY = `INSERT INTO keys VALUES ('key_old', 'legacy', 'h1', 'sk-tp-abcd', NULL, 5, NULL, NULL, NULL, NULL, NULL, NULL, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', NULL)`;
const OLD_USAGE = `INSERT INTO usage VALUES ('req_old', 'key_old', 'beta-5', 'chat', 0, 10, 2, 0, 0, 0, 0.5, 200, 200, 12.5, 0, 0, '2026-01-02T00:00:00.000Z')`;

const versions = (db: Database) =>
  db.query<{ version: number; name: string }, []>("SELECT version, name FROM schema_version ORDER BY version").all();
const tables = (db: Database) =>
  db
    .query<{ name: string }, []>(
      "SELECT name FROM sqlite_master WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .all()
    .map((r) => r.name);

const open: Database[] = [];
function memoryDb(): Database {
  const db = new Database(":memory:");
  open.push(db);
  return db;
}
afterEach(() => {
  for (const db of open.splice(0)) db.close();
});

/** The first shipped migration alone: the tests of the mechanism start from it. */
const V1 = MIGRATIONS.slice(0, 1);
const SHIPPED = MIGRATIONS.map((m) => ({ version: m.version, name: m.name }));
const noteColumn: Migration = {
  version: 2,
  name: "key notes",
  sqlite: "ALTER TABLE keys ADD COLUMN note TEXT;",
  postgres: "ALTER TABLE keys ADD COLUMN note TEXT;",
};

describe("migrateSqlite", () => {
  test("a fresh database gets version 1 and its tables", () => {
    const db = memoryDb();
    expect(migrateSqlite(db, V1)).toEqual([1]);
    expect(versions(db)).toEqual([{ version: 1, name: "keys and usage" }]);
    expect(tables(db)).toEqual(["keys", "schema_version", "usage", "usage_key_time"]);
    const applied = db.query<{ applied_at: string }, []>("SELECT applied_at FROM schema_version").get();
    expect(Date.parse(applied!.applied_at)).not.toBeNaN();
  });

  test("running again applies nothing", () => {
    const db = memoryDb();
    migrateSqlite(db);
    expect(migrateSqlite(db)).toEqual([]);
    expect(versions(db)).toHaveLength(MIGRATIONS.length);
  });

  test("the shipped list is applied whole, in order, each version once", () => {
    const db = memoryDb();
    expect(migrateSqlite(db)).toEqual(SHIPPED.map((m) => m.version));
    expect(versions(db)).toEqual(SHIPPED);
    expect(SHIPPED.map((m) => m.version)).toEqual(SHIPPED.map((_, i) => i + 1));
  });

  test("a database made before versioning is adopted: version 1 recorded, its rows kept", () => {
    const db = memoryDb();
    db.exec(UNVERSIONED_SCHEMA);
    db.exec(OLD_KEY);
    db.exec(OLD_USAGE);
    expect(migrateSqlite(db, V1)).toEqual([1]);
    expect(versions(db)).toEqual([{ version: 1, name: "keys and usage" }]);
    expect(db.query<{ name: string; rpm: number }, []>("SELECT name, rpm FROM keys").all()).toEqual([
      { name: "legacy", rpm: 5 },
    ]);
    expect(db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM usage").get()!.n).toBe(1);
  });

  test("a migration appended later is applied once, on top of what is there", () => {
    const db = memoryDb();
    migrateSqlite(db, V1);
    db.exec(OLD_KEY);
    const list = [...V1, noteColumn];
    expect(migrateSqlite(db, list)).toEqual([2]);
    expect(migrateSqlite(db, list)).toEqual([]);
    expect(versions(db).map((v) => v.version)).toEqual([1, 2]);
    expect(db.query<{ id: string; note: string | null }, []>("SELECT id, note FROM keys").all()).toEqual([
      { id: "key_old", note: null },
    ]);
    // A fresh database takes both in order.
    expect(migrateSqlite(memoryDb(), list)).toEqual([1, 2]);
  });

  test("a migration that fails leaves no trace and no version row", () => {
    const db = memoryDb();
    migrateSqlite(db, V1);
    const broken: Migration = {
      version: 2,
      name: "broken",
      sqlite: "CREATE TABLE half (a INTEGER); INSERT INTO missing VALUES (1);",
      postgres: "",
    };
    expect(() => migrateSqlite(db, [...V1, broken])).toThrow();
    expect(tables(db)).not.toContain("half");
    expect(versions(db).map((v) => v.version)).toEqual([1]);
  });
});

describe("version 5: usage keyed by key, time and request id", () => {
  const columns = (db: Database) =>
    db
      .query<{ name: string }, []>("SELECT name FROM pragma_table_info('usage') ORDER BY cid")
      .all()
      .map((c) => c.name);

  test("rows written under version 4 are kept whole, in the same column order, and the index is gone", () => {
    const db = memoryDb();
    migrateSqlite(db, MIGRATIONS.slice(0, 4));
    db.exec(
      OLD_USAGE.replace(
        "'2026-01-02T00:00:00.000Z')",
        "'2026-01-02T00:00:00.000Z', 3, 'vendor-beta-5', 'beta-backup', 2, 'beta-5.5')",
      ),
    );
    const before = columns(db);
    const row = db.query("SELECT * FROM usage").get();
    expect(migrateSqlite(db, MIGRATIONS.slice(0, 5))).toEqual([5]);
    expect(columns(db)).toEqual(before);
    expect(db.query("SELECT * FROM usage").get()).toEqual(row);
    expect(tables(db)).not.toContain("usage_key_time");
    expect(tables(db)).not.toContain("usage_v5");
  });

  test("a per-key query reads the table's own key; a replayed record is dropped, another id kept", () => {
    const db = memoryDb();
    // Version 5's table, with its 22 columns (later versions add more).
    migrateSqlite(db, MIGRATIONS.slice(0, 5));
    const plan = db
      .query<{ detail: string }, []>(
        "EXPLAIN QUERY PLAN SELECT * FROM usage WHERE key_id = 'k' AND created_at >= '2026' ORDER BY created_at, request_id",
      )
      .all()
      .map((r) => r.detail)
      .join(" | ");
    expect(plan).toContain("USING PRIMARY KEY (key_id=? AND created_at>?)");
    expect(plan).not.toContain("TEMP B-TREE");
    const insert = db.prepare(`INSERT OR IGNORE INTO usage VALUES (${Array(22).fill("?").join(", ")})`);
    const record = (id: string) =>
      [
        id,
        "key_a",
        "beta-5",
        "chat",
        0,
        10,
        2,
        0,
        0,
        0,
        0.5,
        200,
        200,
        12.5,
        0,
        0,
        "2026-01-02T00:00:00.000Z",
        0,
        null,
        null,
        null,
        null,
      ] as const;
    insert.run(...record("req_1"));
    insert.run(...record("req_1"));
    insert.run(...record("req_2"));
    expect(
      db
        .query<{ request_id: string }, []>("SELECT request_id FROM usage ORDER BY request_id")
        .all()
        .map((r) => r.request_id),
    ).toEqual(["req_1", "req_2"]);
  });
});

describe("version 7: the prompt cache a session left behind", () => {
  test("adds a nullable column at the end; earlier rows read it as null", () => {
    const db = memoryDb();
    migrateSqlite(db, MIGRATIONS.slice(0, 6));
    db.exec(
      OLD_USAGE.replace(
        "'2026-01-02T00:00:00.000Z')",
        "'2026-01-02T00:00:00.000Z', 3, 'vendor-beta-5', 'beta-backup', 2, 'beta-5.5', 12, 34)",
      ),
    );
    expect(migrateSqlite(db, MIGRATIONS.slice(0, 7))).toEqual([7]);
    const cols = db
      .query<{ name: string }, []>("SELECT name FROM pragma_table_info('usage') ORDER BY cid")
      .all()
      .map((c) => c.name);
    expect(cols.at(-1)).toBe("cache_reset_from");
    expect(db.query<{ cache_reset_from: string | null }, []>("SELECT cache_reset_from FROM usage").get()).toEqual({
      cache_reset_from: null,
    });
  });
});

describe("version 12: who gave a team membership", () => {
  test("a membership last set by sign-on is sign-on's; any other, and any without a record, the admin's", () => {
    const db = memoryDb();
    migrateSqlite(
      db,
      MIGRATIONS.filter((m) => m.version < 12),
    );
    const member = db.query(
      "INSERT INTO team_members (team_id, user_id, role, created_at) VALUES (?, ?, 'member', 'x')",
    );
    const audit = db.query(
      "INSERT INTO audit (id, at, actor, action, target) VALUES (?, 'x', ?, 'team.member.set', ?)",
    );
    for (const u of ["u_sso", "u_hand", "u_taken", "u_none"]) member.run("team_a", u);
    audit.run("a1", "sign-on", "team_a/u_sso");
    audit.run("a2", "admin-key", "team_a/u_hand");
    // Given by sign-on, then set again by an admin: the admin's now.
    audit.run("a3", "sign-on", "team_a/u_taken");
    audit.run("a4", "user:someone", "team_a/u_taken");
    expect(migrateSqlite(db)).toEqual(MIGRATIONS.filter((m) => m.version >= 12).map((m) => m.version));
    const rows = db
      .query<{ user_id: string; source: string }, []>("SELECT user_id, source FROM team_members ORDER BY user_id")
      .all();
    expect(rows).toEqual([
      { user_id: "u_hand", source: "admin" },
      { user_id: "u_none", source: "admin" },
      { user_id: "u_sso", source: "sign-on" },
      { user_id: "u_taken", source: "admin" },
    ]);
  });
});

describe("SqliteStore over an unversioned file", () => {
  test("opens it, adopts it, and reads its keys and usage", async () => {
    const dir = mkdtempSync(join(tmpdir(), "turnpike-migrate-"));
    try {
      const path = join(dir, "old.db");
      const old = new Database(path, { create: true });
      old.exec(UNVERSIONED_SCHEMA);
      old.exec(OLD_KEY);
      old.exec(OLD_USAGE);
      old.close();
      const store = new SqliteStore(path);
      const keys = await store.listKeys();
      expect(keys.map((k) => [k.id, k.rpm, k.models])).toEqual([["key_old", 5, null]]);
      const usage = await store.queryUsage({ key_id: "key_old" });
      expect(usage.map((u) => [u.request_id, u.input_tokens, u.stream, u.estimated])).toEqual([
        ["req_old", 10, false, false],
      ]);
      await store.close();
      const check = new Database(path);
      expect(versions(check)).toEqual(SHIPPED);
      check.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
