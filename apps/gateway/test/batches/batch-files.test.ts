/**
 * Batch files in chunks (migration 14; issue 27: no request may hold the event loop for more
 * than about 100 ms): a file is stored and read one chunk of 1 MiB per statement, with turns of
 * the loop between, on both databases; its content comes back byte for byte, a line that runs
 * across a chunk's end (or a character that does) is read whole; a file stored as one row before
 * the migration still reads; deleting a file or purging it takes its chunks.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { Database } from "bun:sqlite";
import { fileLines, openaiLines } from "../../src/batches/batch-input";
import { BatchStore, FILE_CHUNK_BYTES, batchStoreOf } from "../../src/storage/batch-store";
import { loadConfig } from "../../src/config/config";
import { migrateSqlite } from "../../src/storage/migrations";
import { PostgresStore } from "../../src/storage/postgres-store";
import { postgresRunner, type SqlRunner, sqliteRunner } from "../../src/storage/sql-runner";
import { loopTurns } from "../../src/vocabulary/loop-turns";
import { type Harness, startHarness } from "../harness";
import { freshDatabase, postgresUp } from "../scaleout/servers";

const limits = loadConfig({ TURNPIKE_ADMIN_KEY: "x".repeat(40) }).batches;

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

/** Every chunk's bytes, joined. */
async function readAll(chunks: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const c of chunks) parts.push(c);
  return Buffer.concat(parts);
}

/** `bytes` cut into pieces of `size`. */
function* cut(bytes: Uint8Array, size: number): Generator<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += size) yield bytes.subarray(at, at + size);
}

/** A JSONL input line of about `pad` characters, with two- and four-byte characters in it. */
const inputLine = (i: number, pad: number) =>
  JSON.stringify({
    custom_id: `r${i}`,
    method: "POST",
    url: "/v1/chat/completions",
    body: { model: "beta-5", max_tokens: 8, messages: [{ role: "user", content: `é ${i} 🙂 ${"ü".repeat(pad)}` }] },
  });

describe("a file's lines from its chunks", () => {
  const text = `\uFEFF{"a":"é"}\r\n\n  \n{"b":"🙂🙂"}\nlast ü`;
  const bytes = Buffer.from(text);

  test("cut anywhere (inside a character, between \\r and \\n): the same lines", async () => {
    const whole: string[] = [];
    for await (const l of fileLines([bytes], 1000)) whole.push(l.text!);
    expect(whole).toEqual(['{"a":"é"}', "", "  ", '{"b":"🙂🙂"}', "last ü"]);
    for (const size of [1, 2, 3, 5, 7]) {
      const got: string[] = [];
      for await (const l of fileLines(cut(bytes, size), 1000)) got.push(l.text!);
      expect(got).toEqual(whole);
    }
    for (let at = 1; at < bytes.byteLength; at++) {
      const got: string[] = [];
      for await (const l of fileLines([bytes.subarray(0, at), bytes.subarray(at)], 1000)) got.push(l.text!);
      expect(got).toEqual(whole);
    }
  });

  test("a line over the limit is measured, not kept, however it is cut", async () => {
    const long = Buffer.from(`ok\n${"x".repeat(50)}\r\nok2`);
    for (const size of [1, 4, 54, 100]) {
      const got: { text: string | undefined; size: number }[] = [];
      for await (const l of fileLines(cut(long, size), 20)) got.push(l);
      expect(got).toEqual([
        { text: "ok", size: 2 },
        { text: undefined, size: 50 },
        { text: "ok2", size: 3 },
      ]);
    }
  });

  test("an input file whose lines run across chunks of 1 MiB: every line parsed intact", async () => {
    const lines = Array.from({ length: 700 }, (_, i) => inputLine(i, 1000 + (i % 37)));
    const file = Buffer.from(lines.join("\n"));
    expect(file.byteLength).toBeGreaterThan(FILE_CHUNK_BYTES);
    // The line the first chunk's end falls in, not at its edge.
    const spanning = file.subarray(0, FILE_CHUNK_BYTES).toString("latin1").split("\n").length - 1;
    const parsed = await openaiLines(cut(file, FILE_CHUNK_BYTES), "/v1/chat/completions", limits);
    expect(parsed).toHaveLength(700);
    expect(parsed.every((l) => !l.failed)).toBe(true);
    const line = parsed[spanning]!;
    expect(line.custom_id).toBe(`r${spanning}`);
    expect(JSON.parse(line.request)).toEqual({
      url: "/v1/chat/completions",
      body: JSON.parse(lines[spanning]!).body,
    });
  });
});

