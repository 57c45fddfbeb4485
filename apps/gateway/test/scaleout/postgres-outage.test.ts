import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { admin, chat, type Instance, newKey, removeDir, spawnInstance, startInstance, waitFor } from "./cluster";
import { freshDatabase, postgresUp, TEST_DATABASE_URL } from "./servers";
import { TcpProxy } from "./tcp-proxy";

/**
 * PostgreSQL goes away under load (for this instance: a proxy the test cuts, so the machine's
 * server keeps running for everyone else) and comes back. No Redis: either may be set alone.
 */
describe.skipIf(!postgresUp)("PostgreSQL unreachable mid-load, then back", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  let gw: Instance;
  let proxy: TcpProxy;
  let sql: SQL;
  let viaProxyUrl = "";
  beforeAll(async () => {
    const db = await freshDatabase();
    cleanups.push(db.drop);
    sql = new SQL(db.url, { max: 2 });
    cleanups.unshift(() => sql.close());
    const pg = new URL(TEST_DATABASE_URL);
    proxy = new TcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) }).start();
    cleanups.unshift(() => proxy.stop());
    const viaProxy = new URL(db.url);
    viaProxy.hostname = "127.0.0.1";
    viaProxy.port = String(proxy.port);
    viaProxyUrl = viaProxy.toString();
    gw = await startInstance({ TURNPIKE_DATABASE_URL: viaProxyUrl });
    cleanups.unshift(async () => {
      await gw.stop();
      removeDir(gw.journalDir);
    });
  });
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  test("requests keep being served with cached keys; records wait in the journal and arrive once each", async () => {
    expect(gw.output()).toContain("limits, budgets and key notices in process memory");
    const { key } = await newKey(gw.url, {});
    const completed: string[] = [];
    const load = async (n: number) => {
      const rs = await Promise.all(Array.from({ length: n }, (_, i) => chat(gw.url, key, `call ${i}`)));
      for (const r of rs) {
        expect(r.status).toBe(200);
        completed.push(r.id ?? "");
      }
    };
    await load(50);

    proxy.cut();
    await load(100);
    const ready = await waitFor("/ready to say so", async () => {
      const r = await fetch(gw.url + "/ready");
      return r.status === 503
        ? ((await r.json()) as { store: { reachable: boolean }; journal: { waiting: number } })
        : undefined;
    });
    expect(ready.store.reachable).toBe(false);
    expect(ready.journal.waiting).toBeGreaterThan(0);
    // Admin writes cannot be stored: a 503 in the admin API's envelope, never a 500.
    const create = await admin(gw.url, "POST", "/admin/keys", { name: "during the outage" });
    expect(create.status).toBe(503);
    expect(((await create.json()) as { error: { message: string } }).error.message).toContain("unreachable");
    await load(100);
    const [{ n: during }] = await sql`SELECT COUNT(*)::int AS n FROM usage`;
    expect(during).toBeLessThan(completed.length);

    proxy.restore();
    await waitFor(
      "/ready again",
      async () => (await fetch(gw.url + "/ready")).status === 200 || undefined,
      30_000,
      100,
    );
    const rows: { request_id: string }[] = await waitFor(
      "every record",
      async () => {
        const r: { request_id: string }[] = await sql`SELECT request_id FROM usage`;
        return r.length >= completed.length ? r : undefined;
      },
      30_000,
      100,
    );
    expect(rows.map((r) => r.request_id).sort()).toEqual([...completed].sort());
    expect((await admin(gw.url, "POST", "/admin/keys", { name: "after the outage" })).status).toBe(201);
  }, 120_000);

  test("an instance started while PostgreSQL is away says so, waits, and serves once it answers", async () => {
    proxy.cut();
    const where = new URL(viaProxyUrl);
    const spawned = spawnInstance({ TURNPIKE_DATABASE_URL: viaProxyUrl });
    const starting = spawned.ready;
    let late: Instance | undefined;
    try {
      // PostgreSQL comes back once the instance has found it away (however slowly it starts).
      await waitFor(
        "the instance to find PostgreSQL away",
        async () => spawned.output().includes("is unreachable at start") || undefined,
        60_000,
        100,
      );
      proxy.restore();
      late = await starting;
      expect(late.output()).toContain(
        `PostgreSQL at 127.0.0.1:${proxy.port}${where.pathname} is unreachable at start; retrying every second`,
      );
      expect((await fetch(late.url + "/ready")).status).toBe(200);
      // The keys made before are there: it read them once PostgreSQL answered.
      const r = await admin(late.url, "GET", "/admin/keys");
      expect(((await r.json()) as { data: unknown[] }).data.length).toBeGreaterThanOrEqual(2);
    } finally {
      proxy.restore();
      late ??= await starting.catch(() => undefined);
      await late?.stop();
      if (late) removeDir(late.journalDir);
    }
  }, 150_000);
});
