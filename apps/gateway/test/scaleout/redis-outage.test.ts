import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Instance, newKey, removeDir, startInstance, waitFor } from "./cluster";
import { freshPrefix, redisUp, TEST_REDIS_URL } from "./servers";
import { TcpProxy } from "./tcp-proxy";

async function call(base: string, key: string, format: "chat" | "messages"): Promise<{ status: number; body: string }> {
  const r =
    format === "chat"
      ? await fetch(base + "/v1/chat/completions", {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "beta-5", messages: [{ role: "user", content: "hi" }] }),
        })
      : await fetch(base + "/v1/messages", {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json", "alpha-version": "2023-06-01" },
          body: JSON.stringify({
            model: "alpha-haiku-4-5",
            max_tokens: 50,
            messages: [{ role: "user", content: "hi" }],
          }),
        });
  return { status: r.status, body: await r.text() };
}

/**
 * Redis goes away (for these instances: a proxy the test cuts) and comes back. `open` serves on
 * per-instance limits, `closed` refuses with a 503 in the caller's format; both reconnect by
 * themselves. No PostgreSQL: either may be set alone.
 */
describe.skipIf(!redisUp)("Redis unreachable, then back", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  let open: Instance;
  let closed: Instance;
  let proxy: TcpProxy;
  beforeAll(async () => {
    const prefix = freshPrefix();
    cleanups.push(prefix.drop);
    const redis = new URL(TEST_REDIS_URL);
    proxy = new TcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) }).start();
    cleanups.unshift(() => proxy.stop());
    const env = { TURNPIKE_REDIS_URL: `redis://127.0.0.1:${proxy.port}`, TURNPIKE_REDIS_PREFIX: prefix.prefix };
    [open, closed] = await Promise.all([
      startInstance({ ...env, TURNPIKE_REDIS_FAIL: "open" }),
      startInstance({ ...env, TURNPIKE_REDIS_FAIL: "closed" }),
    ]);
    cleanups.unshift(async () => {
      await Promise.all([open.stop(), closed.stop()]);
      removeDir(open.journalDir);
      removeDir(closed.journalDir);
    });
  });
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  test("open keeps serving on local limits, closed answers 503; /ready says so; both recover", async () => {
    expect(open.output()).toContain("Back ends: store SQLite (embedded); limits, budgets and key notices in Redis");
    // Each instance has its own SQLite store here, so each its own key.
    const ko = await newKey(open.url, { rpm: 3 });
    const kc = await newKey(closed.url, { rpm: 1000 });
    expect((await call(open.url, ko.key, "chat")).status).toBe(200);
    expect((await call(closed.url, kc.key, "chat")).status).toBe(200);

    proxy.cut();
    // open: served, and held to its limit by this instance alone (2 left of rpm 3 locally: a fresh bucket).
    const during = await Promise.all([1, 2, 3, 4].map(() => call(open.url, ko.key, "chat")));
    expect(during.map((r) => r.status).sort()).toEqual([200, 200, 200, 429]);
    // closed: refused in the caller's own format, never a 500.
    const chat = await call(closed.url, kc.key, "chat");
    expect(chat.status).toBe(503);
    expect(JSON.parse(chat.body).error.message).toContain("Redis is unreachable");
    // The messages format says "overloaded" with its own 529 (docs/protocols.md §4.8).
    const messages = await call(closed.url, kc.key, "messages");
    expect(messages.status).toBe(529);
    expect(JSON.parse(messages.body)).toMatchObject({
      type: "error",
      error: { type: "overloaded_error", message: expect.stringContaining("Redis is unreachable") },
    });
    for (const i of [open, closed]) {
      const r = await fetch(i.url + "/ready");
      expect(r.status).toBe(503);
      expect(await r.json()).toMatchObject({ status: "not_ready", limits: { kind: "redis", reachable: false } });
    }

    proxy.restore();
    for (const i of [open, closed])
      await waitFor(
        "reconnection",
        async () => (await fetch(i.url + "/ready")).status === 200 || undefined,
        10_000,
        100,
      );
    expect((await call(closed.url, kc.key, "chat")).status).toBe(200);
    expect((await call(closed.url, kc.key, "messages")).status).toBe(200);
    // Shared again: Redis's bucket, which saw one request before the outage.
    const after = await Promise.all([1, 2, 3].map(() => call(open.url, ko.key, "chat")));
    expect(after.map((r) => r.status).sort()).toEqual([200, 200, 429]);
  }, 60_000);
});
