/**
 * A large batch is handled in pieces, never whole (issue 27: no request holds the event loop for
 * long): the upstream batch's body is a stream made a piece at a time as the upstream reads it,
 * whose parts read back as the same lines; the upstream's results are read line by line as they
 * come, a line cut across two reads joined first; a refused group's lines go back to the queue,
 * and an ended group's answers are stored, a page at a time; and the queue's next line is found
 * by an index, not by reading every pending line (as are the lines in flight).
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { BatchStore, ORPHANS_SQL, takeLineSql } from "../../src/storage/batch-store";
import { PROTOCOLS } from "../../src/protocols";
import {
  UPSTREAM_PIECE_BYTES,
  UpstreamBatchError,
  type UpstreamLine,
  streamedBody,
} from "../../src/protocols/vendor-batch";
import { migrateSqlite } from "../../src/storage/migrations";
import { sqliteRunner } from "../../src/storage/sql-runner";
import type { Upstream } from "../../src/vocabulary/target";

/** `n` lines of about 600 characters (1.1 KB) each, every one a chat request naming its number. */
const upstreamLines = (n: number): UpstreamLine[] =>
  Array.from({ length: n }, (_, i) => ({
    customId: `line-${i + 1}`,
    body: { model: "beta-5", messages: [{ role: "user", content: `line ${i + 1} ${"é".repeat(500)}` }] },
  }));

const upstream = (protocol: "chat" | "messages"): Upstream =>
  ({
    vendor: "beta",
    protocol,
    baseURL: protocol === "chat" ? "http://up.test/v1" : "http://up.test",
    apiKey: "k",
    auth: protocol === "chat" ? "bearer" : "x-api-key",
  }) as Upstream; // only the fields the batch APIs read

/** A fetch that keeps each request with its body as the parts it was read in, and answers with `reply`. */
function recordingFetch(reply: (url: string) => Response) {
  const calls: { url: string; headers: Headers; streamed: boolean; parts: Uint8Array[]; body?: string }[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const parts: Uint8Array[] = [];
    const streamed = init?.body instanceof ReadableStream;
    if (init?.body instanceof ReadableStream) {
      const reader = (init.body as ReadableStream<Uint8Array>).getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value);
    }
    const body = typeof init?.body === "string" ? init.body : undefined;
    calls.push({ url: String(input), headers: new Headers(init?.headers), streamed, parts, body });
    return reply(String(input));
  }) as typeof globalThis.fetch;
  return { calls, fetch };
}

const text = (parts: Uint8Array[]) => Buffer.concat(parts).toString("utf8");

test("a chat-family upload is a stream in pieces of about 1 MiB that reads back as the same multipart form and lines", async () => {
  const lines = upstreamLines(8000); // 4.8 million characters: five pieces
  const { calls, fetch } = recordingFetch((url) =>
    Response.json(url.endsWith("/files") ? { id: "file-up" } : { id: "batch-up" }),
  );
  const id = await PROTOCOLS.chat.batches!.submit({ fetch }, upstream("chat"), "/v1/chat/completions", lines);
  expect(id).toBe("batch-up");
  const upload = calls[0]!;
  expect(upload.url).toBe("http://up.test/v1/files");
  expect(upload.streamed).toBe(true);
  expect(upload.parts.length).toBeGreaterThanOrEqual(4);
  for (const p of upload.parts) expect(p.byteLength).toBeLessThan(UPSTREAM_PIECE_BYTES * 2.5); // a piece: 1 MiB of characters, and a line
  // Read back as a form, the way the upstream reads it.
  const form = await new Request("http://up.test/v1/files", {
    method: "POST",
    headers: { "content-type": upload.headers.get("content-type")! },
    body: text(upload.parts),
  }).formData();
  expect(form.get("purpose")).toBe("batch");
  const file = form.get("file") as File;
  expect(file.name).toBe("turnpike-batch.jsonl");
  const rows = (await file.text())
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  expect(rows).toHaveLength(8000);
  expect(rows[0]).toEqual({ custom_id: "line-1", method: "POST", url: "/v1/chat/completions", body: lines[0]!.body });
  expect(rows[7999].body).toEqual(lines[7999]!.body);
  // The batch itself names the uploaded file.
  expect(JSON.parse(calls[1]!.body!)).toMatchObject({ input_file_id: "file-up", endpoint: "/v1/chat/completions" });
});

