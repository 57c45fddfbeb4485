import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { admin, type Instance, newKey, removeDir, spendACent as spend, startInstance, waitFor } from "./cluster";
import { freshDatabase, freshPrefix, postgresUp, redisUp, TEST_REDIS_URL } from "./servers";
import { TcpProxy } from "./tcp-proxy";

async function keyOnBoth(
  a: Instance,
  b: Instance,
  fields: Record<string, unknown>,
): Promise<{ id: string; key: string }> {
  const k = await newKey(a.url, fields);
  await waitFor(
    "the key on b",
    async () => (await admin(b.url, "GET", `/admin/keys/${k.id}`)).status === 200 || undefined,
  );
  return k;
}

describe.skipIf(!postgresUp || !redisUp)("budgets on two instances", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  let a: Instance;
  let b: Instance;
  let sql: SQL;
  let redis: TcpProxy;
  beforeAll(async () => {
    const db = await freshDatabase();
    const prefix = freshPrefix();
    cleanups.push(db.drop, prefix.drop);
    const target = new URL(TEST_REDIS_URL);
    // Redis through a proxy the test cuts: it goes down for these two instances only.
    redis = new TcpProxy({ host: target.hostname, port: Number(target.port || 6379) }).start();
    cleanups.unshift(() => redis.stop());
    const env = {
      TURNPIKE_DATABASE_URL: db.url,
      TURNPIKE_REDIS_URL: `redis://127.0.0.1:${redis.port}`,
      TURNPIKE_REDIS_PREFIX: prefix.prefix,
      TURNPIKE_REDIS_FAIL: "open",
    };
    [a, b] = await Promise.all([startInstance(env), startInstance(env)]);
    cleanups.unshift(async () => {
      await Promise.all([a.stop(), b.stop()]);
      removeDir(a.journalDir);
      removeDir(b.journalDir);
    });
    sql = new SQL(db.url, { max: 2 });
    cleanups.unshift(() => sql.close());
  });
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  const ledger = async (keyId: string) => {
    const [row] =
      await sql`SELECT COUNT(*)::int AS n, COALESCE(SUM(cost_usd), 0)::float8 AS usd, COALESCE(MAX(cost_usd), 0)::float8 AS most FROM usage WHERE key_id = ${keyId}`;
    return row as { n: number; usd: number; most: number };
  };

  test("80 requests at once over both on a $0.05 budget: admitted while their worst cases fit, never overspent", async () => {
    const budget = 0.05;
    const k = await keyOnBoth(a, b, { budget_usd: budget });
    const results = await Promise.all(Array.from({ length: 80 }, (_, i) => spend(i % 2 ? a.url : b.url, k.key)));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === "spent");
    expect(ok.length + refused.length).toBe(80);
    // Every admitted request's record is in the ledger: then the spend is final.
    const spent = await waitFor("the records of the admitted requests", async () => {
      const l = await ledger(k.id);
      return l.n === ok.length ? l : undefined;
    });
    // The worst case each held: its ~105 characters as tokens at $1.25 and 1,600 out at $6.25 per million.
    const reservation = 0.01014;
    expect(spent.most).toBeGreaterThan(0.0099);
    expect(spent.most).toBeLessThan(reservation);
    // Admitted while each worst case fit what was left (4 × $0.01014 ≤ $0.05 < 5 ×), so never overspent.
    expect(spent.usd).toBeLessThanOrEqual(budget);
    expect(ok.length).toBe(4);
    console.log(
      `budget $${budget}, 80 requests over 2 instances: ${ok.length} admitted, spent $${spent.usd.toFixed(6)} (overspend $${Math.max(0, spent.usd - budget).toFixed(6)}, one reservation ≈ $${reservation})`,
    );
    // Spent: refused on both from now on.
    for (const i of [a, b]) expect((await spend(i.url, k.key)).status).toBe("spent");
  }, 60_000);

  // Issue 41, item 11: one embeddings call of 100 inputs once spent 60× a $0.0001 budget.
  test("an embeddings call whose worst case does not fit the budget is refused on both, before any spend; one that fits is billed within it", async () => {
    const k = await keyOnBoth(a, b, { budget_usd: 0.0001 });
    const embed = (base: string, input: string | string[]) =>
      fetch(`${base}/v1/embeddings`, {
        method: "POST",
        headers: { authorization: `Bearer ${k.key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gamma-embedding-1", input }),
      });
    const hundred = Array.from({ length: 100 }, (_, i) => `input ${i}: ${"some words to embed ".repeat(20)}`);
    for (const i of [a, b]) {
      const res = await embed(i.url, hundred);
      expect(res.status).toBe(429);
      const error = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe("insufficient_quota");
      expect(error.message).toContain("has $0.0001 left");
      expect(error.message).toContain("less than this request's worst case of $0.006");
    }
    expect((await ledger(k.id)).n).toBe(0);
    const fits = await embed(a.url, ["one short text", "another"]);
    expect(fits.status).toBe(200);
    const spent = await waitFor("its record", async () => {
      const l = await ledger(k.id);
      return l.n === 1 ? l : undefined;
    });
    expect(spent.usd).toBeGreaterThan(0);
    expect(spent.usd).toBeLessThanOrEqual(0.0001);
  }, 60_000);

  test("a spent budget stays refused on both instances while Redis is down, and after", async () => {
    // Room for one request's worst case ($0.01014); its cent leaves too little for another.
    const k = await keyOnBoth(a, b, { budget_usd: 0.0102 });
    // Spent on a by one request (about a cent); b learns it from Redis.
    expect((await spend(a.url, k.key)).status).toBe(200);
    for (const i of [a, b])
      await waitFor(
        "the budget refused on each instance",
        async () => (await spend(i.url, k.key)).status === "spent" || undefined,
      );
    // A second key spent on a alone, never asked of b before the outage: b has it from the ledger's totals.
    const k2 = await keyOnBoth(a, b, { budget_usd: 0.0102 });
    expect((await spend(a.url, k2.key)).status).toBe(200);
    await waitFor("its record in the ledger", async () => (await ledger(k2.id)).n === 1 || undefined);

    redis.cut();
    for (const i of [a, b]) {
      await waitFor("Redis seen down", async () => {
        const r = await fetch(i.url + "/ready");
        return ((await r.json()) as { limits: { reachable: boolean } }).limits.reachable === false || undefined; // /ready's body
      });
    }
    for (const i of [a, b]) {
      const during = await Promise.all([1, 2, 3].map(() => spend(i.url, k.key)));
      expect(during.map((r) => r.status)).toEqual(["spent", "spent", "spent"]);
      expect((await spend(i.url, k2.key)).status).toBe("spent");
    }
    const [{ n }] = await sql`SELECT COUNT(*)::int AS n FROM usage WHERE key_id IN (${k.id}, ${k2.id})`;
    expect(n).toBe(2);

    redis.restore();
    for (const i of [a, b])
      await waitFor("Redis back", async () => (await fetch(i.url + "/ready")).status === 200 || undefined);
    for (const i of [a, b]) expect((await spend(i.url, k.key)).status).toBe("spent");
  }, 60_000);
});
