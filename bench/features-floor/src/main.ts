/**
 * The floor of a gateway with Turnpike's per-request features: the metering floor
 * (metering-floor/) plus the cheapest form found of each thing Turnpike does on every call of
 * the benchmark's passthrough scenarios, written as one function per request with nothing shared
 * between calls but what depends only on the key and the model. It is not a gateway: it knows
 * one model family and one upstream, keeps its keys in memory and has no hooks, retries,
 * fallbacks, sessions or stored replies. It answers what the issue on performance (32) asks of
 * its targets: how much of the gap between Turnpike and the metering floor any gateway that does
 * these things must pay on this runtime, whatever its shape.
 *
 * Beyond the metering floor, per request:
 * - the request headers' size summed (the 431 answered in the caller's format);
 * - the key's rate limits: requests and tokens a minute in fixed windows, admitted on an estimate
 *   from the body's length and settled with the reply's usage; the limit headers on the reply;
 * - the body parsed and the fields the gateway reads checked (model, max_tokens, messages,
 *   stream), everything else forwarded;
 * - the model looked up in a catalog (deployment, upstream, prices, the reply's header template);
 * - an automatic cache breakpoint on the last user message (Turnpike's default for this vendor):
 *   the body serialised again;
 * - deadlines: an `AbortController` of the call's own and a 20 ms timer after which the client's
 *   going away is listened for (Turnpike's cheapest measured form, bench/README.md);
 * - the reply's model checked against the catalog's name (relabelled if the vendor answers
 *   another);
 * - reply headers: a per-deployment `Headers` template copied and completed with the request id
 *   and the three limit headers;
 * - a usage row as wide as Turnpike's (25 columns, keyed by key, time and request id) in a group
 *   commit;
 * - one JSON log line a request, gathered and written once per batch;
 * - a request counter and a latency histogram by model and status.
 *
 * A stream is relayed as the metering floor relays it (a `direct` stream flushed per chunk, the
 * usage numbers found as bytes); the first chunk is checked to open with an SSE line.
 *
 * `FLOOR_STEP` (steps.ts) adds runtime differences between this floor and Turnpike one at a time,
 * the rungs of `bun run ladder` (bench/README.md, "The proof: where the rest of the CPU goes").
 */
import { Database } from "bun:sqlite";
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
// The usage numbers found in a stream chunk's bytes, as the metering floor finds them.
import { INPUT, OUTPUT, groupCommit, numberAfter } from "../../metering-floor/src/main";
import { type Cells, GATEWAY_SRC, type Held, allocate, allocateBytes, calibrateSpin, spin, stepsFrom } from "./steps";

const MAX_HEADER_BYTES = 64 * 1024;
const LINK_AFTER_MS = 20;
const HISTOGRAM_MS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

interface Entry {
  model: string;
  deployment: string;
  upstreamModel: string;
  input: number;
  output: number;
  headers: Headers;
  streamHeaders: Headers;
}

interface Key {
  id: string;
  rpm: number;
  tpm: number;
  window: number;
  requests: number;
  tokens: number;
}

/**
 * The ladder's steps this process takes (steps.ts), resolved at start: what each request does
 * beyond the features floor, and the server it is served by.
 */
export interface Ladder {
  /** Extra cells a request allocates (JSON, stream), held to its end unless `drop`. */
  cells?: { json: Cells; stream: Cells; drop: boolean };
  /** Extra KiB of strings a request allocates (JSON, stream), held to its end. */
  bytes?: { json: number; stream: number };
  /** Busy work a request does, in µs of CPU (JSON, stream), at `rate` loop turns a µs. */
  spin?: { json: number; stream: number; rate: number };
  /** Turnpike's server wiring: Elysia's constructor (from the gateway's own dependencies). */
  elysia?: new (
    options: Record<string, unknown>,
  ) => ElysiaLike;
}

/** The part of an Elysia app the `server` step uses. */
interface ElysiaLike {
  get(path: string, handler: () => Response): ElysiaLike;
  post(path: string, handler: (ctx: { request: Request }) => Promise<Response>, hook?: { parse: "none" }): ElysiaLike;
  ws(path: string, handlers: { message(ws: unknown, message: unknown): void }): ElysiaLike;
  listen(options: { port: number; hostname: string }): ElysiaLike;
  server: ReturnType<typeof Bun.serve> | null;
}

