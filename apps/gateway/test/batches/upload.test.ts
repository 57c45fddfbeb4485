/**
 * A batch input file's upload read as it arrives (batches/upload.ts, issue 27: no request may hold
 * the event loop for more than about 100 ms): the `file` part's bytes come in pieces of the store's
 * chunk while the body is still being sent, byte for byte, whatever the order of the fields; a body
 * over the limit, cut short or not multipart is a 413 or a 400 in the chat family's envelope; a
 * wrong purpose, known only once the file is stored, leaves no file behind.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { GatewayError } from "@turnpike/providers";
import { readUpload } from "../../src/batches/upload";
import { type Harness, startHarness } from "../harness";

const BOUNDARY = "----turnpike-upload-test";

/** A multipart body's parts, as a client writes them. */
function multipart(parts: { name: string; filename?: string; content: Uint8Array | string }[], end = true) {
  const chunks: Uint8Array[] = [];
  const text = (s: string) => chunks.push(Buffer.from(s));
  for (const p of parts) {
    text(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"`);
    text(
      p.filename !== undefined ? `; filename="${p.filename}"\r\nContent-Type: application/jsonl\r\n\r\n` : "\r\n\r\n",
    );
    chunks.push(typeof p.content === "string" ? Buffer.from(p.content) : p.content);
    text("\r\n");
  }
  if (end) text(`--${BOUNDARY}--\r\n`);
  return Buffer.concat(chunks);
}

/** A request whose body is `bytes` sent in pieces of `size`, each piece only once the last was read. */
function requestOf(bytes: Uint8Array, size: number, sent: { n: number } = { n: 0 }, contentType?: string) {
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (at >= bytes.byteLength) return c.close();
      c.enqueue(bytes.subarray(at, at + size));
      at += size;
      sent.n = at;
    },
  });
  return new Request("http://gateway/v1/files", {
    method: "POST",
    headers: { "content-type": contentType ?? `multipart/form-data; boundary=${BOUNDARY}` },
    body,
  });
}

/** A file of `n` bytes whose every byte differs from its neighbours'. */
const fileOf = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 7 + (i >> 8)) & 0xff);

async function collect(pieces: AsyncIterable<Uint8Array>) {
  const got: Uint8Array[] = [];
  for await (const p of pieces) got.push(p.slice());
  return got;
}

async function refusal(p: Promise<unknown>): Promise<GatewayError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(GatewayError);
    return e as GatewayError;
  }
  throw new Error("expected a refusal");
}

