/**
 * A batch that spans a restart on SQLite: the gateway stops mid-batch (the line in flight
 * finishes, the job is handed back) and the next start on the same database finishes it, each
 * line once.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI, { toFile } from "openai";
import { bootGateway, type Gateway } from "../../src/boot";
import { loadConfig } from "../../src/config/config";
import { SqliteStore } from "../../src/storage/sqlite-store";
import { ADMIN_KEY } from "../harness";

const dir = mkdtempSync(join(tmpdir(), "turnpike-batch-restart-"));
const file = join(dir, "turnpike.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function start(): Promise<{ gw: Gateway; url: string }> {
  const config = loadConfig({
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

async function until<T>(get: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  let v = await get();
  for (let i = 0; i < 1200 && !done(v); i++) {
    await Bun.sleep(25);
    v = await get();
  }
  return v;
}

test("a batch spanning a restart on SQLite completes, each line once", async () => {
  const first = await start();
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
  await until(
    () => client(first.url).batches.retrieve(batch.id),
    (b) => (b.request_counts?.completed ?? 0) >= 1,
  );
  await first.gw.close();

  const second = await start();
  try {
    const mid = await client(second.url).batches.retrieve(batch.id);
    // Stopped mid-batch: lines were left for the next start.
    expect(mid.status).toBe("in_progress");
    expect(mid.request_counts!.completed).toBeLessThan(5);
    const done = await until(
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
