/**
 * The floor of a metering gateway: the least any gateway that bills every token must add to the
 * bare proxy for a JSON `messages` call. It authenticates a key (one `Map` lookup of its hash),
 * reads and parses the request to learn the model, forwards the client's bytes unchanged, reads
 * and parses the reply to learn its usage, prices it, writes one usage row in a group commit
 * (SQLite, WAL, one prepared statement, no index) and answers with the reply's text and a request
 * id. No limits, no routing, no log, no metrics, no headers of its own beyond the id.
 *
 * A stream (`"stream": true`) is relayed chunk by chunk through JavaScript, as any relay that
 * meters must (a `direct` stream, flushed per chunk): each chunk is searched as bytes for the usage fields (`"input_tokens":`,
 * `"output_tokens":`), the numbers after them read, the chunk passed on unchanged; the row is
 * written when the stream ends.
 *
 * It speaks just enough of the gateway's surface for `bun run ab` to load it beside real builds
 * (`/health`, `POST /admin/keys`, `POST /v1/messages`, the same environment variables), so its
 * CPU per request can be set against the bare proxy's and the gateway's in the same seconds.
 * Its directory stands where a gateway directory would: `bun run ab -- bare floor ../apps/gateway`.
 */
import { Database, type SQLQueryBindings, type Statement } from "bun:sqlite";
import { createHash, randomBytes } from "node:crypto";

export const INPUT = new TextEncoder().encode('"input_tokens":');
export const OUTPUT = new TextEncoder().encode('"output_tokens":');

/** The number after the last `needle` in `chunk` (bytes, no decoding), or `previous` if none. */
export function numberAfter(chunk: Uint8Array, needle: Uint8Array, previous: number): number {
  let at = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).lastIndexOf(needle);
  if (at < 0) return previous;
  at += needle.length;
  while (chunk[at] === 32) at++;
  let n = 0;
  for (let c = chunk[at]!; c >= 48 && c <= 57; c = chunk[++at]!) n = n * 10 + (c - 48);
  return n;
}

/** One row a call, written in one transaction a turn of the event loop with the rows of the same turn. */
export function groupCommit<Row extends SQLQueryBindings[]>(
  db: Database,
  insert: Statement<unknown, SQLQueryBindings[]>,
): (row: Row) => void {
  let pending: Row[] = [];
  const commit = db.transaction((rows: Row[]) => {
    for (const r of rows) insert.run(...r);
  });
  return (row) => {
    if (pending.length === 0)
      setImmediate(() => {
        const rows = pending;
        pending = [];
        commit(rows);
      });
    pending.push(row);
  };
}

const PRICE_PER_TOKEN = { input: 1e-6, output: 5e-6 };

export function startMeteringFloor(env: Record<string, string | undefined>) {
  const upstream = (env.ALPHA_BASE_URL ?? "").replace(/\/$/, "") + "/v1/messages";
  const vendorKey = env.ALPHA_API_KEY ?? "";
  const adminKey = env.TURNPIKE_ADMIN_KEY ?? "";
  const db = new Database(env.TURNPIKE_DB ?? ":memory:", { create: true });
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
  db.exec(
    "CREATE TABLE IF NOT EXISTS usage (request_id TEXT PRIMARY KEY, key_id TEXT, model TEXT, input_tokens INTEGER, output_tokens INTEGER, cost_usd REAL, status INTEGER, created_at TEXT) WITHOUT ROWID",
  );
  const insert = db.prepare("INSERT INTO usage VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  type Row = [string, string, string, number, number, number, number, string];
  const record = groupCommit<Row>(db, insert);

  const keys = new Map<string, string>();
  const hash = (secret: string) => createHash("sha256").update(secret).digest("hex");

  return Bun.serve({
    port: Number(env.PORT ?? 0),
    hostname: env.HOST ?? "127.0.0.1",
    routes: {
      "/health": new Response("ok"),
      "/admin/keys": {
        POST: (req) => {
          if (req.headers.get("authorization") !== `Bearer ${adminKey}`) return new Response(null, { status: 401 });
          const secret = "sk-" + randomBytes(24).toString("hex");
          keys.set(hash(secret), "key_" + keys.size);
          return Response.json({ key: secret }, { status: 201 });
        },
      },
      "/v1/messages": {
        POST: async (req) => {
          const keyId = keys.get(hash(req.headers.get("x-api-key") ?? ""));
          if (!keyId) return Response.json({ type: "error", error: { type: "authentication_error" } }, { status: 401 });
          const text = await req.text();
          const body = JSON.parse(text) as { model?: string; stream?: boolean };
          const model = body.model ?? "";
          const res = await fetch(upstream, {
            method: "POST",
            headers: { "content-type": "application/json", "x-api-key": vendorKey, "anthropic-version": "2023-06-01" },
            body: text,
            signal: req.signal,
          });
          const id = "req_" + Bun.randomUUIDv7("hex");
          const row = (input: number, output: number): Row => [
            id,
            keyId,
            model,
            input,
            output,
            input * PRICE_PER_TOKEN.input + output * PRICE_PER_TOKEN.output,
            res.status,
            new Date().toISOString(),
          ];
          if (body.stream && res.body) {
            const counts = { input: 0, output: 0 };
            const upstreamBody = res.body;
            // Bun's direct stream: the cheapest relay through JavaScript found (bench/README.md).
            const metered = new ReadableStream({
              type: "direct",
              async pull(out: { write(chunk: Uint8Array): void; flush(): unknown; close(): void }) {
                const reader = upstreamBody.getReader();
                for (;;) {
                  const { done, value } = await reader.read();
                  if (done) break;
                  counts.input = numberAfter(value, INPUT, counts.input);
                  counts.output = numberAfter(value, OUTPUT, counts.output);
                  out.write(value);
                  await out.flush();
                }
                record(row(counts.input, counts.output));
                out.close();
              },
            } as unknown as UnderlyingDefaultSource<Uint8Array>);
            return new Response(metered, {
              status: res.status,
              headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": id },
            });
          }
          const reply = await res.text();
          const usage =
            (JSON.parse(reply) as { usage?: { input_tokens?: number; output_tokens?: number } }).usage ?? {};
          const input = usage.input_tokens ?? 0;
          const output = usage.output_tokens ?? 0;
          record(row(input, output));
          return new Response(reply, {
            status: res.status,
            headers: { "content-type": "application/json", "request-id": id },
          });
        },
      },
    },
  });
}

if (import.meta.main) {
  startMeteringFloor(process.env);
  // Exit on SIGTERM rather than die of it, so that a `--cpu-prof` run writes its profile (`bun run cost`).
  process.on("SIGTERM", () => process.exit(0));
}