describe("readUpload", () => {
  test("the file in pieces of the chunk size, byte for byte, its first piece before the body has all been sent; purpose after it", async () => {
    const file = fileOf(2_500_000);
    const body = multipart([
      { name: "file", filename: "in.jsonl", content: file },
      { name: "purpose", content: "batch" },
    ]);
    const sent = { n: 0 };
    const upload = await readUpload(requestOf(body, 64 * 1024, sent), 10_000_000, 1024 * 1024);
    expect(upload.filename).toBe("in.jsonl");
    const pieces: Uint8Array[] = [];
    let sentAtFirst = -1;
    for await (const p of upload.pieces) {
      if (sentAtFirst < 0) sentAtFirst = sent.n;
      pieces.push(p.slice());
    }
    expect(pieces.map((p) => p.byteLength)).toEqual([1048576, 1048576, 2_500_000 - 2 * 1048576]);
    expect(Buffer.concat(pieces).equals(Buffer.from(file))).toBe(true);
    // Read as it came: the first piece was handed on while most of the body was still unsent.
    expect(sentAtFirst).toBeLessThan(body.byteLength / 2);
    expect((await upload.fields()).get("purpose")).toBe("batch");
  });

  test("purpose first, a file ending on a piece's edge, the body in odd-sized reads", async () => {
    const file = fileOf(2 * 1024 * 1024);
    const body = multipart([
      { name: "purpose", content: "batch" },
      { name: "file", filename: "x.jsonl", content: file },
    ]);
    const upload = await readUpload(requestOf(body, 7777), 10_000_000, 1024 * 1024);
    const pieces = await collect(upload.pieces);
    expect(pieces.map((p) => p.byteLength)).toEqual([1048576, 1048576]);
    expect(Buffer.concat(pieces).equals(Buffer.from(file))).toBe(true);
    expect((await upload.fields()).get("purpose")).toBe("batch");
  });

  test("no file part: no filename, no piece, the fields", async () => {
    const upload = await readUpload(requestOf(multipart([{ name: "purpose", content: "batch" }]), 10), 1000, 100);
    expect(upload.filename).toBeUndefined();
    expect(await collect(upload.pieces)).toEqual([]);
    expect((await upload.fields()).get("purpose")).toBe("batch");
  });

  test("a file over the limit: a 413 while its pieces are read", async () => {
    const body = multipart([{ name: "file", filename: "big.jsonl", content: fileOf(300_000) }]);
    const upload = await readUpload(requestOf(body, 16 * 1024), 100_000, 32 * 1024);
    const e = await refusal(collect(upload.pieces));
    expect(e.status).toBe(413);
    expect(e.type).toBe("request_too_large");
  });

  test("a body cut short inside its file: a 400, not a stall", async () => {
    const body = multipart([{ name: "file", filename: "cut.jsonl", content: fileOf(50_000) }], false);
    const cut = body.subarray(0, body.byteLength - 1000);
    const upload = await readUpload(requestOf(cut, 4096), 1_000_000, 16 * 1024);
    const e = await refusal(collect(upload.pieces));
    expect(e.status).toBe(400);
    expect(e.message).toContain("multipart/form-data");
  });

  test("not multipart: a 400", async () => {
    const e = await refusal(readUpload(requestOf(Buffer.from("{}"), 10, { n: 0 }, "application/json"), 1000, 100));
    expect(e.status).toBe(400);
    expect(e.param).toBe("file");
  });
});

describe("POST /v1/files", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const upload = (body: Uint8Array) =>
    fetch(`${h.url}/v1/files`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.key}`, "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
      body: new Blob([body as Uint8Array<ArrayBuffer>]),
    });

  test("a purpose other than batch, sent after the file: a 400 naming purpose, and the stored file taken away", async () => {
    const res = await upload(
      multipart([
        { name: "file", filename: "in.jsonl", content: '{"custom_id":"a"}\n' },
        { name: "purpose", content: "fine-tune" },
      ]),
    );
    expect(res.status).toBe(400);
    const err = (await res.json()) as { error: { param: string; message: string } };
    expect(err.error.param).toBe("purpose");
    const raw = h.gw.deps.store as unknown as { db: { query(sql: string): { all(): unknown[] } } };
    expect(raw.db.query("SELECT id FROM batch_files").all()).toEqual([]);
    expect(raw.db.query("SELECT file_id FROM batch_file_chunks").all()).toEqual([]);
  });

  test("no file part: a 400 naming file; the right purpose and file: stored, its bytes back", async () => {
    const none = await upload(multipart([{ name: "purpose", content: "batch" }]));
    expect(none.status).toBe(400);
    expect(((await none.json()) as { error: { param: string } }).error.param).toBe("file");
    const text = '{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{}}\n';
    const ok = await upload(
      multipart([
        { name: "file", filename: "ok.jsonl", content: text },
        { name: "purpose", content: "batch" },
      ]),
    );
    expect(ok.status).toBe(200);
    const f = (await ok.json()) as { id: string; bytes: number; filename: string };
    expect(f.bytes).toBe(Buffer.byteLength(text));
    expect(f.filename).toBe("ok.jsonl");
    expect(await (await h.call(`/v1/files/${f.id}/content`)).text()).toBe(text);
    const raw = h.gw.deps.store as unknown as { db: { query(sql: string): { all(): unknown[] } } };
    expect(raw.db.query("SELECT id FROM batch_files").all()).toEqual([{ id: f.id }]);
  });
});
