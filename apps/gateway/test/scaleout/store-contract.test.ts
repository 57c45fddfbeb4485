import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { PostgresStore } from "../../src/storage/postgres-store";
import { migratePostgres } from "../../src/storage/postgres-migrate";
import { MIGRATIONS, type Migration } from "../../src/storage/migrations";
import { SqliteStore } from "../../src/storage/sqlite-store";
import { teamSpendId } from "../../src/storage/spend-ids";
import type { KeyRecord, Store, UsageRecord } from "../../src/storage/store";
import { freshDatabase, postgresUp } from "./servers";

const key = (id: string, over: Partial<KeyRecord> = {}): KeyRecord => ({
  id,
  name: `name ${id}`,
  hash: `hash-${id}`,
  prefix: "sk-tp-abcd",
  models: ["beta-*", "gamma-3-pro"],
  rpm: 10,
  tpm: null,
  model_limits: { "gamma-3-pro": { rpm: 2, tpm: null } },
  budget_usd: 12.5,
  expires_at: null,
  prev_hash: null,
  prev_valid_until: null,
  created_at: `2026-11-0${id.length % 9}T00:00:00.000Z`,
  updated_at: "2026-11-01T00:00:00.000Z",
  revoked_at: null,
  ...over,
});

const usage = (request_id: string, over: Partial<UsageRecord> = {}): UsageRecord => ({
  request_id,
  key_id: "key_a",
  model: "beta-5",
  endpoint: "chat",
  stream: false,
  input_tokens: 100,
  output_tokens: 20,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  reasoning_tokens: 3,
  cost_usd: 0.25,
  status: 200,
  upstream_status: 200,
  latency_ms: 12.5,
  aborted: false,
  estimated: false,
  created_at: "2026-11-02T10:00:00.000Z",
  ...over,
});

/** The one contract every store keeps; run against each back end below. */
function contract(name: string, open: () => Promise<Store>, close: () => Promise<void>) {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store.close();
      await close();
    });

    test("keys: created, listed oldest first with their JSON fields, updated in place", async () => {
      await store.createKey(key("key_b", { created_at: "2026-11-03T00:00:00.000Z" }));
      await store.createKey(key("key_a", { created_at: "2026-11-01T00:00:00.000Z", models: null, model_limits: null }));
      let keys = await store.listKeys();
      expect(keys.map((k) => k.id)).toEqual(["key_a", "key_b"]);
      expect(keys[1]).toEqual(key("key_b", { created_at: "2026-11-03T00:00:00.000Z" }));
      expect(keys[0]?.models).toBeNull();
      await store.updateKey({
        ...keys[1]!,
        revoked_at: "2026-11-04T00:00:00.000Z",
        rpm: null,
        tpm: 10_000_000_000,
        budget_usd: 0.5,
      });
      keys = await store.listKeys();
      // A tpm past 2^31 is kept exactly.
      expect(keys[1]).toMatchObject({
        id: "key_b",
        revoked_at: "2026-11-04T00:00:00.000Z",
        rpm: null,
        tpm: 10_000_000_000,
        budget_usd: 0.5,
      });
    });

    test("a second key with the same hash is refused", async () => {
      await expect(store.createKey(key("key_c", { hash: "hash-key_a" }))).rejects.toThrow();
    });

    test("usage: inserted once by request id, however often it is replayed", async () => {
      const rows = [
        usage("req_1"),
        // A fallback served it: the deployment, the attempts and the model asked for are kept.
        usage("req_2", {
          key_id: "key_b",
          model: "gamma-3-pro",
          endpoint: "messages",
          stream: true,
          aborted: true,
          estimated: true,
          cost_usd: 1.5,
          created_at: "2026-11-03T09:00:00.000Z",
          deployment: "gamma",
          attempts: 3,
          requested_model: "alpha-sonnet-4-6",
        }),
        usage("req_3", { created_at: "2026-10-31T23:59:59.999Z", cost_usd: 7 }),
      ];
      await store.insertUsage(rows);
      await store.insertUsage([rows[0]!, rows[1]!]);
      const all = await store.queryUsage({});
      expect(all.map((r) => r.request_id)).toEqual(["req_3", "req_1", "req_2"]);
      expect(all[2]).toEqual(rows[1]!);
      expect(all[1]).toEqual(rows[0]!);
    });

    test("usage filters: key, model, since, until (exclusive), limit", async () => {
      expect((await store.queryUsage({ key_id: "key_b" })).map((r) => r.request_id)).toEqual(["req_2"]);
      expect((await store.queryUsage({ model: "beta-5" })).map((r) => r.request_id)).toEqual(["req_3", "req_1"]);
      expect(
        (await store.queryUsage({ since: "2026-11-01T00:00:00.000Z", until: "2026-11-03T09:00:00.000Z" })).map(
          (r) => r.request_id,
        ),
      ).toEqual(["req_1"]);
      expect((await store.queryUsage({ limit: 1 })).map((r) => r.request_id)).toEqual(["req_3"]);
    });

    test("aggregates by key, model and day, and in total", async () => {
      expect(await store.aggregateUsage({}, [])).toEqual([
        {
          requests: 3,
          input_tokens: 300,
          output_tokens: 60,
          cache_read_tokens: 0,
          cache_write_tokens: 0,
          reasoning_tokens: 9,
          cost_usd: 8.75,
        },
      ]);
      const byKeyDay = await store.aggregateUsage({ since: "2026-11-01T00:00:00.000Z" }, ["key", "day"]);
      expect(byKeyDay.map((r) => [r.key_id, r.day, r.requests, r.cost_usd])).toEqual([
        ["key_a", "2026-11-02", 1, 0.25],
        ["key_b", "2026-11-03", 1, 1.5],
      ]);
      expect(await store.aggregateUsage({ key_id: "nobody" }, [])).toEqual([]);
    });

    test("spend since an instant, per key", async () => {
      const spend = await store.spendSince("2026-11-01T00:00:00.000Z");
      expect(Object.fromEntries(spend)).toEqual({ key_a: 0.25, key_b: 1.5 });
    });

    test("spend since an instant, per team: the sum of its keys', under teamSpendId", async () => {
      await store.createKey(key("key_t1", { hash: "hash-t1", team_id: "team_x" }));
      await store.createKey(key("key_t2", { hash: "hash-t2", team_id: "team_x" }));
      await store.insertUsage([
        usage("req_t1", { key_id: "key_t1", cost_usd: 0.5 }),
        usage("req_t2", { key_id: "key_t2", cost_usd: 0.125 }),
        usage("req_t3", { key_id: "key_t2", cost_usd: 0.125 }),
        usage("req_t4", { key_id: "key_t2", cost_usd: 9, created_at: "2026-10-30T00:00:00.000Z" }),
      ]);
      const spend = await store.spendSince("2026-11-01T00:00:00.000Z");
      expect(Object.fromEntries(spend)).toEqual({
        key_a: 0.25,
        key_b: 1.5,
        key_t1: 0.5,
        key_t2: 0.25,
        [teamSpendId("team_x")]: 0.75,
      });
    });

    test("a large batch lands whole", async () => {
      const many = Array.from({ length: 2500 }, (_, i) =>
        usage(`req_many_${String(i).padStart(5, "0")}`, { key_id: "key_many", created_at: "2026-11-05T00:00:00.000Z" }),
      );
      await store.insertUsage(many);
      expect((await store.aggregateUsage({ key_id: "key_many" }, []))[0]?.requests).toBe(2500);
    });
  });
}

