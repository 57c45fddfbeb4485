import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { type Simulator, startSimulator } from "@turnpike/simulator";
import { admin, type Instance, newKey, removeDir, startInstance, waitFor } from "./cluster";
import { freshDatabase, freshPrefix, postgresUp, redisUp, TEST_REDIS_URL } from "./servers";

/**
 * Batches on two gateway processes sharing one PostgreSQL: each job is run by one worker at a
 * time, no line runs twice, and a job whose worker died is finished by the other instance —
 * through Turnpike's own queue, and through the upstreams' batch APIs (one simulator standing
 * for the vendors of both instances: an upstream batch sent by one is polled by the other,
 * never sent twice).
 */
describe.skipIf(!postgresUp || !redisUp)("batches on two instances and one PostgreSQL", () => {
  let a: Instance;
  let b: Instance;
  let sql: SQL;
  let key: { id: string; key: string };
  const cleanups: (() => Promise<void> | void)[] = [];
  const env: Record<string, string> = {};

  beforeAll(async () => {
    const db = await freshDatabase();
    const prefix = freshPrefix();
    cleanups.push(db.drop, prefix.drop);
    // A short lease, so that a killed worker's job is taken over within the test's patience.
    Object.assign(env, {
      TURNPIKE_DATABASE_URL: db.url,
      TURNPIKE_REDIS_URL: TEST_REDIS_URL,
      TURNPIKE_REDIS_PREFIX: prefix.prefix,
      TURNPIKE_BATCH_LEASE_SECONDS: "2",
      // Turnpike's queue: every vendor's batch API off.
      TURNPIKE_BATCH_UPSTREAM_OFF: "all",
    });
    [a, b] = await Promise.all([startInstance(env), startInstance(env)]);
    cleanups.unshift(async () => {
      await Promise.all([a.stop(), b.stop()]);
      removeDir(a.journalDir);
      removeDir(b.journalDir);
    });
    sql = new SQL(db.url, { max: 2 });
    cleanups.unshift(() => sql.close());
    key = await newKey(a.url, {});
    await waitFor(
      "the key on b",
      async () => (await admin(b.url, "GET", `/admin/keys/${key.id}`)).status === 200 || undefined,
    );
  });
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  const headers = () => ({ authorization: `Bearer ${key.key}`, "content-type": "application/json" });
  const line = (id: string, wait: number) => ({
    custom_id: id,
    method: "POST",
    url: "/v1/chat/completions",
    body: { model: "beta-5", messages: [{ role: "user", content: `line ${id} [sim first_byte=${wait}]` }] },
  });

  async function createBatch(base: string, ids: string[], wait: number): Promise<string> {
    const form = new FormData();
    form.set("purpose", "batch");
    form.set("file", new File([ids.map((id) => JSON.stringify(line(id, wait))).join("\n")], "in.jsonl"));
    const file = (await (
      await fetch(`${base}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${key.key}` }, body: form })
    ).json()) as { id: string };
    const res = await fetch(`${base}/v1/batches`, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { id: string }).id;
  }

  const retrieve = async (base: string, id: string) =>
    (await (await fetch(`${base}/v1/batches/${id}`, { headers: headers() })).json()) as any;
  const content = async (base: string, fileId: string) =>
    (await (await fetch(`${base}/v1/files/${fileId}/content`, { headers: headers() })).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));

  test("three batches queued on both instances: each line runs once, every result and ledger row once", async () => {
    const ids = await Promise.all(
      [0, 1, 2].map((j) =>
        createBatch(
          j % 2 ? b.url : a.url,
          Array.from({ length: 6 }, (_, i) => `j${j}-${i}`),
          50,
        ),
      ),
    );
    const done = await Promise.all(
      ids.map((id) =>
        waitFor(
          `batch ${id}`,
          async () => {
            const o = await retrieve(a.url, id);
            return o.status === "completed" ? o : undefined;
          },
          60_000,
          100,
        ),
      ),
    );
    const requestIds: string[] = [];
    for (const [j, o] of done.entries()) {
      expect(o.request_counts).toEqual({ total: 6, completed: 6, failed: 0 });
      const out = await content(b.url, o.output_file_id);
      expect(out.map((r) => r.custom_id)).toEqual(Array.from({ length: 6 }, (_, i) => `j${j}-${i}`));
      requestIds.push(...out.map((r) => r.response.request_id));
    }
    expect(new Set(requestIds).size).toBe(18);
    // The ledger holds each line once (both journals flush within a second).
    const rows = await waitFor(
      "18 ledger rows",
      async () => {
        const r = await sql`SELECT request_id FROM usage WHERE key_id = ${key.id}`;
        return r.length >= 18 ? r : undefined;
      },
      20_000,
      100,
    );
    expect(rows.filter((r: { request_id: string }) => requestIds.includes(r.request_id))).toHaveLength(18);
  });

  test("a worker killed mid-batch: the other instance finishes the job, the line in flight is written off, not sent twice", async () => {
    // Only a runs batches at first: b is restarted with its worker off, then a is killed.
    await b.stop();
    b = await startInstance({ ...env, TURNPIKE_BATCH_WORKER: "off" }, b.journalDir);
    const ids = Array.from({ length: 8 }, (_, i) => `k${i}`);
    const id = await createBatch(b.url, ids, 400);
    await waitFor(
      "a line done on a",
      async () => ((await retrieve(b.url, id)).request_counts.completed >= 2 ? true : undefined),
      30_000,
      50,
    );
    await a.kill9();
    // A fresh instance with a worker on the same database resumes the job after the lease runs out.
    a = await startInstance(env);
    const o = await waitFor(
      "the batch completed",
      async () => {
        const r = await retrieve(a.url, id);
        return r.status === "completed" ? r : undefined;
      },
      60_000,
      100,
    );
    expect(o.request_counts.total).toBe(8);
    expect(o.request_counts.completed + o.request_counts.failed).toBe(8);
    // At most the one line in flight when a died is lost, and it is reported, not retried.
    expect(o.request_counts.failed).toBeLessThanOrEqual(1);
    const out = await content(a.url, o.output_file_id);
    const errs = o.error_file_id ? await content(a.url, o.error_file_id) : [];
    expect(errs.every((e) => e.error.code === "interrupted")).toBe(true);
    expect([...out, ...errs].map((r) => r.custom_id).sort()).toEqual([...ids].sort());
    // No line was sent twice: each custom_id reached the upstream at most once.
    const [{ n }] = await sql`SELECT COUNT(*)::int AS n FROM batch_lines WHERE batch_id = ${id} AND state = 'done'`;
    expect(n).toBe(8);
  }, 120_000);
});

