import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { admin, chat, type Instance, newKey, removeDir, startInstance, waitFor } from "../scaleout/cluster";
import { freshDatabase, freshPrefix, postgresUp, redisUp, TEST_REDIS_URL } from "../scaleout/servers";

/**
 * The dashboard's feeds read the shared store: with two instances on one PostgreSQL, either
 * instance's request log and daily usage hold the requests both served.
 */
describe.skipIf(!postgresUp || !redisUp)("dashboard feeds over two instances", () => {
  let a: Instance;
  let b: Instance;
  const cleanups: (() => Promise<void> | void)[] = [];
  const served: { id: string; on: string }[] = [];

  beforeAll(async () => {
    const db = await freshDatabase();
    const prefix = freshPrefix();
    cleanups.push(db.drop, prefix.drop);
    const env = {
      TURNPIKE_DATABASE_URL: db.url,
      TURNPIKE_REDIS_URL: TEST_REDIS_URL,
      TURNPIKE_REDIS_PREFIX: prefix.prefix,
    };
    [a, b] = await Promise.all([startInstance(env), startInstance(env)]);
    cleanups.unshift(async () => {
      await Promise.all([a.stop(), b.stop()]);
      removeDir(a.journalDir);
      removeDir(b.journalDir);
    });
    const { id, key } = await newKey(a.url, {});
    await waitFor(
      "the key on b",
      async () => (await admin(b.url, "GET", `/admin/keys/${id}`)).status === 200 || undefined,
    );
    for (const [i, on] of [a, a, b].entries()) {
      const r = await chat(on.url, key, `[sim text="reply ${i}"]`);
      expect(r.status).toBe(200);
      served.push({ id: r.id!, on: on === a ? "a" : "b" });
    }
  }, 60_000);
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  test("each instance's request log lists the requests of both, newest first", async () => {
    for (const i of [a, b]) {
      // Each instance ships its journal to PostgreSQL in batches: the other's records arrive shortly.
      const lines = await waitFor("all three requests", async () => {
        const data = ((await (await admin(i.url, "GET", "/admin/requests")).json()) as any).data as any[];
        return data.length === 3 ? data : undefined;
      });
      expect(lines.map((l) => l.request_id).sort()).toEqual(served.map((s) => s.id).sort());
      const times = lines.map((l) => l.created_at);
      expect([...times].sort().reverse()).toEqual(times);
      expect(lines.every((l) => l.model === "beta-5" && l.status === 200)).toBe(true);
    }
  });

  test("daily usage from PostgreSQL: the three requests, tokens and cost as the ledger has them", async () => {
    const records = ((await (await admin(b.url, "GET", "/admin/usage")).json()) as any).data as any[];
    expect(records).toHaveLength(3);
    // The days the records fell on (one, unless the test ran across midnight UTC).
    const days = [...new Set(records.map((r) => r.created_at.slice(0, 10) as string))].sort();
    const body = (await (
      await admin(b.url, "GET", `/admin/usage/daily?by=model&since=${days[0]}&until=${days.at(-1)}`)
    ).json()) as any;
    expect(body.days).toEqual(days);
    expect(body.series).toHaveLength(1);
    const [s] = body.series;
    const sum = (xs: number[]) => xs.reduce((n, x) => n + x, 0);
    expect(s.id).toBe("beta-5");
    expect(sum(s.requests)).toBe(3);
    expect(sum(s.tokens)).toBe(records.reduce((n, r) => n + r.input_tokens + r.output_tokens, 0));
    expect(sum(s.cost_usd)).toBeCloseTo(
      records.reduce((n, r) => n + r.cost_usd, 0),
      9,
    );
  });
});