contract(
  "SQLite",
  async () => new SqliteStore(":memory:"),
  async () => {},
);

let dropDb: (() => Promise<void>) | undefined;
describe.skipIf(!postgresUp)("PostgreSQL", () => {
  contract(
    "PostgreSQL",
    async () => {
      const db = await freshDatabase();
      dropDb = db.drop;
      return PostgresStore.open(db.url);
    },
    async () => {
      await dropDb?.();
    },
  );

  describe("migrations", () => {
    let url = "";
    let drop: () => Promise<void> = async () => {};
    beforeAll(async () => {
      const db = await freshDatabase();
      url = db.url;
      drop = db.drop;
    });
    afterAll(() => drop());

    test("eight instances starting at once apply each migration exactly once", async () => {
      const next = Math.max(...MIGRATIONS.map((m) => m.version)) + 1;
      const note: Migration = {
        version: next,
        name: "key notes",
        sqlite: "ALTER TABLE keys ADD COLUMN note TEXT;",
        postgres: "ALTER TABLE keys ADD COLUMN note TEXT;",
      };
      const pools = Array.from({ length: 8 }, () => new SQL(url, { max: 2 }));
      try {
        const applied = await Promise.all(pools.map((p) => migratePostgres(p, [...MIGRATIONS, note])));
        expect(applied.flat().sort((a, b) => a - b)).toEqual([...MIGRATIONS.map((m) => m.version), next]);
        const versions = await pools[0]!`SELECT version, name FROM schema_version ORDER BY version`;
        expect([...versions]).toEqual([
          ...MIGRATIONS.map((m) => ({ version: m.version, name: m.name })),
          { version: next, name: "key notes" },
        ]);
        expect(await migratePostgres(pools[0]!, [...MIGRATIONS, note])).toEqual([]);
      } finally {
        await Promise.all(pools.map((p) => p.close()));
      }
    });

    test("a migration that fails leaves no trace and no version row", async () => {
      const sql = new SQL(url, { max: 1 });
      try {
        // On top of the shipped list and the "key notes" entry the test above applied.
        const applied = Math.max(...MIGRATIONS.map((m) => m.version)) + 1;
        const note: Migration = { version: applied, name: "key notes", sqlite: "", postgres: "" };
        const broken: Migration = {
          version: applied + 1,
          name: "broken",
          sqlite: "",
          postgres: "CREATE TABLE half (a INTEGER); INSERT INTO missing VALUES (1);",
        };
        await expect(migratePostgres(sql, [...MIGRATIONS, note, broken])).rejects.toThrow();
        const [half] = await sql`SELECT to_regclass('half') AS t`;
        expect(half.t).toBeNull();
        expect((await sql`SELECT MAX(version)::int AS v FROM schema_version`)[0].v).toBe(applied);
      } finally {
        await sql.close();
      }
    });
  });
});
