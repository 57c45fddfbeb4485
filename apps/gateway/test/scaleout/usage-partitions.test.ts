import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { MIGRATIONS } from "../../src/storage/migrations";
import { migratePostgres } from "../../src/storage/postgres-migrate";
import { PostgresStore } from "../../src/storage/postgres-store";
import type { UsageRecord } from "../../src/storage/store";
import { monthOf } from "../../src/storage/usage-partitions";
import { freshDatabase, postgresUp } from "./servers";

/**
 * PostgreSQL's ledger partitioned by month (migration 21, storage/usage-partitions.ts): a table
 * filled at version 17 across three months (rolled up by migration 18) is converted with every row kept; reads, replays and
 * the exactly-once rule work on the partitioned table; retention drops whole months.
 */

const MONTHS = ["2026-07", "2026-08", "2026-09"];

function record(i: number): UsageRecord {
  const month = MONTHS[i % 3]!;
  const day = String(1 + (i % 28)).padStart(2, "0");
  const sec = String(i % 60).padStart(2, "0");
  return {
    request_id: `req-${i}`,
    key_id: `key_${i % 4}`,
    model: i % 2 ? "beta-5" : "delta-mini",
    endpoint: "chat",
    stream: i % 2 === 0,
    input_tokens: 100 + i,
    output_tokens: 10 + (i % 7),
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    cache_write_1h_tokens: 0,
    reasoning_tokens: 0,
    cost_usd: (i % 13) / 1000,
    status: i % 9 === 0 ? 429 : 200,
    upstream_status: 200,
    latency_ms: 40 + (i % 500),
    aborted: false,
    estimated: false,
    deployment: null,
    created_at: `${month}-${day}T10:00:${sec}.000Z`,
  };
}

const ROWS = Array.from({ length: 3000 }, (_, i) => record(i));
/** Every row's content, in one text: equal before and after the conversion means no row changed. */
const DIGEST =
  "SELECT count(*)::int AS n, md5(string_agg(u::text, '|' ORDER BY request_id)) AS digest FROM (SELECT request_id, key_id, model, endpoint, stream, input_tokens, output_tokens, cost_usd, status, latency_ms, created_at FROM usage) u";