/** The file store on one database, `raw` the same database for rows written as before migration 14. */
async function contract(store: BatchStore, raw: SqlRunner) {
  const id = `file-${Math.random().toString(16).slice(2)}`;
  const meta = { id, key_id: "k1", purpose: "batch", filename: "in.jsonl", created_at: "2026-11-01T00:00:00.000Z" };
  // 2.5 chunks, cut so that a chunk ends inside a four-byte character.
  const content = Buffer.from("🙂".repeat(Math.ceil((2.5 * FILE_CHUNK_BYTES) / 4)));
  const pieces = [...cut(Buffer.from(content), FILE_CHUNK_BYTES + 1)];
  let between = 0;
  const stored = await store.putFile(meta, pieces, async () => {
    between++;
  });
  expect(stored).toEqual({ ...meta, bytes: content.byteLength });
  // One statement and one turn of the loop per chunk.
  expect(between).toBe(3);
  const [rows] = await raw.all("SELECT COUNT(*) AS n FROM batch_file_chunks WHERE file_id = ?", [id]);
  expect(Number(rows!.n)).toBe(3);
  expect(await store.getFile("k1", id)).toEqual({ ...meta, bytes: content.byteLength });
  expect(await store.getFile("k2", id)).toBeUndefined();
  const back = await readAll(store.fileChunks(id));
  expect(back.equals(content)).toBe(true);

  // A file written as one row before migration 14 still reads, as one piece.
  const old = `file-old-${Math.random().toString(16).slice(2)}`;
  await raw.run(
    "INSERT INTO batch_files (id, key_id, purpose, filename, bytes, content, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    [old, "k1", "batch", "old.jsonl", 9, '{"a":"é"}', "2026-10-01T00:00:00.000Z"],
  );
  expect((await store.getFile("k1", old))?.bytes).toBe(9);
  expect((await readAll(store.fileChunks(old))).toString()).toBe('{"a":"é"}');

  // Nothing to store with skipEmpty: no file.
  expect(await store.putFile({ ...meta, id: `${id}-empty` }, [], undefined, true)).toBeUndefined();
  expect(await store.getFile("k1", `${id}-empty`)).toBeUndefined();

  // A file still being written is no file to a reader.
  let release = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  const slow = (async function* () {
    yield Buffer.from("a\n");
    await held;
    yield Buffer.from("b\n");
  })();
  const writing = store.putFile({ ...meta, id: `${id}-slow` }, slow);
  for (let i = 0; i < 100; i++) {
    const [r] = await raw.all("SELECT COUNT(*) AS n FROM batch_file_chunks WHERE file_id = ?", [`${id}-slow`]);
    if (Number(r!.n) === 1) break;
    await Bun.sleep(10);
  }
  expect(await store.getFile("k1", `${id}-slow`)).toBeUndefined();
  release();
  expect((await writing)?.bytes).toBe(4);
  expect((await readAll(store.fileChunks(`${id}-slow`))).toString()).toBe("a\nb\n");

  // Deleting: the key's own file only; its chunks go, one turn each.
  expect(await store.deleteFile("k2", id)).toBe(false);
  let turns = 0;
  expect(
    await store.deleteFile("k1", id, async () => {
      turns++;
    }),
  ).toBe(true);
  expect(turns).toBe(3);
  expect(await store.getFile("k1", id)).toBeUndefined();
  const [left] = await raw.all("SELECT COUNT(*) AS n FROM batch_file_chunks WHERE file_id = ?", [id]);
  expect(Number(left!.n)).toBe(0);
  expect(await store.deleteFile("k1", id)).toBe(false);

  // The purge: files made before the retention, with their chunks, and chunks left by a deletion cut short.
  await raw.run("INSERT INTO batch_file_chunks (file_id, n, content) VALUES (?, ?, ?)", [
    `${id}-orphan`,
    0,
    Buffer.from("x"),
  ]);
  await store.purgeBefore("2026-11-01T00:00:00.001Z");
  expect(await store.getFile("k1", old)).toBeUndefined();
  expect(await store.getFile("k1", `${id}-slow`)).toBeUndefined();
  const [all] = await raw.all("SELECT COUNT(*) AS n FROM batch_file_chunks WHERE file_id LIKE ?", [`${id}%`]);
  expect(Number(all!.n)).toBe(0);
}

