/**
 * The stored-responses contract, on both back ends: put, read by id and key only, expiry,
 * delete, purge. PostgreSQL runs when it is reachable (else its tests are reported as skipped).
 */
import { responseStoreOf } from "../../src/stored-responses/response-store-of";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PostgresStore } from "../../src/storage/postgres-store";
import type { StoredResponse } from "../../src/vocabulary/stored-response";
import { SqliteStore } from "../../src/storage/sqlite-store";
import type { Store } from "../../src/storage/store";
import { freshDatabase, postgresUp } from "./servers";

const stored = (id: string, keyId: string, expires: string): StoredResponse => ({
  id,
  key_id: keyId,
  model: "beta-5",
  response: {
    id,
    object: "response",
    status: "completed",
    output: [{ type: "message", content: [{ type: "output_text", text: "Hi é ✓" }] }],
  },
  input_items: [{ role: "user", content: "Hello" }],
  created_at: "2026-11-01T00:00:00.000Z",
  expires_at: expires,
});

function contract(name: string, open: () => Promise<Store>, close: () => Promise<void>) {
  describe(`ResponseStore contract: ${name}`, () => {
    let store: Store;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(close);

    test("a stored response is read back whole, by its key only, until it expires", async () => {
      const rs = responseStoreOf(store);
      const r = stored("resp_a", "key_1", "2026-12-01T00:00:00.000Z");
      await rs.put(r);
      expect(await rs.get("key_1", "resp_a", "2026-11-15T00:00:00.000Z")).toEqual(r);
      expect(await rs.get("key_2", "resp_a", "2026-11-15T00:00:00.000Z")).toBeUndefined();
      expect(await rs.get("key_1", "resp_a", "2026-12-01T00:00:00.000Z")).toBeUndefined();
      expect(await rs.get("key_1", "resp_missing", "2026-11-15T00:00:00.000Z")).toBeUndefined();
    });

    test("delete removes only the key's own; purge removes only the expired", async () => {
      const rs = responseStoreOf(store);
      await rs.put(stored("resp_b", "key_1", "2026-11-10T00:00:00.000Z"));
      await rs.put(stored("resp_c", "key_1", "2027-01-01T00:00:00.000Z"));
      expect(await rs.delete("key_2", "resp_c")).toBe(false);
      expect(await rs.delete("key_1", "resp_c")).toBe(true);
      expect(await rs.delete("key_1", "resp_c")).toBe(false);
      expect(await rs.purgeExpired("2026-11-20T00:00:00.000Z")).toBe(1);
      expect(await rs.get("key_1", "resp_a", "2026-11-15T00:00:00.000Z")).toBeDefined();
    });
  });
}

let sqlite: SqliteStore;
contract(
  "SQLite",
  async () => {
    sqlite = new SqliteStore(":memory:");
    return sqlite;
  },
  async () => sqlite.close(),
);

describe.skipIf(!postgresUp)("PostgreSQL", () => {
  let pg: PostgresStore;
  let drop: () => Promise<void>;
  contract(
    "PostgreSQL",
    async () => {
      const db = await freshDatabase();
      drop = db.drop;
      pg = await PostgresStore.open(db.url);
      return pg;
    },
    async () => {
      await pg.close();
      await drop();
    },
  );
});
