/**
 * The batch store on both databases: one holder per job (two workers racing for it), a lease
 * that runs out passes the job on, a line in flight is found as an orphan, ended jobs are purged;
 * lines grouped for upstream batch APIs (the upstream id kept, answers stored and taken once, a
 * refused group back to the queue, a parked job), and a transaction that fails leaves nothing.
 */
import { type BatchStore, batchStoreOf } from "../../src/storage/batch-store";
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
  const s = batchStoreOf(store);
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
  await upstreamGroups(s);
}

/** Lines sent to upstream batch APIs: routed once, one group's answers replayed, another's sent back to the queue. */
async function upstreamGroups(s: BatchStore) {
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
    [1, 2, 3, 4].map((n) => ({
      n,
      custom_id: `c${n}`,
      request: "{}",
      state: "pending" as const,
      result: null,
      failed: false,
    })),
  );
  expect((await s.claim("w", iso(1000), iso(31_000)))?.routed).toBe(false);
  // A failing statement inside the transaction (a group twice) leaves nothing of it behind.
  const twice = [
    { grp: 0, vendor: "beta", endpoint: "/v1/chat/completions" },
    { grp: 0, vendor: "alpha", endpoint: "/v1/messages" },
  ];
  expect(await s.route(job.id, twice, [{ n: 1, grp: 0 }]).catch(() => "refused")).toBe("refused");
  expect(await s.groups(job.id)).toEqual([]);
  expect((await s.lines(job.id)).map((l) => l.grp)).toEqual([null, null, null, null]);
  await s.route(
    job.id,
    [
      { grp: 0, vendor: "beta", endpoint: "/v1/chat/completions" },
      { grp: 1, vendor: "alpha", endpoint: "/v1/messages" },
    ],
    [
      { n: 1, grp: 0 },
      { n: 2, grp: 0 },
      { n: 3, grp: 1 },
    ],
  );
  expect((await s.getJob("k1", job.id))?.routed).toBe(true);
  expect((await s.groupLines(job.id, 0)).map((l) => l.n)).toEqual([1, 2]);
  // The queue takes only the line in no group.
  expect((await s.takeLine(job.id))?.n).toBe(4);
  expect(await s.takeLine(job.id)).toBeUndefined();
  await s.submitted(job.id, 0, "up_1");
  await s.submitted(job.id, 0, "up_2"); // sent once: a second id is not taken
  expect((await s.groups(job.id)).map((g) => [g.state, g.upstream_id])).toEqual([
    ["submitted", "up_1"],
    ["new", null],
  ]);
  // Nothing answered yet; the group ends with line 1 answered, line 2 never run.
  expect(await s.takeLine(job.id, true)).toBeUndefined();
  await s.groupEnded(job.id, 0, new Map([[1, '{"status":200,"body":{}}']]), "expired");
  const answered = await s.takeLine(job.id, true);
  expect([answered?.n, answered?.state, answered?.upstream_result]).toEqual([1, "sent", '{"status":200,"body":{}}']);
  expect(await s.takeLine(job.id, true)).toBeUndefined();
  expect((await s.lines(job.id)).map((l) => l.state)).toEqual(["sent", "expired", "pending", "sent"]);
  // The other upstream refused: its line goes to the queue.
  await s.requeue(job.id, 1);
  expect((await s.takeLine(job.id))?.n).toBe(3);
  expect(await s.openLines(job.id)).toBe(3);
  // Parked until a time: nobody takes it before; woken: at once.
  await s.park(job.id, "w", iso(60_000));
  expect(await s.claim("x", iso(40_000), iso(70_000))).toBeUndefined();
  await s.wake(job.id);
  expect((await s.claim("x", iso(40_000), iso(70_000)))?.id).toBe(job.id);
  await s.saveJob({ ...job, state: "done" });
  expect(await s.purgeBefore(iso(1))).toBe(1);
  expect(await s.groups(job.id)).toEqual([]);
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