test("a messages batch's body is streamed too, and reads back as the same requests (without `stream`)", async () => {
  const lines = upstreamLines(4000).map((l, i) => (i === 0 ? { ...l, body: { ...l.body, stream: false } } : l));
  const { calls, fetch } = recordingFetch(() => Response.json({ id: "msgbatch_up" }));
  await PROTOCOLS.messages.batches!.submit({ fetch }, upstream("messages"), "/v1/messages", lines);
  expect(calls[0]!.streamed).toBe(true);
  expect(calls[0]!.parts.length).toBeGreaterThanOrEqual(2);
  const sent = JSON.parse(text(calls[0]!.parts)) as { requests: { custom_id: string; params: unknown }[] };
  expect(sent.requests).toHaveLength(4000);
  const { stream: _stream, ...first } = lines[0]!.body;
  expect(sent.requests[0]).toEqual({ custom_id: "line-1", params: first });
  expect(sent.requests[3999]).toEqual({ custom_id: "line-4000", params: lines[3999]!.body });
});

test("a streamed body is made as it is read: after the first piece, most lines are not yet written", async () => {
  let written = 0;
  const body = streamedBody(
    "[",
    upstreamLines(8000),
    (l) => {
      written++;
      return JSON.stringify(l);
    },
    ",",
    "]",
  );
  const reader = body.getReader();
  const first = await reader.read();
  expect(first.done).toBe(false);
  expect(written).toBeGreaterThan(0);
  expect(written).toBeLessThan(4000);
  const parts = [first.value!];
  for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value);
  expect(written).toBe(8000);
  expect((JSON.parse(text(parts)) as unknown[]).length).toBe(8000);
});

