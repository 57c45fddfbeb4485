import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteReader } from "./sqlite-reader";

describe("SqliteReader", () => {
  const dir = mkdtempSync(join(tmpdir(), "turnpike-reader-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("a file's reads run on the worker and see every commit made before them", async () => {
    const path = join(dir, "a.db");
    const db = new Database(path, { create: true, strict: true });
    db.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER);");
    const reader = new SqliteReader(db, path);
    try {
      db.query("INSERT INTO t VALUES (?)").run(1);
      expect(await reader.all("SELECT SUM(n) AS s FROM t WHERE n >= ?", [0])).toEqual([{ s: 1 }]);
      db.transaction(() => {
        for (let i = 2; i <= 100; i++) db.query("INSERT INTO t VALUES (?)").run(i);
      })();
      expect(await reader.all("SELECT SUM(n) AS s, COUNT(*) AS c FROM t", [])).toEqual([{ s: 5050, c: 100 }]);
      expect(await reader.all("SELECT MAX(n) AS m FROM t", [])).toEqual([{ m: 100 }]);
    } finally {
      reader.close();
      db.close();
    }
  });

  test("a read that fails is refused at once, with SQLite's reason, and the reader keeps serving", async () => {
    const path = join(dir, "c.db");
    const db = new Database(path, { create: true, strict: true });
    db.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (3);");
    const reader = new SqliteReader(db, path);
    try {
      expect(await reader.all("SELECT n FROM t", [])).toEqual([{ n: 3 }]);
      // Awaited before asserting: `expect(read).rejects` would wait in a nested loop that holds
      // the worker's answer back until the reader's timeout (sqlite-reader.ts).
      const missing = await reader.all("SELECT n FROM no_such_table", []).catch((e: Error) => e);
      expect(missing).toBeInstanceOf(Error);
      expect((missing as Error).message).toBe("the ledger read failed: no such table: no_such_table");
      const syntax = await reader.all("SELEC n FROM t", []).catch((e: Error) => e);
      expect((syntax as Error).message).toBe('the ledger read failed: near "SELEC": syntax error');
      expect(await reader.all("SELECT n + ? AS m FROM t", [4])).toEqual([{ m: 7 }]);
    } finally {
      reader.close();
      db.close();
    }
  });

  test("an in-memory database (no file for a second connection) is read on this thread", async () => {
    const db = new Database(":memory:", { strict: true });
    db.exec("CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (7);");
    const reader = new SqliteReader(db, ":memory:");
    expect(await reader.all("SELECT n FROM t", [])).toEqual([{ n: 7 }]);
    reader.close();
    db.close();
  });

  test("reads waiting when the reader closes are refused, not left hanging", async () => {
    const path = join(dir, "b.db");
    const db = new Database(path, { create: true, strict: true });
    db.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER);");
    const reader = new SqliteReader(db, path);
    const pending = reader.all(
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 3000000) SELECT SUM(i) AS s FROM c",
      [],
    );
    reader.close();
    await expect(pending).rejects.toThrow(/closed/);
    db.close();
  });
});