describe.skipIf(!postgresUp || !redisUp)("upstream batch APIs on two instances and one PostgreSQL", () => {
  let a: Instance;
  let b: Instance;
  let sim: Simulator;
  let sql: SQL;
  let key: { id: string; key: string };
  const cleanups: (() => Promise<void> | void)[] = [];
  const env: Record<string, string> = {};

  beforeAll(async () => {
    const db = await freshDatabase();
    const prefix = freshPrefix();
    cleanups.push(db.drop, prefix.drop);
    sim = await startSimulator({ port: 0, captureLimit: 100 });
    cleanups.push(() => sim.stop());
    Object.assign(env, {
      TURNPIKE_DATABASE_URL: db.url,
      TURNPIKE_REDIS_URL: TEST_REDIS_URL,
      TURNPIKE_REDIS_PREFIX: prefix.prefix,
      TURNPIKE_BATCH_LEASE_SECONDS: "2",
      TURNPIKE_BATCH_POLL_SECONDS: "0.1",
      BETA_API_KEY: "sk-beta-sim",
      BETA_BASE_URL: `${sim.url}/v1`,
      ALPHA_API_KEY: "sk-alpha-sim",
      ALPHA_BASE_URL: sim.url,
    });
    // Only a runs batches at first.
    [a, b] = await Promise.all([startInstance(env), startInstance({ ...env, TURNPIKE_BATCH_WORKER: "off" })]);
    cleanups.unshift(async () => {
      await Promise.all([a.stop(), b.stop()]);
      removeDir(a.journalDir);
      removeDir(b.journalDir);
    });
    sql = new SQL(db.url, { max: 2 });
    cleanups.unshift(() => sql.close());
    key = await newKey(a.url, {});
    await waitFor(
      "the key on b",
      async () => (await admin(b.url, "GET", `/admin/keys/${key.id}`)).status === 200 || undefined,
    );
  });
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  const knobs = (k: unknown) => fetch(`${sim.url}/_sim/batches`, { method: "POST", body: JSON.stringify(k) });
  const calls = () => sim.requests.map((r) => `${r.method} ${r.path}`);

  test("a worker killed while its upstream batches run: the other instance polls them to the end, nothing sent twice, each line billed once", async () => {
    await knobs({ ms: 600_000 });
    const ids = ["p1", "p2", "p3", "p4"];
    const form = new FormData();
    form.set("purpose", "batch");
    form.set(
      "file",
      new File(
        [
          ids
            .map((id, i) =>
              JSON.stringify({
                custom_id: id,
                method: "POST",
                url: "/v1/chat/completions",
                body: {
                  model: i % 2 ? "alpha-haiku-4-5" : "beta-5",
                  max_tokens: 16,
                  messages: [{ role: "user", content: `line ${id}` }],
                },
              }),
            )
            .join("\n"),
        ],
        "in.jsonl",
      ),
    );
    const auth = { authorization: `Bearer ${key.key}` };
    const file = (await (await fetch(`${b.url}/v1/files`, { method: "POST", headers: auth, body: form })).json()) as {
      id: string;
    };
    const created = (await (
      await fetch(`${b.url}/v1/batches`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" }),
      })
    ).json()) as { id: string };
    await waitFor(
      "both upstream batches sent by a",
      async () => (calls().includes("POST /v1/batches") && calls().includes("POST /v1/messages/batches")) || undefined,
      30_000,
    );
    // The upstream answered both; a writes their ids a moment later (a loaded machine read 1 of 2 at once).
    await waitFor(
      "both upstream ids written",
      async () =>
        (
          await sql`SELECT COUNT(*)::int AS n FROM batch_groups WHERE batch_id = ${created.id} AND upstream_id IS NOT NULL`
        )[0].n === 2 || undefined,
      30_000,
    );
    await a.kill9();
    a = await startInstance(env);
    await knobs({ finish: true });
    const o = await waitFor(
      "the batch completed",
      async () => {
        const r = (await (await fetch(`${a.url}/v1/batches/${created.id}`, { headers: auth })).json()) as any;
        return r.status === "completed" ? r : undefined;
      },
      60_000,
      100,
    );
    expect(o.request_counts).toEqual({ total: 4, completed: 4, failed: 0 });
    expect(calls().filter((c) => c === "POST /v1/batches")).toHaveLength(1);
    expect(calls().filter((c) => c === "POST /v1/messages/batches")).toHaveLength(1);
    const out = (await (await fetch(`${a.url}/v1/files/${o.output_file_id}/content`, { headers: auth })).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(out.map((r) => r.custom_id)).toEqual(ids);
    const requestIds = out.map((r) => r.response.request_id as string);
    const rows = await waitFor(
      "4 ledger rows",
      async () => {
        const r = await sql`SELECT request_id, model, cost_usd FROM usage WHERE key_id = ${key.id}`;
        return r.length >= 4 ? r : undefined;
      },
      20_000,
      100,
    );
    expect(rows.map((r: { request_id: string }) => r.request_id).sort()).toEqual([...requestIds].sort());
  }, 120_000);
});
