/**
 * A line sent to a vendor's batch API holds its worst case in the shared spend store (Redis)
 * while the vendor runs it. The reservation is kept with the line (`batch_lines.reserved_usd`,
 * migration 19), so that when the instance that sent it is gone — a restart here — the next one
 * gives back exactly that when the line is answered or its batch is cancelled: the key's
 * reservation returns to zero (before, it stayed held in Redis until the month's end).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { RedisClient } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSimulator } from "@turnpike/simulator";
import OpenAI, { toFile } from "openai";
import { bootGateway, type Gateway } from "../../src/boot";
import { loadConfig } from "../../src/config/config";
import { monthStart } from "../../src/limits/spend-store";
import { SqliteStore } from "../../src/storage/sqlite-store";
import { ADMIN_KEY } from "../harness";
import { freshPrefix, redisUp, TEST_REDIS_URL } from "../scaleout/servers";
import { until } from "./until";

describe.skipIf(!redisUp)("a vendor batch line's reservation across a restart (SQLite and Redis)", () => {
  const dir = mkdtempSync(join(tmpdir(), "turnpike-batch-reserve-"));
  const file = join(dir, "turnpike.db");
  const prefix = freshPrefix();
  const redis = new RedisClient(TEST_REDIS_URL);
  afterAll(async () => {
    await prefix.drop();
    redis.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(env: Record<string, string>): Promise<{ gw: Gateway; url: string }> {
    const config = loadConfig({
      ...env,
      PORT: "0",
      HOST: "127.0.0.1",
      TURNPIKE_ADMIN_KEY: ADMIN_KEY,
      TURNPIKE_DB: file,
      TURNPIKE_LOG_LEVEL: "error",
      TURNPIKE_JOURNAL_DIR: dir,
      TURNPIKE_REDIS_URL: TEST_REDIS_URL,
      TURNPIKE_REDIS_PREFIX: prefix.prefix,
    });
    const gw = await bootGateway(config, { store: new SqliteStore(file), firstKey: false });
    gw.app.listen({ port: 0, hostname: "127.0.0.1" });
    return { gw, url: `http://127.0.0.1:${gw.app.server!.port}` };
  }

  const wait = <T>(get: () => Promise<T>, done: (v: T) => boolean) => until(get, done, 800);

  /** What Redis holds for a key this month: its reservation (`~r:<id>`) and its spend. */
  async function held(keyId: string): Promise<{ reserved: number; spent: number }> {
    const hash = `${prefix.prefix}spend:${monthStart(Date.now())}`;
    const [r, s] = (await redis.send("HMGET", [hash, `~r:${keyId}`, keyId])) as (string | null)[];
    return { reserved: Number(r ?? 0), spent: Number(s ?? 0) };
  }

  /** What the lines of a batch keep of their reservations in the database. */
  function kept(batchId: string): number {
    const db = new Database(file, { readonly: true });
    try {
      const q = db.query<{ usd: number | null }, [string]>(
        "SELECT SUM(reserved_usd) AS usd FROM batch_lines WHERE batch_id = ?",
      );
      return q.get(batchId)?.usd ?? 0;
    } finally {
      db.close();
    }
  }

  test("reserved when sent, then after a restart given back exactly: when the lines are answered, and when the batch is cancelled", async () => {
    const sim = await startSimulator({ port: 0, captureLimit: 100 });
    const knobs = (k: unknown) => fetch(`${sim.url}/_sim/batches`, { method: "POST", body: JSON.stringify(k) });
    const env = { BETA_API_KEY: "sk-beta-sim", BETA_BASE_URL: `${sim.url}/v1`, TURNPIKE_BATCH_POLL_SECONDS: "0.1" };
    try {
      // The vendor holds the lines until told to finish.
      await knobs({ ms: 600_000 });
      const first = await start(env);
      const newKey = async (name: string) =>
        (await (
          await fetch(`${first.url}/admin/keys`, {
            method: "POST",
            headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
            body: JSON.stringify({ name, budget_usd: 5 }),
          })
        ).json()) as { key: string; id: string };
      const answered = await newKey("reserve-answered");
      const cancelled = await newKey("reserve-cancelled");
      const client = (url: string, key: string) => new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 });
      const createBatch = async (url: string, key: string) => {
        const lines = ["a", "b"].map((id) =>
          JSON.stringify({
            custom_id: id,
            method: "POST",
            url: "/v1/chat/completions",
            body: { model: "beta-5", max_tokens: 1000, messages: [{ role: "user", content: `line ${id}` }] },
          }),
        );
        const input = await client(url, key).files.create({
          file: await toFile(Buffer.from(lines.join("\n")), "in.jsonl"),
          purpose: "batch",
        });
        return client(url, key).batches.create({
          input_file_id: input.id,
          endpoint: "/v1/chat/completions",
          completion_window: "24h",
        });
      };
      const one = await createBatch(first.url, answered.key);
      const two = await createBatch(first.url, cancelled.key);
      await wait(
        async () => sim.requests.filter((r) => r.method === "POST" && r.path === "/v1/batches").length,
        (n) => n === 2,
      );
      // Sent: each key's two lines hold their worst case in Redis, and each line keeps it too.
      const before = await wait(
        async () => [await held(answered.id), await held(cancelled.id)],
        ([a, c]) => a!.reserved > 0 && c!.reserved > 0,
      );
      expect(before[0]!.reserved).toBeGreaterThan(0);
      expect(before[1]!.reserved).toBeGreaterThan(0);
      expect(kept(one.id)).toBeCloseTo(before[0]!.reserved, 9);
      expect(kept(two.id)).toBeCloseTo(before[1]!.reserved, 9);
      await first.gw.close();

      // A new instance on the same database and Redis.
      const second = await start(env);
      try {
        await client(second.url, cancelled.key).batches.cancel(two.id);
        const ended = await wait(
          () => client(second.url, cancelled.key).batches.retrieve(two.id),
          (b) => b.status === "cancelled",
        );
        expect(ended.status).toBe("cancelled");
        expect(
          await wait(
            () => held(cancelled.id),
            (h) => h.reserved === 0,
          ),
        ).toEqual({ reserved: 0, spent: 0 });
        expect(kept(two.id)).toBe(0);

        await knobs({ finish: true });
        const done = await wait(
          () => client(second.url, answered.key).batches.retrieve(one.id),
          (b) => b.status === "completed",
        );
        expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
        const after = await wait(
          () => held(answered.id),
          (h) => h.reserved === 0 && h.spent > 0,
        );
        // The reservation is gone; what the two lines cost is spent (far less than what was held).
        expect(after.reserved).toBe(0);
        expect(after.spent).toBeGreaterThan(0);
        expect(after.spent).toBeLessThan(before[0]!.reserved);
        expect(kept(one.id)).toBe(0);
      } finally {
        await second.gw.close();
      }
    } finally {
      await sim.stop();
    }
  }, 60_000);
});
