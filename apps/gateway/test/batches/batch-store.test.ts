/**
 * The batch store on both databases: one holder per job (two workers racing for it), a lease
 * that runs out passes the job on, a line in flight is found as an orphan, ended jobs are purged.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { PostgresStore } from "../../src/storage/postgres-store";
import { SqliteStore } from "../../src/storage/sqlite-store";
import type { Store } from "../../src/storage/store";
import { freshDatabase, postgresUp } from "../scaleout/servers";

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

const T0 = Date.parse("2026-11-01T00:00:00Z");
const iso = (ms: number) => new Date(T0 + ms).toISOString();

async function contract(open: () => Promise<Store>) {
  const store = await open();
  cleanups.unshift(() => store.close());
  const s = store.batchStore();
  const job = {
    id: `batch_${Math.random().toString(16).slice(2)}`,
    key_id: "k1",
    kind: "openai" as const,
    state: "active" as const,
    object: { status: "in_progress" },
    created_at: iso(0),
    expires_at: iso(86_400_000),
  };
  await s.createJob(
    job,
    [1, 2, 3].map((n) => ({
      n,
      custom_id: `c${n}`,
      request: "{}",
      state: "pending" as const,
      result: null,
      failed: false,
    })),
  );

  // Eight workers race for it: exactly one holds it.
  const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => s.claim(`w${i}`, iso(1000), iso(31_000))));
  const holders = claims.filter((c) => c !== undefined);
  expect(holders).toHaveLength(1);
  expect(holders[0]!.id).toBe(job.id);
  const owner = `w${claims.findIndex((c) => c !== undefined)}`;
  // Taken lines come in order, each once.
  expect((await s.takeLine(job.id))?.n).toBe(1);
  await s.finishLine(job.id, 1, "done", '{"ok":1}', false);
  expect((await s.takeLine(job.id))?.n).toBe(2);
  // Before the lease runs out nobody else gets it; after, another worker does, and finds line 2 in flight.
  expect(await s.claim("other", iso(20_000), iso(50_000))).toBeUndefined();
  expect(await s.renew(job.id, owner, iso(40_000))).toBe(true);
  expect(await s.claim("other", iso(39_000), iso(70_000))).toBeUndefined();
  expect((await s.claim("other", iso(41_000), iso(71_000)))?.id).toBe(job.id);
  expect(await s.renew(job.id, owner, iso(80_000))).toBe(false);
  expect((await s.orphans(job.id)).map((l) => l.n)).toEqual([2]);
  // Given back: claimable at once.
  await s.release(job.id, "other");
  expect((await s.claim("third", iso(42_000), iso(72_000)))?.id).toBe(job.id);
  await s.closePending(job.id, "cancelled");
  expect((await s.lines(job.id)).map((l) => l.state)).toEqual(["done", "sent", "cancelled"]);
  await s.saveJob({ ...job, state: "done" });
  expect(await s.claim("fourth", iso(500_000), iso(600_000))).toBeUndefined();
  // Purged once older than the retention.
  expect(await s.purgeBefore(iso(0))).toBe(0);
  expect(await s.purgeBefore(iso(1))).toBe(1);
  expect(await s.getJob("k1", job.id)).toBeUndefined();
  expect(await s.lines(job.id)).toEqual([]);
}

describe("batch store", () => {
  test("SQLite", async () => {
    await contract(async () => new SqliteStore(":memory:"));
  });

  test.skipIf(!postgresUp)("PostgreSQL", async () => {
    const db = await freshDatabase();
    cleanups.push(db.drop);
    await contract(() => PostgresStore.open(db.url));
  });
});