export function startFeaturesFloor(env: Record<string, string | undefined>, ladder: Ladder = {}) {
  const upstream = (env.ALPHA_BASE_URL ?? "").replace(/\/$/, "") + "/v1/messages";
  const vendorKey = env.ALPHA_API_KEY ?? "";
  const adminKey = env.TURNPIKE_ADMIN_KEY ?? "";
  const db = new Database(env.TURNPIKE_DB ?? ":memory:", { create: true });
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
  db.exec(
    `CREATE TABLE IF NOT EXISTS usage (request_id TEXT NOT NULL, key_id TEXT NOT NULL, model TEXT NOT NULL,
     endpoint TEXT NOT NULL, stream INTEGER NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
     cache_read_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL, reasoning_tokens INTEGER NOT NULL,
     cost_usd REAL NOT NULL, status INTEGER NOT NULL, upstream_status INTEGER NOT NULL, latency_ms REAL NOT NULL,
     aborted INTEGER NOT NULL, estimated INTEGER NOT NULL, created_at TEXT NOT NULL, vendor TEXT, client TEXT,
     cache_write_1h_tokens INTEGER NOT NULL, upstream_model TEXT, deployment TEXT, attempts INTEGER,
     requested_model TEXT, team_id TEXT, PRIMARY KEY (key_id, created_at, request_id)) WITHOUT ROWID`,
  );
  const insert = db.prepare(`INSERT OR IGNORE INTO usage VALUES (${Array(25).fill("?").join(", ")})`);
  type Row = (string | number | null)[];
  const record = groupCommit<Row>(db, insert);

  // The request log: lines gathered and handed to the runtime's stdout writer once per batch
  // (every 64 K characters or 100 ms), as Turnpike writes its own.
  const sink = Bun.stdout.writer();
  let lines: string[] = [];
  let logged = 0;
  const flushLog = () => {
    if (logged === 0) return;
    const batch = lines.join("");
    lines = [];
    logged = 0;
    sink.write(batch);
    void sink.flush();
  };
  setInterval(flushLog, 100).unref();
  const log = (line: string) => {
    lines.push(line + "\n");
    logged += line.length + 1;
    if (logged >= 65536) flushLog();
  };

  // Metrics: a counter and a histogram a (model, status), found by one string key.
  const counters = new Map<string, { n: number; buckets: number[]; sum: number }>();
  const observe = (model: string, status: number, ms: number) => {
    const k = `${model}|${status}`;
    let c = counters.get(k);
    if (!c) counters.set(k, (c = { n: 0, buckets: HISTOGRAM_MS.map(() => 0), sum: 0 }));
    c.n++;
    c.sum += ms;
    for (let i = 0; i < HISTOGRAM_MS.length; i++) if (ms <= HISTOGRAM_MS[i]!) c.buckets[i]!++;
  };

  const catalogEntry = (model: string): Entry => {
    const headers = new Headers({
      "content-type": "application/json",
      "x-turnpike-model": model,
      "x-turnpike-deployment": "alpha",
      "x-turnpike-attempts": "1",
      "x-turnpike-upstream": "alpha",
      "x-turnpike-upstream-model": model,
    });
    const streamHeaders = new Headers(headers);
    streamHeaders.set("content-type", "text/event-stream");
    streamHeaders.set("cache-control", "no-cache");
    return { model, deployment: "alpha", upstreamModel: model, input: 1e-6, output: 5e-6, headers, streamHeaders };
  };
  const catalog = new Map<string, Entry>(
    ["alpha-haiku-4-5", "alpha-sonnet-4-6", "alpha-opus-4-8"].map((m) => [m, catalogEntry(m)]),
  );

  const keys = new Map<string, Key>();
  const hash = (secret: string) => createHash("sha256").update(secret).digest("hex");
  let isoSecond = 0;
  let isoText = "";
  const resetText = (windowStart: number) => {
    const s = windowStart + 60;
    if (s !== isoSecond) {
      isoSecond = s;
      isoText = new Date(s * 1000).toISOString().slice(0, 19) + "Z";
    }
    return isoText;
  };

  const error = (status: number, type: string, message: string) =>
    Response.json({ type: "error", error: { type, message } }, { status });

  const messages = async (req: Request): Promise<Response> => {
    const started = performance.now();
    let size = 0;
    req.headers.forEach((v, k) => {
      size += k.length + v.length + 4;
    });
    if (size > MAX_HEADER_BYTES) return error(431, "invalid_request_error", "Request headers are too large.");
    const key = keys.get(hash(req.headers.get("x-api-key") ?? ""));
    if (!key) return error(401, "authentication_error", "Invalid API key.");
    const text = await req.text();
    let body: { model?: unknown; max_tokens?: unknown; messages?: unknown; stream?: unknown };
    try {
      body = JSON.parse(text);
    } catch {
      return error(400, "invalid_request_error", "The body is not JSON.");
    }
    const model = body.model;
    if (typeof model !== "string") return error(400, "invalid_request_error", "model: a string is required.");
    if (typeof body.max_tokens !== "number" || !Number.isInteger(body.max_tokens) || body.max_tokens < 1)
      return error(400, "invalid_request_error", "max_tokens: a positive integer is required.");
    const msgs = body.messages;
    if (!Array.isArray(msgs) || msgs.length === 0)
      return error(400, "invalid_request_error", "messages: a non-empty array is required.");
    const stream = body.stream === true;
    // The ladder's per-request steps (steps.ts): cells held until the request ends, half the busy
    // work before the upstream call and half as it ends.
    const held: Held = [];
    if (ladder.cells) await allocate(stream ? ladder.cells.stream : ladder.cells.json, held);
    if (ladder.cells?.drop) held.length = 0;
    if (ladder.bytes) allocateBytes(stream ? ladder.bytes.stream : ladder.bytes.json, held);
    const spinUs = ladder.spin ? (stream ? ladder.spin.stream : ladder.spin.json) / 2 : 0;
    if (ladder.spin) spin(spinUs, ladder.spin.rate);
    const entry = catalog.get(model);
    if (!entry) return error(404, "not_found_error", `model: ${model} is not served here.`);
    // Limits: fixed one-minute windows, admitted on an estimate, settled with the usage.
    const now = Math.floor(Date.now() / 1000);
    const windowStart = now - (now % 60);
    if (key.window !== windowStart) {
      key.window = windowStart;
      key.requests = 0;
      key.tokens = 0;
    }
    const estimate = (text.length >> 2) + body.max_tokens;
    if (key.requests + 1 > key.rpm || key.tokens + estimate > key.tpm)
      return error(429, "rate_limit_error", "The key's rate limit is spent.");
    key.requests++;
    key.tokens += estimate;
    // An automatic cache breakpoint on the last user message's last block.
    const last = msgs[msgs.length - 1] as { role?: unknown; content?: unknown };
    if (last && last.role === "user") {
      if (typeof last.content === "string")
        last.content = [{ type: "text", text: last.content, cache_control: { type: "ephemeral" } }];
      else if (Array.isArray(last.content) && last.content.length > 0)
        (last.content[last.content.length - 1] as Record<string, unknown>).cache_control ??= { type: "ephemeral" };
    }
    const sent = JSON.stringify(body);
    // Deadlines: the call's own abort, the client linked once the answer is late.
    const own = new AbortController();
    const timer = setTimeout(() => {
      req.signal.addEventListener("abort", () => own.abort(), { once: true });
    }, LINK_AFTER_MS);
    let res: Response;
    try {
      res = await fetch(upstream, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": vendorKey, "anthropic-version": "2023-06-01" },
        body: sent,
        signal: own.signal,
      });
    } catch (e) {
      return error(502, "api_error", `Could not reach the upstream: ${String(e)}`);
    } finally {
      clearTimeout(timer);
    }
    const id = "req_" + Bun.randomUUIDv7("hex");
    const headers = new Headers(stream ? entry.streamHeaders : entry.headers);
    headers.set("request-id", id);
    headers.set("x-request-id", id);
    headers.set("anthropic-ratelimit-requests-limit", String(key.rpm));
    headers.set("anthropic-ratelimit-requests-remaining", String(key.rpm - key.requests));
    headers.set("anthropic-ratelimit-requests-reset", resetText(windowStart));
    const finish = (input: number, output: number, status: number, aborted: boolean) => {
      if (ladder.spin) spin(spinUs, ladder.spin.rate);
      held.length = 0;
      key.tokens += input + output - estimate;
      const cost = input * entry.input + output * entry.output;
      const ms = performance.now() - started;
      const at = new Date().toISOString();
      record([
        id,
        key.id,
        model,
        "messages",
        stream ? 1 : 0,
        input,
        output,
        0,
        0,
        0,
        cost,
        status,
        res.status,
        ms,
        aborted ? 1 : 0,
        0,
        at,
        "alpha",
        null,
        0,
        entry.upstreamModel,
        entry.deployment,
        1,
        null,
        null,
      ]);
      log(
        JSON.stringify({
          level: "info",
          time: at,
          request_id: id,
          key_id: key.id,
          endpoint: "messages",
          model,
          vendor: "alpha",
          status,
          upstream_status: res.status,
          attempts: 1,
          stream,
          latency_ms: Math.round(ms * 100) / 100,
          input_tokens: input,
          output_tokens: output,
          cost_usd: cost,
          aborted,
          client: req.headers.get("user-agent"),
          msg: "request",
        }),
      );
      observe(model, status, ms);
    };
    if (stream && res.body && res.ok) {
      const counts = { input: 0, output: 0 };
      const upstreamBody = res.body;
      const metered = new ReadableStream({
        type: "direct",
        async pull(out: { write(chunk: Uint8Array): void; flush(): unknown; close(): void }) {
          const reader = upstreamBody.getReader();
          let first = true;
          let aborted = false;
          try {
            for (;;) {
              const { done, value } = await reader.read();
              if (done) break;
              // The first chunk opens an SSE line, or the stream is not one.
              if (first && value[0] !== 0x65 && value[0] !== 0x64 && value[0] !== 0x3a) throw new Error("not SSE");
              first = false;
              counts.input = numberAfter(value, INPUT, counts.input);
              counts.output = numberAfter(value, OUTPUT, counts.output);
              out.write(value);
              await out.flush();
            }
          } catch {
            aborted = true;
          }
          finish(counts.input, counts.output, 200, aborted);
          out.close();
        },
      } as unknown as UnderlyingDefaultSource<Uint8Array>);
      return new Response(metered, { status: res.status, headers });
    }
    const reply = await res.text();
    const parsed = JSON.parse(reply) as {
      model?: string;
      usage?: { input_tokens?: number; output_tokens?: number };
    };
    const usage = parsed.usage ?? {};
    finish(usage.input_tokens ?? 0, usage.output_tokens ?? 0, res.status, false);
    const out = parsed.model === undefined || parsed.model === model ? reply : reply.replace(parsed.model, model);
    return new Response(out, { status: res.status, headers });
  };

  const addKey = async (req: Request) => {
    if (req.headers.get("authorization") !== `Bearer ${adminKey}`) return new Response(null, { status: 401 });
    const asked = (await req.json()) as { rpm?: number; tpm?: number };
    const secret = "sk-" + randomBytes(24).toString("hex");
    keys.set(hash(secret), {
      id: "key_" + keys.size,
      rpm: asked.rpm ?? Number.MAX_SAFE_INTEGER,
      tpm: asked.tpm ?? Number.MAX_SAFE_INTEGER,
      window: 0,
      requests: 0,
      tokens: 0,
    });
    return Response.json({ key: secret }, { status: 201 });
  };

  if (ladder.elysia) {
    // Turnpike's server (apps/gateway/src/app.ts, http/route.ts): Elysia with the idle timeout
    // raised to 255 s, no body cap, a WebSocket route (compressed), and the inference route on
    // Bun's router, called through a wrapper that checks for the caller's request id first.
    const direct = (req: Request) => {
      const kept = req.headers.get("x-request-id");
      const reply = messages(req);
      if (kept === null) return reply;
      return reply.then((r) => {
        r.headers.set("x-request-id", kept);
        return r;
      });
    };
    const app = new ladder.elysia({
      serve: {
        idleTimeout: 255,
        maxRequestBodySize: Number.MAX_SAFE_INTEGER,
        routes: { "/v1/messages": { POST: direct } },
      },
      websocket: { maxPayloadLength: 32 * 1024 * 1024, perMessageDeflate: true, idleTimeout: 255 },
    })
      .get("/health", () => new Response("ok"))
      .post("/admin/keys", ({ request }) => addKey(request), { parse: "none" })
      .ws("/v1/responses", { message() {} })
      .listen({ port: Number(env.PORT ?? 0), hostname: env.HOST ?? "127.0.0.1" });
    if (!app.server) throw new Error("Elysia did not start its server");
    return app.server;
  }

  return Bun.serve({
    port: Number(env.PORT ?? 0),
    hostname: env.HOST ?? "127.0.0.1",
    routes: {
      "/health": new Response("ok"),
      "/admin/keys": { POST: addKey },
      "/v1/messages": { POST: messages },
    },
  });
}