describe("a file in chunks", () => {
  test("SQLite", async () => {
    const db = new Database(":memory:");
    migrateSqlite(db);
    const runner = sqliteRunner(db);
    await contract(new BatchStore(runner), runner);
  });

  test.skipIf(!postgresUp)("PostgreSQL", async () => {
    const db = await freshDatabase();
    cleanups.push(db.drop);
    const store = await PostgresStore.open(db.url);
    cleanups.unshift(() => store.close());
    const sql = new SQL(db.url);
    cleanups.unshift(() => sql.close());
    const raw = postgresRunner(sql, (e) => {
      throw e;
    });
    await contract(batchStoreOf(store), raw);
  });
});

describe("through the API", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  test("a file of three chunks: uploaded with turns of the loop, its content byte for byte, a batch made from it, deleted", async () => {
    const lines = Array.from({ length: 1500 }, (_, i) => inputLine(i, 1000 + (i % 37)));
    const file = Buffer.from(`${lines.join("\r\n")}\r\n`);
    expect(file.byteLength).toBeGreaterThan(2 * FILE_CHUNK_BYTES);
    const form = new FormData();
    form.set("purpose", "batch");
    form.set("file", new File([file], "in.jsonl"));
    const before = loopTurns.given;
    const up = await fetch(`${h.url}/v1/files`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.key}` },
      body: form,
    });
    const uploaded = (await up.json()) as { id: string; bytes: number };
    expect(up.status).toBe(200);
    expect(uploaded.bytes).toBe(file.byteLength);
    // A turn of the loop after each of its three chunks.
    expect(loopTurns.given - before).toBeGreaterThanOrEqual(3);

    const content = await h.call(`/v1/files/${uploaded.id}/content`);
    expect(content.status).toBe(200);
    expect(Buffer.from(await content.arrayBuffer()).equals(file)).toBe(true);

    const created = await h.call("/v1/batches", {
      method: "POST",
      body: JSON.stringify({ input_file_id: uploaded.id, endpoint: "/v1/chat/completions", completion_window: "24h" }),
    });
    const batch = (await created.json()) as { id: string; request_counts: { total: number; failed: number } };
    expect(created.status).toBe(200);
    // Every line read whole: none malformed, those across the chunks' ends included.
    expect(batch.request_counts).toMatchObject({ total: 1500, failed: 0 });
    await h.call(`/v1/batches/${batch.id}/cancel`, { method: "POST" });

    const del = await h.call(`/v1/files/${uploaded.id}`, { method: "DELETE" });
    expect(await del.json()).toEqual({ id: uploaded.id, object: "file", deleted: true });
    expect((await h.call(`/v1/files/${uploaded.id}/content`)).status).toBe(404);
    expect((await h.call(`/v1/files/${uploaded.id}`, { method: "DELETE" })).status).toBe(404);
  });
});
