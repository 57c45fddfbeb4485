import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { admin, chat, type Instance, newKey, removeDir, spendACent, startInstance, waitFor } from "./cluster";
import { freshDatabase, freshPrefix, postgresUp, redisUp, TEST_REDIS_URL } from "./servers";

/** Two gateway processes on one PostgreSQL and one Redis behave as one gateway. */
describe.skipIf(!postgresUp || !redisUp)("two instances on one PostgreSQL and Redis", () => {
  let a: Instance;
  let b: Instance;
  let sql: SQL;
  const cleanups: (() => Promise<void> | void)[] = [];

  beforeAll(async () => {
    const db = await freshDatabase();
    const prefix = freshPrefix();
    cleanups.push(db.drop, prefix.drop);
    // The tests name their client address (X-Forwarded-For from loopback) to keep failed-auth counters apart.
    // Keys are re-read only every ten minutes: a change seen on the other instance during a test
    // came by its Redis notice, whatever the machine's load (no clock is read to show it).
    const env = {
      TURNPIKE_DATABASE_URL: db.url,
      TURNPIKE_REDIS_URL: TEST_REDIS_URL,
      TURNPIKE_REDIS_PREFIX: prefix.prefix,
      TURNPIKE_TRUSTED_PROXIES: "127.0.0.1",
      TURNPIKE_KEY_CACHE_TTL_MS: "600000",
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

  test("both start on the shared back ends, say so, and made one first key between them", async () => {
    for (const i of [a, b]) {
      expect(i.output()).toContain("Back ends: store PostgreSQL at 127.0.0.1:5432/turnpike_test_");
      expect(i.output()).toContain("in Redis at 127.0.0.1:6379 (TURNPIKE_REDIS_FAIL=open)");
      const ready = await fetch(i.url + "/ready");
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({
        status: "ready",
        store: { kind: "postgres", reachable: true },
        limits: { kind: "redis", reachable: true },
      });
    }
    expect([a, b].filter((i) => i.output().includes("First start: created API key"))).toHaveLength(1);
    const [{ n }] = await sql`SELECT COUNT(*)::int AS n FROM keys`;
    expect(n).toBe(1);
  });

  test("rpm 10, 40 concurrent requests over both: exactly 10 × 200 and 30 × 429, with the usual headers", async () => {
    const { key } = await newKey(a.url, { rpm: 10 });
    await waitFor("the key on b", async () => (await chat(b.url, key, "warm")).status === 200 || undefined);
    // The warm-up took one: start from a full bucket.
    const k2 = await newKey(a.url, { rpm: 10 });
    await waitFor(
      "the second key on b",
      async () => (await admin(b.url, "GET", `/admin/keys/${k2.id}`)).status === 200 || undefined,
    );
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => chat(i % 2 ? a.url : b.url, k2.key)));
    const ok = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    expect(ok).toHaveLength(10);
    expect(limited).toHaveLength(30);
    // Both instances admitted some and refused some: one bucket, not two.
    for (const r of limited) {
      expect(r.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(r.headers.get("x-ratelimit-limit-requests")).toBe("10");
      expect(r.headers.get("x-ratelimit-remaining-requests")).toBe("0");
      expect(JSON.parse(r.body).error.code).toBe("rate_limit_exceeded");
    }
    expect(ok.map((r) => Number(r.headers.get("x-ratelimit-remaining-requests"))).sort((x, y) => x - y)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
  });

  test("tpm shared: tokens used through one instance are gone on the other", async () => {
    const { id, key } = await newKey(a.url, { tpm: 400 });
    await waitFor(
      "the key on b",
      async () => (await admin(b.url, "GET", `/admin/keys/${id}`)).status === 200 || undefined,
    );
    // Each call is admitted on its estimate and settled with its real input + output.
    let first: Awaited<ReturnType<typeof chat>> | undefined;
    for (let i = 0; i < 20; i++) {
      first = await chat(a.url, key, "tell me a long story ".repeat(10));
      if (first.status === 429) break;
    }
    expect(first?.status).toBe(429);
    const other = await chat(b.url, key, "hi");
    expect(other.status).toBe(429);
    expect(JSON.parse(other.body).error.type).toBe("tokens");
  });

  test("revoke, rotate and patch on one instance take effect on the other by its notice, long before any re-read", async () => {
    const { id, key } = await newKey(a.url, {});
    await waitFor("the key on b", async () => (await chat(b.url, key)).status === 200 || undefined);

    expect((await admin(a.url, "PATCH", `/admin/keys/${id}`, { models: ["gamma-*"] })).status).toBe(200);
    await waitFor("the patch on b", async () => (await chat(b.url, key)).status === 404 || undefined, 10_000, 10);

    const rotated = (await (await admin(a.url, "POST", `/admin/keys/${id}/rotate`, { grace_seconds: 0 })).json()) as {
      key: string;
    };
    await waitFor("the rotation on b", async () => (await chat(b.url, key)).status === 401 || undefined, 10_000, 10);
    await admin(a.url, "PATCH", `/admin/keys/${id}`, { models: null });
    await waitFor(
      "the new secret on b",
      async () => (await chat(b.url, rotated.key)).status === 200 || undefined,
      10_000,
      10,
    );

    expect((await admin(a.url, "DELETE", `/admin/keys/${id}`)).status).toBe(200);
    const refused = await waitFor(
      "the revocation on b",
      async () => {
        const r = await chat(b.url, rotated.key);
        return r.status === 401 ? r : undefined;
      },
      10_000,
      10,
    );
    expect(JSON.parse(refused.body).error.message).toContain("revoked");
  });

  test("one ledger: both instances' records, one each", async () => {
    const { id, key } = await newKey(a.url, {});
    await waitFor(
      "the key on b",
      async () => (await admin(b.url, "GET", `/admin/keys/${id}`)).status === 200 || undefined,
    );
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => chat(i % 3 ? a.url : b.url, key)));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const ids = results.map((r) => r.id ?? "(no request id)").sort();
    // Either instance's admin API reads the one ledger.
    const listed = await waitFor("all records", async () => {
      const r = (await (await admin(b.url, "GET", `/admin/usage?key_id=${id}&limit=100`)).json()) as {
        data: { request_id: string }[];
      };
      return r.data.length === 30 ? r.data : undefined;
    });
    expect(listed.map((r) => r.request_id).sort()).toEqual(ids);
    const agg = (await (await admin(a.url, "GET", `/admin/usage?key_id=${id}&group_by=key`)).json()) as {
      data: { requests: number }[];
    };
    expect(agg.data[0]?.requests).toBe(30);
  });

  test("budgets shared: spend through one instance exhausts the key on the other", async () => {
    // Room for one request's worst case ($0.01014, spendACent); the cent it spends leaves too little for another.
    const { id, key } = await newKey(a.url, { budget_usd: 0.0102 });
    await waitFor(
      "the key on b",
      async () => (await admin(b.url, "GET", `/admin/keys/${id}`)).status === 200 || undefined,
    );
    expect((await spendACent(a.url, key)).status).toBe(200);
    const spent = await waitFor("the spend on a", async () => {
      const usd = ((await (await admin(a.url, "GET", `/admin/keys/${id}`)).json()) as { spent_this_month_usd: number })
        .spent_this_month_usd;
      return usd > 0.0099 ? usd : undefined;
    });
    expect(spent).toBeGreaterThan(0.0099);
    // Spend reaches Redis in batches every 50 ms; the other instance refuses as soon as it is there.
    const refused = await waitFor(
      "the refusal on b",
      async () => {
        const r = await chat(b.url, key, "hello", 1600);
        return r.status === 429 ? r : undefined;
      },
      10_000,
      10,
    );
    expect(JSON.parse(refused.body).error.code).toBe("insufficient_quota");
    // And then the two instances agree on the spend (B may have admitted a call before A's spend arrived).
    const spendOn = async (i: Instance) =>
      ((await (await admin(i.url, "GET", `/admin/keys/${id}`)).json()) as { spent_this_month_usd: number })
        .spent_this_month_usd;
    const seenByB = await waitFor(
      "one spend on both",
      async () => {
        const [x, y] = await Promise.all([spendOn(a), spendOn(b)]);
        return Math.abs(x - y) < 1e-9 && y >= spent ? y : undefined;
      },
      10_000,
      20,
    );
    expect(seenByB).toBeGreaterThanOrEqual(spent);
  });

  test("failed authentication is counted across instances: 30 failures spread over both lock the address out on both", async () => {
    const from = (address: string) => ({
      "x-forwarded-for": address,
      authorization: "Bearer sk-tp-not-a-key",
      "content-type": "application/json",
    });
    const body = JSON.stringify({ model: "beta-5", messages: [{ role: "user", content: "hi" }] });
    const fail = (i: Instance, address: string) =>
      fetch(i.url + "/v1/chat/completions", { method: "POST", headers: from(address), body });
    for (let n = 0; n < 30; n++) expect((await fail(n % 2 ? a : b, "203.0.113.7")).status).toBe(401);
    for (const i of [a, b]) {
      const locked = await fail(i, "203.0.113.7");
      expect(locked.status).toBe(429);
      expect(((await locked.json()) as { error: { code: string } }).error.code).toBe("too_many_failed_auth");
    }
    // Another address is not touched.
    expect((await fail(a, "203.0.113.8")).status).toBe(401);
  });
});