/**
 * Turnpike's cells per request less the features floor's, by kind (`bun run heap` of both,
 * 2026-11-28: README, "The proof"). `FLOOR_CELLS` / `FLOOR_CELLS_STREAM` ("strings,objects,
 * arrays,closures,promises") replace them.
 */
const CELLS = { json: "66,57,45,37,13", stream: "98,103,69,85,21" };
/**
 * The rest of Turnpike's extra allocation in KiB per request: `bun run heap -- --gc-log` read 78 kB
 * allocated per JSON request between collections for Turnpike, 7 for the features floor and 28
 * with the `cells` step (2026-11-28); the stream's the same way (`FLOOR_BYTES_KIB`, `FLOOR_BYTES_KIB_STREAM`).
 */
const BYTES_KIB = { json: "48", stream: "88" };
/** Turnpike's JavaScript thread per request less the floor's at the rung below `spin`, in µs (`FLOOR_SPIN_US`, `FLOOR_SPIN_US_STREAM`). */
const SPIN_US = { json: "12", stream: "45" };

const cellsOf = (text: string): Cells => {
  const [strings = 0, objects = 0, arrays = 0, closures = 0, promises = 0] = text.split(",").map(Number);
  return { strings, objects, arrays, closures, promises };
};

/** The ladder as `FLOOR_STEP` asks (steps.ts), its modules loaded and its gateway booted. */
export async function ladderFrom(env: Record<string, string | undefined>): Promise<Ladder> {
  const steps = stepsFrom(env.FLOOR_STEP);
  const ladder: Ladder = {};
  if (steps.has("server")) {
    // Turnpike's own copy of Elysia (the bench workspace does not depend on it).
    const mod = (await import(join(GATEWAY_SRC, "..", "node_modules", "elysia"))) as { Elysia: Ladder["elysia"] };
    ladder.elysia = mod.Elysia;
  }
  if (steps.has("modules") || steps.has("booted")) {
    await import(join(GATEWAY_SRC, "app.ts"));
    await import(join(GATEWAY_SRC, "boot.ts"));
  }
  if (steps.has("booted")) {
    const { loadConfig } = (await import(join(GATEWAY_SRC, "config", "config.ts"))) as {
      loadConfig(env: Record<string, string | undefined>): unknown;
    };
    const { bootGateway } = (await import(join(GATEWAY_SRC, "boot.ts"))) as {
      bootGateway(config: unknown): Promise<unknown>;
    };
    // Its own store beside the floor's; it serves nothing, but its heap, caches and timers run.
    booted = await bootGateway(loadConfig({ ...env, TURNPIKE_DB: `${env.TURNPIKE_DB ?? ":memory:"}.gw` }));
  }
  if (steps.has("cells") || steps.has("garbage"))
    ladder.cells = {
      json: cellsOf(env.FLOOR_CELLS ?? CELLS.json),
      stream: cellsOf(env.FLOOR_CELLS_STREAM ?? CELLS.stream),
      drop: !steps.has("cells"),
    };
  if (steps.has("bytes"))
    ladder.bytes = {
      json: Number(env.FLOOR_BYTES_KIB ?? BYTES_KIB.json),
      stream: Number(env.FLOOR_BYTES_KIB_STREAM ?? BYTES_KIB.stream),
    };
  if (steps.has("spin"))
    ladder.spin = {
      json: Number(env.FLOOR_SPIN_US ?? SPIN_US.json),
      stream: Number(env.FLOOR_SPIN_US_STREAM ?? SPIN_US.stream),
      rate: calibrateSpin(),
    };
  return ladder;
}
/** The gateway the `booted` step keeps alive beside the floor. */
export let booted: unknown;

if (import.meta.main) {
  startFeaturesFloor(process.env, await ladderFrom(process.env));
  // Exit on SIGTERM rather than die of it, so that a `--cpu-prof` run writes its profile (`bun run cost`).
  process.on("SIGTERM", () => process.exit(0));
}