test("an upstream that refuses a batch part way stops the lines being read: the rest are never made", async () => {
  let made = 0;
  let closed = false;
  async function* lines() {
    try {
      for (const l of upstreamLines(8000)) {
        made++;
        yield l;
      }
    } finally {
      closed = true;
    }
  }
  // Reads the first piece, then refuses, as the simulator does past its body limit.
  const fetch = (async (_url: RequestInfo | URL, init?: RequestInit) => {
    const reader = (init!.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await reader.cancel();
    return Response.json({ error: { message: "too large" } }, { status: 400 });
  }) as typeof globalThis.fetch;
  const refused = await PROTOCOLS.chat
    .batches!.submit({ fetch }, upstream("chat"), "/v1/chat/completions", lines())
    .catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(UpstreamBatchError);
  expect((refused as UpstreamBatchError).refused).toBe(true);
  expect(made).toBeLessThan(4000);
  expect(closed).toBe(true);
});

test("an output file is read line by line as it comes: lines cut across reads (inside a character) are joined", async () => {
  const rows = Array.from({ length: 400 }, (_, i) =>
    JSON.stringify({
      custom_id: `line-${i + 1}`,
      response: { status_code: 200, body: { id: `r${i + 1}`, text: "ü".repeat(300) } },
      error: null,
    }),
  );
  const bytes = Buffer.from(`${rows.join("\n")}\nnot json\n`);
  // Served in pieces of 777 bytes: most cut a line, many a two-byte character.
  const pieces = (): ReadableStream<Uint8Array> => {
    let at = 0;
    return new ReadableStream({
      pull(out) {
        if (at >= bytes.byteLength) return out.close();
        out.enqueue(bytes.subarray(at, at + 777));
        at += 777;
      },
    });
  };
  const { fetch } = recordingFetch((url) =>
    url.endsWith("/content")
      ? new Response(pieces())
      : Response.json({ id: "b", status: "completed", output_file_id: "file-out", error_file_id: null }),
  );
  const { outcomes } = await PROTOCOLS.chat.batches!.results({ fetch }, upstream("chat"), "b");
  expect(outcomes.size).toBe(400);
  expect(outcomes.get("line-1")).toEqual({ status: 200, body: { id: "r1", text: "ü".repeat(300) } });
  expect(outcomes.get("line-400")).toEqual({ status: 200, body: { id: "r400", text: "ü".repeat(300) } });
});

/** A store on a fresh SQLite database at the newest migration, its lines all in group 0. */
async function storeWith(lines: number) {
  const db = new Database(":memory:");
  migrateSqlite(db);
  const s = new BatchStore(sqliteRunner(db));
  const job = {
    id: "batch_pieces",
    key_id: "k1",
    kind: "openai" as const,
    state: "active" as const,
    object: {},
    created_at: "2026-11-01T00:00:00.000Z",
    expires_at: "2026-11-02T00:00:00.000Z",
  };
  const rows = Array.from({ length: lines }, (_, i) => ({
    n: i + 1,
    custom_id: `c${i + 1}`,
    request: "{}",
    state: "pending" as const,
    result: null,
    failed: false,
  }));
  await s.createJob(job, rows);
  await s.route(
    job.id,
    [{ grp: 0, vendor: "beta", endpoint: "/v1/chat/completions" }],
    rows.map((r) => ({ n: r.n, grp: 0 })),
  );
  return { db, s, id: job.id };
}

test("a refused group's 450 lines go back to the queue a page at a time, with a turn between pages", async () => {
  const { s, id } = await storeWith(450);
  expect(await s.takeLine(id)).toBeUndefined(); // all in the group
  let turns = 0;
  await s.requeue(id, 0, async () => {
    turns++;
  });
  expect(turns).toBe(3); // 200 + 200 + 50
  expect((await s.groups(id))[0]!.state).toBe("queued");
  const taken: number[] = [];
  for (let l = await s.takeLine(id); l; l = await s.takeLine(id)) taken.push(l.n);
  expect(taken).toEqual(Array.from({ length: 450 }, (_, i) => i + 1));
});

test("an ended group's 450 answers are stored a page at a time; the lines it never answered close with it", async () => {
  const { s, id } = await storeWith(450);
  const answers = new Map(Array.from({ length: 449 }, (_, i) => [i + 1, `{"status":200,"body":${i + 1}}`] as const));
  let turns = 0;
  await s.groupEnded(id, 0, answers, "expired", async () => {
    turns++;
  });
  expect(turns).toBe(3);
  expect((await s.groups(id))[0]!.state).toBe("ended");
  const first = await s.takeLine(id, true);
  expect([first?.n, first?.upstream_result]).toEqual([1, '{"status":200,"body":1}']);
  const lines = await s.lines(id);
  expect(lines.filter((l) => l.upstream_result !== null)).toHaveLength(449);
  expect(lines.at(-1)!.state).toBe("expired");
});

test("the queue's next line and the next answered line are found by their indexes (migration 15), not by reading lines", async () => {
  const { db } = await storeWith(3);
  const plan = (answered: boolean) =>
    db
      .query<{ detail: string }, [string, string]>(`EXPLAIN QUERY PLAN ${takeLineSql(answered)}`)
      .all("b", "b")
      .map((r) => r.detail)
      .join("; ");
  expect(plan(false)).toContain("batch_lines_by_group (batch_id=? AND grp=? AND state=?)");
  expect(plan(true)).toContain("batch_lines_answered");
  // The lines in flight, looked for as each job is taken: by the state index too.
  const orphans = db
    .query<{ detail: string }, [string]>(`EXPLAIN QUERY PLAN ${ORPHANS_SQL}`)
    .all("b")
    .map((r) => r.detail)
    .join("; ");
  expect(orphans).toContain("batch_lines_by_state (batch_id=? AND state=?)");
});

test("lines in flight are found in order whatever order the database gives them", async () => {
  const { s, id } = await storeWith(5);
  await s.requeue(id, 0);
  for (let i = 0; i < 5; i++) await s.takeLine(id);
  await s.finishLine(id, 2, "done", "{}", false);
  expect((await s.orphans(id)).map((l) => l.n)).toEqual([1, 3, 4, 5]);
});
