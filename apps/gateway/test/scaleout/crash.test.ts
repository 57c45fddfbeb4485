import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { chat, type Instance, newKey, removeDir, startInstance, waitFor } from "./cluster";
import {
  freshDatabase,
  freshPrefix,
  postgresUp,
  redisUp,
  TEST_DATABASE_URL,
  TEST_REDIS_URL,
  withDatabase,
} from "./servers";
import { TcpProxy } from "./tcp-proxy";

/**
 * `kill -9` of one instance under load: every request a client saw complete has exactly one
 * record in PostgreSQL once the instance is back (its journal is replayed), and nothing else is.
 * Instance a reaches PostgreSQL through a proxy the test cuts shortly before the kill, so that its
 * journal surely holds records PostgreSQL has not seen yet.
 */
describe.skipIf(!postgresUp || !redisUp)("kill -9 of an instance under load", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  let env: Record<string, string>;
  let envA: Record<string, string>;
  let proxy: TcpProxy;
  let sql: SQL;
  beforeAll(async () => {
    const db = await freshDatabase();
    const prefix = freshPrefix();
    cleanups.push(db.drop, prefix.drop);
    env = { TURNPIKE_DATABASE_URL: db.url, TURNPIKE_REDIS_URL: TEST_REDIS_URL, TURNPIKE_REDIS_PREFIX: prefix.prefix };
    sql = new SQL(db.url, { max: 2 });
    cleanups.unshift(() => sql.close());
    const pg = new URL(TEST_DATABASE_URL);
    proxy = new TcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) }).start();
    cleanups.unshift(() => proxy.stop());
    const viaProxy = new URL(db.url);
    viaProxy.hostname = "127.0.0.1";
    viaProxy.port = String(proxy.port);
    envA = { ...env, TURNPIKE_DATABASE_URL: withDatabase(viaProxy.toString(), viaProxy.pathname.slice(1)) };
  });
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  test("the ledger holds each completed request exactly once, and no request that was never sent", async () => {
    const a = await startInstance(envA);
    const b = await startInstance(env);
    let a2: Instance | undefined;
    cleanups.unshift(async () => {
      await Promise.all([a.stop(), b.stop(), a2?.stop()]);
      removeDir(a.journalDir);
      removeDir(b.journalDir);
    });
    const { key } = await newKey(b.url, {});
    await waitFor("the key on a", async () => (await chat(a.url, key)).status === 200 || undefined);

    const completed: string[] = [];
    let sent = 0;
    let stopA = false;
    let stopB = false;
    const worker = async (base: string, stopped: () => boolean) => {
      while (!stopped()) {
        sent++;
        try {
          const r = await chat(base, key, `load ${sent}`);
          if (r.status === 200 && r.id) completed.push(r.id);
        } catch {
          // The connection died with the process: the client never saw this one complete.
          if (stopped()) return;
        }
      }
    };
    const loadA = Array.from({ length: 16 }, () => worker(a.url, () => stopA));
    const loadB = Array.from({ length: 8 }, () => worker(b.url, () => stopB));
    await waitFor("load on both", async () => completed.length >= 300 || undefined, 20_000);
    // a loses PostgreSQL: its records now wait in its journal, and it keeps serving.
    proxy.cut();
    const atCut = completed.length;
    await waitFor("more load while a is cut off", async () => completed.length >= atCut + 300 || undefined, 20_000);
    await a.kill9();
    stopA = true;
    await Promise.all(loadA);
    const completedAtKill = completed.length;
    stopB = true;
    await Promise.all(loadB);
    expect(completedAtKill).toBeGreaterThanOrEqual(600);
    const [{ n: shippedBeforeRestart }] = await sql`SELECT COUNT(*)::int AS n FROM usage`;
    expect(shippedBeforeRestart).toBeLessThan(completed.length);

    // PostgreSQL is back; the instance comes back on its journal directory and ships what it held.
    proxy.restore();
    a2 = await startInstance(envA, a.journalDir);
    const ids = new Set(completed);
    const rows = await waitFor(
      "every completed request in the ledger",
      async () => {
        const r: { request_id: string }[] =
          await sql`SELECT request_id FROM usage WHERE key_id <> '' ORDER BY request_id`;
        const have = new Set(r.map((x) => x.request_id));
        return [...ids].every((id) => have.has(id)) ? r : undefined;
      },
      20_000,
      100,
    );
    const ledgerIds = rows.map((r) => r.request_id);
    expect(new Set(ledgerIds).size).toBe(ledgerIds.length);
    // Warm-up calls plus the load; a record may exist for a request whose reply the kill cut off, never more.
    expect(ledgerIds.length).toBeGreaterThanOrEqual(completed.length);
    expect(ledgerIds.length).toBeLessThanOrEqual(sent + 5);
  }, 60_000);
});
