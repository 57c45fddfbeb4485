/**
 * A batch that spans a restart on SQLite. Through Turnpike's queue: the gateway stops mid-batch
 * (the line in flight finishes, the job is handed back) and the next start on the same database
 * finishes it, each line once. Through the upstreams' batch APIs: the next start resumes polling
 * the upstream batches the first one sent, without sending them again, and each line is in the
 * ledger once, at the batch price.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { startSimulator } from "@turnpike/simulator";
import OpenAI, { toFile } from "openai";
import { bootGateway, type Gateway } from "../../src/boot";
import { loadConfig } from "../../src/config/config";
import { SqliteStore } from "../../src/storage/sqlite-store";
import { ADMIN_KEY } from "../harness";
import { until } from "./until";

const dir = mkdtempSync(join(tmpdir(), "turnpike-batch-restart-"));
const file = join(dir, "turnpike.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function start(env: Record<string, string> = {}): Promise<{ gw: Gateway; url: string }> {
  const config = loadConfig({
    ...env,
    PORT: "0",
    HOST: "127.0.0.1",
    TURNPIKE_ADMIN_KEY: ADMIN_KEY,
    TURNPIKE_DB: file,
    TURNPIKE_LOG_LEVEL: "warn",
    TURNPIKE_JOURNAL_DIR: dir,
  });
  const gw = await bootGateway(config, { store: new SqliteStore(file), firstKey: false });
  gw.app.listen({ port: 0, hostname: "127.0.0.1" });
  return { gw, url: `http://127.0.0.1:${gw.app.server!.port}` };
}

const wait = <T>(get: () => Promise<T>, done: (v: T) => boolean) => until(get, done, 1200);

async function newKey(url: string, name: string): Promise<{ key: string; id: string }> {
  return (await (
    await fetch(`${url}/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ name }),
    })
  ).json()) as { key: string; id: string };
}

async function ledger(url: string, keyId: string): Promise<{ request_id: string; model: string; cost_usd: number }[]> {
  const res = await fetch(`${url}/admin/usage?key_id=${keyId}&limit=100`, {
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  return ((await res.json()) as { data: { request_id: string; model: string; cost_usd: number }[] }).data;
}

test("a batch on the upstreams' batch APIs spanning a restart: polling resumes, nothing is sent twice, each line billed once", async () => {
  // The vendors' side outlives the gateway: one simulator for both runs, as the beta and alpha upstreams.
  const sim = await startSimulator({ port: 0, captureLimit: 100 });
  const knobs = (k: unknown) => fetch(`${sim.url}/_sim/batches`, { method: "POST", body: JSON.stringify(k) });
  const env = {
    BETA_API_KEY: "sk-beta-sim",
    BETA_BASE_URL: `${sim.url}/v1`,
    ALPHA_API_KEY: "sk-alpha-sim",
    ALPHA_BASE_URL: sim.url,
    TURNPIKE_BATCH_POLL_SECONDS: "0.1",
  };
  try {
    await knobs({ ms: 600_000 });
    const first = await start(env);
    const made = await newKey(first.url, "upstream-restart");
    const openai = (url: string) => new OpenAI({ apiKey: made.key, baseURL: `${url}/v1`, maxRetries: 0 });
    const ids = ["u1", "u2", "u3"];
    const input = await openai(first.url).files.create({
      file: await toFile(
        Buffer.from(
          ids
            .map((id, i) =>
              JSON.stringify({
                custom_id: id,
                method: "POST",
                url: "/v1/chat/completions",
                body: {
                  model: i === 2 ? "alpha-haiku-4-5" : "beta-5",
                  max_tokens: 16,
                  messages: [{ role: "user", content: `line ${id} [sim text="${id} done"]` }],
                },
              }),
            )
            .join("\n"),
        ),
        "in.jsonl",
      ),
      purpose: "batch",
    });
    const batch = await openai(first.url).batches.create({
      input_file_id: input.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const calls = () => sim.requests.map((r) => `${r.method} ${r.path}`);
    await wait(
      async () => calls(),
      (c) => c.includes("POST /v1/batches") && c.includes("POST /v1/messages/batches"),
    );
    await first.gw.close();

    const second = await start(env);
    try {
      expect((await openai(second.url).batches.retrieve(batch.id)).status).toBe("in_progress");
      await knobs({ finish: true });
      const done = await wait(
        () => openai(second.url).batches.retrieve(batch.id),
        (b) => b.status === "completed",
      );
      expect(done.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
      // Sent once each, before the restart; only polled after it.
      expect(calls().filter((c) => c === "POST /v1/batches")).toHaveLength(1);
      expect(calls().filter((c) => c === "POST /v1/messages/batches")).toHaveLength(1);
      expect(calls().filter((c) => c === "POST /v1/chat/completions" || c === "POST /v1/messages")).toHaveLength(0);
      const out = (await (await openai(second.url).files.content(done.output_file_id!)).text())
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(out.map((o) => [o.custom_id, o.response.body.choices[0].message.content])).toEqual([
        ["u1", "u1 done"],
        ["u2", "u2 done"],
        ["u3", "u3 done"],
      ]);
      // One ledger row per line, at half the price of the same call made directly.
      const rows = await ledger(second.url, made.id);
      expect(rows.map((r) => r.request_id).sort()).toEqual(out.map((o) => o.response.request_id).sort());
      const direct = await openai(second.url)
        .chat.completions.create({
          model: "beta-5",
          max_tokens: 16,
          messages: [{ role: "user", content: 'line u1 [sim text="u1 done"]' }],
        })
        .withResponse();
      const directId = direct.response.headers.get("x-request-id")!;
      const directRow = await wait(
        async () => (await ledger(second.url, made.id)).find((r) => r.request_id === directId),
        (r) => r !== undefined,
      );
      const u1 = rows.find((r) => r.request_id === out[0].response.request_id)!;
      expect(directRow!.cost_usd).toBeGreaterThan(0);
      expect(u1.cost_usd).toBeCloseTo(directRow!.cost_usd * 0.5, 9);
      // The messages client sees the same: Anthropic's SDK can read a message batch's results here too.
      const anthropic = new Anthropic({ apiKey: made.key, baseURL: second.url, maxRetries: 0 });
      const mb = await anthropic.messages.batches.create({
        requests: [
          {
            custom_id: "m1",
            params: {
              model: "alpha-haiku-4-5",
              max_tokens: 8,
              messages: [{ role: "user", content: 'hi [sim text="m"]' }],
            },
          },
        ],
      });
      await knobs({ finish: true });
      await wait(
        async () => {
          await knobs({ finish: true });
          return anthropic.messages.batches.retrieve(mb.id);
        },
        (b) => b.processing_status === "ended",
      );
      const results = [];
      for await (const r of await anthropic.messages.batches.results(mb.id)) results.push(r);
      expect(results.map((r) => r.result.type)).toEqual(["succeeded"]);
    } finally {
      await second.gw.close();
    }
  } finally {
    await sim.stop();
  }
}, 60_000);

test("a batch spanning a restart on SQLite completes, each line once", async () => {
  const first = await start({ TURNPIKE_BATCH_UPSTREAM_OFF: "all" });
  const made = (await (
    await fetch(`${first.url}/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "restart" }),
    })
  ).json()) as { key: string; id: string };
  const client = (url: string) => new OpenAI({ apiKey: made.key, baseURL: `${url}/v1`, maxRetries: 0 });
  const ids = ["r1", "r2", "r3", "r4", "r5"];
  const jsonl = ids
    .map((id) =>
      JSON.stringify({
        custom_id: id,
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: "delta-m3", messages: [{ role: "user", content: `line ${id} [sim first_byte=400]` }] },
      }),
    )
    .join("\n");
  const input = await client(first.url).files.create({
    file: await toFile(Buffer.from(jsonl), "in.jsonl"),
    purpose: "batch",
  });
  const batch = await client(first.url).batches.create({
    input_file_id: input.id,
    endpoint: "/v1/chat/completions",
    completion_window: "24h",
  });
  await wait(
    () => client(first.url).batches.retrieve(batch.id),
    (b) => (b.request_counts?.completed ?? 0) >= 1,
  );
  await first.gw.close();

  const second = await start({ TURNPIKE_BATCH_UPSTREAM_OFF: "all" });
  try {
    const mid = await client(second.url).batches.retrieve(batch.id);
    // Stopped mid-batch: lines were left for the next start.
    expect(mid.status).toBe("in_progress");
    expect(mid.request_counts!.completed).toBeLessThan(5);
    const done = await wait(
      () => client(second.url).batches.retrieve(batch.id),
      (b) => b.status === "completed",
    );
    expect(done.request_counts).toEqual({ total: 5, completed: 5, failed: 0 });
    const out = (await (await client(second.url).files.content(done.output_file_id!)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(out.map((o) => o.custom_id)).toEqual(ids);
    // One ledger row per line, across both runs.
    const usage = (await (
      await fetch(`${second.url}/admin/usage?key_id=${made.id}&limit=100`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      })
    ).json()) as { data: { request_id: string }[] };
    const rows = usage.data.map((r) => r.request_id);
    expect(rows.sort()).toEqual(out.map((o) => o.response.request_id).sort());
  } finally {
    await second.gw.close();
  }
}, 60_000);