describe.skipIf(!postgresUp)("usage partitioned by month (PostgreSQL)", () => {
  let drop: () => Promise<void>;
  let url: string;
  let store: PostgresStore;
  let before: { n: number; digest: string };

  beforeAll(async () => {
    const db = await freshDatabase();
    drop = db.drop;
    url = db.url;
    const sql = new SQL(url, { max: 1 });
    await migratePostgres(
      sql,
      MIGRATIONS.filter((m) => m.version <= 17),
    );
    const cols = Object.keys(ROWS[0]!);
    for (let i = 0; i < ROWS.length; i += 500)
      await sql`INSERT INTO usage ${sql(ROWS.slice(i, i + 500) as unknown as Record<string, unknown>[], ...cols)}`; // plain records
    [before] = await sql.unsafe(DIGEST);
    await sql.close();
    store = await PostgresStore.open(url, { max: 2 });
  });
  afterAll(async () => {
    await store?.close();
    await drop?.();
  });

  const partitions = async () =>
    (
      (await store.sql.unsafe(
        "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'usage'::regclass ORDER BY 1",
      )) as { name: string }[]
    ).map((r) => r.name);

  test("the migration keeps every row, each in its month's partition, and makes the months ahead", async () => {
    const [after] = await store.sql.unsafe(DIGEST);
    expect(after).toEqual(before);
    expect(before.n).toBe(3000);
    const [kind] = await store.sql.unsafe(
      "SELECT partstrat FROM pg_partitioned_table WHERE partrelid = 'usage'::regclass",
    );
    expect(kind.partstrat).toBe("r");
    const ahead = [0, 1, 2].map((i) => `usage_${monthOf(Date.now(), i).replace("-", "_")}`);
    expect(await partitions()).toEqual(
      [...new Set(["usage_2026_07", "usage_2026_08", "usage_2026_09", ...ahead, "usage_default"])].sort(),
    );
    for (const m of MONTHS) {
      const [row] = await store.sql.unsafe(`SELECT count(*)::int AS n FROM usage_${m.replace("-", "_")}`);
      expect(row.n).toBe(1000);
    }
    const [rest] = await store.sql.unsafe("SELECT count(*)::int AS n FROM usage_default");
    expect(rest.n).toBe(0);
  });

  test("reads work and prune: a month's query touches its partition only", async () => {
    const page = await store.queryUsage({
      since: "2026-08-01T00:00:00.000Z",
      until: "2026-09-01T00:00:00.000Z",
      limit: 5000,
    });
    expect(page.length).toBe(1000);
    expect(page.every((r) => r.created_at.startsWith("2026-08"))).toBe(true);
    const [byKey] = await store.aggregateUsage({ key_id: "key_1", since: "2026-07-01T00:00:00.000Z" }, ["key"]);
    const want = ROWS.filter((r) => r.key_id === "key_1");
    expect(byKey!.requests).toBe(want.length);
    expect(byKey!.input_tokens).toBe(want.reduce((a, r) => a + r.input_tokens, 0));
    const plan = (
      (await store.sql.unsafe(
        "EXPLAIN SELECT * FROM usage WHERE created_at >= '2026-08-01T00:00:00.000Z' AND created_at < '2026-09-01T00:00:00.000Z'",
      )) as { "QUERY PLAN": string }[]
    )
      .map((r) => r["QUERY PLAN"])
      .join("\n");
    expect(plan).toContain("usage_2026_08");
    expect(plan).not.toContain("usage_2026_07");
    expect(plan).not.toContain("usage_2026_09");
  });

  test("a replayed record and a second row of the same request at another time are both ignored", async () => {
    const fresh = { ...record(9001), created_at: "2026-09-15T12:00:00.000Z", request_id: "req-new" };
    await store.insertUsage([fresh]);
    await store.insertUsage([fresh]);
    // The row a survivor reaped for this request, stamped at its admission: the request is billed once.
    await store.insertUsage([{ ...fresh, created_at: "2026-09-15T11:59:00.000Z", estimated: true }]);
    // An id already converted from before the migration, at another time: still once.
    await store.insertUsage([{ ...record(5), created_at: "2026-09-30T00:00:00.000Z" }]);
    const rows = await store.sql.unsafe(
      "SELECT request_id, created_at FROM usage WHERE request_id IN ('req-new', 'req-5') ORDER BY 1",
    );
    expect(rows).toEqual([
      { request_id: "req-5", created_at: record(5).created_at },
      { request_id: "req-new", created_at: "2026-09-15T12:00:00.000Z" },
    ]);
    const [day] = await store.aggregateUsage(
      { since: "2026-09-15T00:00:00.000Z", until: "2026-09-16T00:00:00.000Z", key_id: fresh.key_id },
      ["key"],
    );
    expect(day!.requests).toBe(
      ROWS.filter((r) => r.key_id === fresh.key_id && r.created_at.startsWith("2026-09-15")).length + 1,
    );
  });

  test("retention drops the months past the cut whole and deletes only in the month it cuts", async () => {
    const cut = "2026-09-10T00:00:00.000Z";
    const gone = ROWS.filter((r) => r.created_at < cut).length;
    const sliced = ROWS.filter((r) => r.created_at.startsWith("2026-09") && r.created_at < cut).length;
    let slices = 0;
    expect(await store.pruneUsage(cut, async () => void slices++)).toBe(gone);
    // Two whole months dropped (2,000 rows), no slice needed for them; a few hundred deleted from September.
    expect(sliced).toBeLessThan(1000);
    expect(slices).toBe(0);
    const names = await partitions();
    expect(names).not.toContain("usage_2026_07");
    expect(names).not.toContain("usage_2026_08");
    expect(names).toContain("usage_2026_09");
    expect(await store.queryUsage({ until: cut, limit: 10 })).toEqual([]);
    const [left] = await store.sql.unsafe("SELECT count(*)::int AS n FROM usage");
    expect(left.n).toBe(3000 + 1 - gone);
    // The rollups keep the dropped months.
    const [july] = await store.aggregateUsage(
      { since: "2026-07-01T00:00:00.000Z", until: "2026-08-01T00:00:00.000Z" },
      [],
    );
    expect(july!.requests).toBe(1000);
    expect(await store.pruneUsage(cut)).toBe(0);
  });
});
