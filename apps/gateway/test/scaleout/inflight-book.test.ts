import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { chat, type Instance, newKey, removeDir, startInstance, waitFor } from "./cluster";
import { freshDatabase, freshPrefix, postgresUp, redisUp, TEST_REDIS_URL } from "./servers";

/**
 * The book of requests in flight writes a request only once it has run `TURNPIKE_INFLIGHT_AFTER_MS`
 * (decisions/0021-inflight-book-batching.md). Instance a waits 2 s here (20 ms by default), so
 * that "short" holds on a loaded machine; instance c runs in strict mode (0: every request
 * written at admission, its record acknowledged only once its row is written). A trigger keeps
 * every row ever written to the book.
 */
describe.skipIf(!postgresUp || !redisUp)("the book of requests in flight", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  let a: Instance;
  let b: Instance;
  let c: Instance;
  let sql: SQL;
  beforeAll(async () => {
    const db = await freshDatabase();
    const prefix = freshPrefix();
    cleanups.push(db.drop, prefix.drop);
    const env = {
      TURNPIKE_DATABASE_URL: db.url,
      TURNPIKE_REDIS_URL: TEST_REDIS_URL,
      TURNPIKE_REDIS_PREFIX: prefix.prefix,
    };
    [b, a, c] = await Promise.all([
      startInstance(env),
      startInstance({ ...env, TURNPIKE_INFLIGHT_AFTER_MS: "2000" }),
      startInstance({ ...env, TURNPIKE_INFLIGHT_AFTER_MS: "0" }),
    ]);
    cleanups.unshift(async () => {
      await Promise.all([a.stop(), b.stop(), c.stop()]);
      for (const i of [a, b, c]) removeDir(i.journalDir);
    });
    sql = new SQL(db.url, { max: 2 });
    cleanups.unshift(() => sql.close());
    // Migrations ran at the instances' start: the book exists.
    await sql.unsafe(`
CREATE TABLE inflight_written (request_id TEXT NOT NULL);
CREATE FUNCTION inflight_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO inflight_written VALUES (NEW.request_id); RETURN NEW; END $$;
CREATE TRIGGER inflight_written AFTER INSERT ON inflight FOR EACH ROW EXECUTE FUNCTION inflight_written();`);
  });
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  /** Waits for `n` records of the key, each served in full (neither estimated nor aborted). */
  const expectServedRecords = async (keyId: string, n: number) => {
    const records = await waitFor(
      `${n} records`,
      async () => {
        const r: { request_id: string; estimated: boolean; aborted: boolean }[] =
          await sql`SELECT request_id, estimated, aborted FROM usage WHERE key_id = ${keyId}`;
        return r.length === n ? r : undefined;
      },
      30_000,
    );
    for (const r of records) expect(r).toMatchObject({ estimated: false, aborted: false });
  };

  /** Opens a stream of `chunks` pieces 100 ms apart and reads its first frame. */
  const openStream = async (key: string, chunks: number) => {
    const r = await fetch(a.url + "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "beta-5",
        stream: true,
        messages: [{ role: "user", content: `[sim chunks=${chunks} latency=100] a long answer` }],
      }),
    });
    expect(r.status).toBe(200);
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    expect((await reader.read()).done).toBe(false);
    return { id: r.headers.get("x-request-id") as string, reader };
  };
  const inBook = (id: string) =>
    waitFor(
      "the stream's row in the book",
      async () => (await sql`SELECT 1 FROM inflight WHERE request_id = ${id}`).length === 1 || undefined,
      30_000,
    );

  const written = async (ids: string[]): Promise<string[]> => {
    const rows: { request_id: string }[] =
      await sql`SELECT request_id FROM inflight_written WHERE request_id IN ${sql(ids)}`;
    return rows.map((r) => r.request_id);
  };

  test("strict mode: each request is in PostgreSQL, as its row or its record, once its client has the reply", async () => {
    const { id: keyId, key } = await newKey(c.url, { budget_usd: 100 });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await chat(c.url, key, `strict ${i}`);
      expect(r.status).toBe(200);
      const id = r.id as string;
      ids.push(id);
      // Read the moment the reply is in: no wait, nothing to wait for.
      const [{ n }] = await sql`SELECT
        (SELECT COUNT(*) FROM inflight_written WHERE request_id = ${id})::int +
        (SELECT COUNT(*) FROM usage WHERE request_id = ${id})::int AS n`;
      expect({ id, there: n > 0 }).toEqual({ id, there: true });
    }
    // Each record lands and takes its row out of the book: each request billed once, served.
    await expectServedRecords(keyId, ids.length);
    await waitFor(
      "the strict requests' rows gone",
      async () => (await sql`SELECT 1 FROM inflight WHERE request_id IN ${sql(ids)}`).length === 0 || undefined,
      30_000,
    );
  }, 60_000);

  test("a request that ends before its row is due leaves no row, only its record", async () => {
    const { id: keyId, key } = await newKey(a.url, { budget_usd: 100 });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await chat(a.url, key, `short ${i}`);
      expect(r.status).toBe(200);
      ids.push(r.id as string);
    }
    await expectServedRecords(keyId, ids.length);
    // Rows are written in the order of admission: once a stream admitted after them has its
    // row, theirs would have been written too. None was, and none is left.
    const marker = await openStream(key, 100);
    await inBook(marker.id);
    expect(await written(ids)).toEqual([]);
    expect(await written([marker.id])).toEqual([marker.id]);
    // The client leaves: the stream's record (aborted) takes its row out of the book.
    await marker.reader.cancel();
    await waitFor(
      "the book empty",
      async () => (await sql`SELECT COUNT(*)::int AS n FROM inflight`)[0].n === 0 || undefined,
      30_000,
    );
    expect((await sql`SELECT aborted, estimated FROM usage WHERE request_id = ${marker.id}`)[0]).toMatchObject({
      aborted: true,
    });
  }, 60_000);

  test("a long request's row is written, and after a kill -9 a survivor bills it once", async () => {
    const { id: keyId, key } = await newKey(a.url, { budget_usd: 100 });
    // 600 chunks 100 ms apart: a minute, far longer than the test.
    const { id, reader } = await openStream(key, 600);
    await inBook(id);
    expect(await written([id])).toEqual([id]);

    await a.kill9();
    let text = "";
    try {
      for (let x = await reader.read(); !x.done; x = await reader.read()) text += new TextDecoder().decode(x.value);
    } catch {
      // The connection died with the process.
    }
    expect(text).not.toContain("[DONE]");
    // b bills it once a's lease (20 s) runs out, at its next look (every 5 s).
    const billed = await waitFor(
      "the stream billed by b",
      async () => {
        const rows: { request_id: string; aborted: boolean; estimated: boolean; status: number; cost_usd: number }[] =
          await sql`SELECT request_id, aborted, estimated, status, cost_usd FROM usage WHERE key_id = ${keyId}`;
        return rows.length ? rows : undefined;
      },
      90_000,
      250,
    );
    expect(billed).toHaveLength(1);
    expect(billed[0]).toMatchObject({ request_id: id, aborted: true, estimated: true, status: 499 });
    expect(billed[0]?.cost_usd).toBeGreaterThan(0);
    expect((await sql`SELECT COUNT(*)::int AS n FROM inflight`)[0].n).toBe(0);
  }, 150_000);
});
