/**
 * How long one large request body holds the gateway's event loop, through each route that reads
 * a body (issue 27, item 1). Starts the gateway as the README does (no vendor keys: the simulator
 * answers in the gateway's own process; SQLite), then for each route and size sends one body
 * while a second client (a worker thread) sends `GET /health` every 5 ms; prints the longest
 * `/health` answer while the body was in flight, the gateway's RSS growth, and the body's status.
 *
 *   bun scripts/event-loop-hold.ts [--sizes 1,8,32] [--values N] [--shape turns|blob] [--only TEXT] [--skip TEXT,...]
 *        [--port 18150] [--env NAME=VALUE]... [--gateway-dir DIR] [--cpu-prof DIR]
 *
 * `--only A|B`: the routes whose name holds A or B (`--only "no body|v1/batches"`: the machine's
 * own delay and a batch). `HOLD_PRELOAD=scripts/loop-stalls.ts` prints each stall of the
 * gateway's event loop with the time its thread spent on a CPU and waiting for one meanwhile: on
 * a loaded machine most of a long `/health` is the thread waiting for a CPU, not work.
 *
 * `turns`: the worst case for the event loop, a body of many small JSON values (two-word
 * conversation turns, about 12 values per 100 bytes); `blob`: one long string (an image). Each
 * row runs on a fresh gateway, so RSS growth is that body's alone. `--values N` sends, instead of
 * bodies of given sizes, one body per route of as many turns as fit in N JSON values (what
 * `TURNPIKE_MAX_BODY_VALUES` counts): `--values 99900` is a body just within the default limit.
 *
 * `POST /v1/files (batch input)`: the upload of a batch input file of `--batch-lines` lines
 * (default 50,000, the line limit) of `--line-bytes` each (default 2,000: 100 MB, the file
 * limit), every line a chat request of two-word turns. `POST /v1/batches (file)`: that file
 * uploaded (not measured), then the batch is created and followed
 * while the worker prepares, sends and replays its lines, for up to `--follow-s` seconds (default
 * 60; `--follow-s 0`: its creation alone) or until it ends; the row is the longest `/health` over
 * that time (status: the batch's). Both run once whatever `--sizes` says.
 *
 * `ledger: …` (issue 46): the admin reads the dashboard makes, each once, against a ledger filled
 * beforehand by scripts/seed-ledger.ts (`--only ledger --env TURNPIKE_DB=/tmp/ledger.db`, or
 * `--env TURNPIKE_DATABASE_URL=…`); MB is then the reply's size. `ledger: dashboard page load` is
 * the usage view's reads and the key list and request log, one after another.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : dflt;
};
const sizes = opt("sizes", "1,8,32").split(",").map(Number);
const shape = opt("shape", "turns");
/** `--values N`: each body holds about N JSON values (turns up to N, less the body's own few), whatever its bytes. */
const valuesTarget = Number(opt("values", "0"));
const only = opt("only", "");
/** `--skip TEXT,...`: leave out the routes whose name holds any of these. */
const skip = opt("skip", "").split(",").filter(Boolean);
const port = Number(opt("port", "18150"));
/** The gateway app to run (`--gateway-dir`: a copy of another build, its node_modules linked, to compare). */
const gatewayDir = opt("gateway-dir", "");
/** `--cpu-prof DIR`: the gateway writes a CPU profile per row there (`bun --cpu-prof`), to see where the time went. */
const cpuProf = opt("cpu-prof", "");
const extraEnv: Record<string, string> = {};
args.forEach((a, i) => {
  if (a === "--env" && args[i + 1]) {
    const [k, ...v] = args[i + 1]!.split("=");
    extraEnv[k!] = v.join("=");
  }
});
const MB = 1024 * 1024;
const batchLines = Number(opt("batch-lines", "50000"));
const lineBytes = Number(opt("line-bytes", "2000"));
const followS = Number(opt("follow-s", "60"));
const root = join(import.meta.dir, "..");
const base = `http://127.0.0.1:${port}`;
const adminKey = `admin-${crypto.randomUUID()}-${crypto.randomUUID()}`;

/** JSON values in `v` as the gateway's census counts them: the root, each array element and each object member. */
function valuesOf(v: unknown): number {
  if (typeof v !== "object" || v === null) return 1;
  return 1 + Object.values(v).reduce((n: number, x) => n + valuesOf(x), 0);
}
/** Turns of `make(i)` until the JSON passes `bytes` (or, with `--values`, as many as fit in that many values). */
function fill<T>(bytes: number, make: (i: number) => T): T[] {
  const one = JSON.stringify(make(0)).length + 1;
  const length = valuesTarget
    ? Math.floor((valuesTarget - 20) / valuesOf(make(0)))
    : Math.max(1, Math.ceil(bytes / one));
  return Array.from({ length }, (_, i) => make(i));
}
const blob = (bytes: number) => "A".repeat(bytes);
const role = (i: number) => (i % 2 ? "assistant" : "user");

/** The batch input file: `--batch-lines` lines of about `--line-bytes` each, every line a chat request of two-word turns. */
function batchInput(): string {
  const turns = (i: number, n: number) =>
    Array.from({ length: n }, (_, t) => ({ role: role(t), content: `turn ${i}.${t} hi` }));
  const line = (i: number, n: number) =>
    JSON.stringify({
      custom_id: `r${i}`,
      method: "POST",
      url: "/v1/chat/completions",
      body: { model: "beta-5", max_tokens: 8, messages: [...turns(i, n), { role: "user", content: "end" }] },
    });
  const perTurn = line(0, 2).length - line(0, 1).length || 30;
  const n = Math.max(1, Math.floor((lineBytes - line(0, 0).length) / perTurn));
  return Array.from({ length: batchLines }, (_, i) => line(i, n)).join("\n");
}

interface Case {
  name: string;
  send(bytes: number, key: string): Promise<number | string>;
  /** Work done before the pings start (not measured): what `send` then reads. */
  before?(key: string): Promise<void>;
  /** Run once, not once per size (the batch input file has its own size). */
  once?: boolean;
}

/** The size in bytes of the last body sent (its JSON text, or the uploaded file). */
let lastBodyBytes = 0;
const post = async (path: string, key: string, body: string | FormData, headers: Record<string, string> = {}) => {
  lastBodyBytes = typeof body === "string" ? Buffer.byteLength(body) : ((body.get("file") as File | null)?.size ?? 0);
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "x-api-key": key, "x-goog-api-key": key, ...headers },
    body,
  });
  await res.arrayBuffer();
  return res.status;
};
const json = { "content-type": "application/json" };

const messagesBody = (bytes: number, model = "alpha-haiku-4-5") =>
  shape === "blob"
    ? { model, max_tokens: 16, messages: [{ role: "user", content: blob(bytes) }] }
    : {
        model,
        max_tokens: 16,
        messages: [
          ...fill(bytes, (i) => ({ role: role(i), content: [{ type: "text", text: `turn ${i} hi` }] })),
          { role: "user", content: "end" },
        ].slice(-100_000),
      };
const chatBody = (bytes: number) =>
  shape === "blob"
    ? { model: "beta-5", messages: [{ role: "user", content: blob(bytes) }] }
    : { model: "beta-5", messages: fill(bytes, (i) => ({ role: role(i), content: `turn ${i} hi` })) };

/** An admin read; its reply's size is what the MB column shows. */
const adminGet = async (path: string) => {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${adminKey}` } });
  lastBodyBytes = (await res.arrayBuffer()).byteLength;
  return res.status;
};
const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** The dashboard's default chart: the 14 days up to today, and the 14 before them. */
const chartRange = (back: number) =>
  `since=${dayOf(Date.now() - (13 + back) * DAY_MS)}&until=${dayOf(Date.now() - back * DAY_MS)}`;
const monthAgo = () => new Date(Date.now() - 30 * DAY_MS).toISOString();
const ledgerReads: [string, () => string][] = [
  ["usage/daily by model, 14 days", () => `/admin/usage/daily?by=model&${chartRange(0)}`],
  ["usage/daily by key, 14 days", () => `/admin/usage/daily?by=key&${chartRange(0)}`],
  ["usage/daily by team, 14 days", () => `/admin/usage/daily?by=team&${chartRange(0)}`],
  ["usage group_by=key,model, 30 days", () => `/admin/usage?group_by=key,model&since=${monthAgo()}`],
  ["usage group_by=model,day, 30 days", () => `/admin/usage?group_by=model,day&since=${monthAgo()}`],
  ["usage group_by=team", () => "/admin/usage?group_by=team"],
  ["requests limit=200", () => "/admin/requests?limit=200"],
  ["usage page of 1000", () => "/admin/usage?limit=1000"],
  ["usage page of 1000, one model", () => "/admin/usage?limit=1000&model=model-3"],
  ["usage page of 1000, one key", () => "/admin/usage?limit=1000&key_id=key_seed_7"],
  ["keys", () => "/admin/keys"],
];

const cases: Case[] = [
  // The machine's own delay: the longest /health over 0.5 s with no body in flight (on a busy
  // machine it is not zero, and every row below includes it).
  { name: "(no body)", send: () => Bun.sleep(500).then(() => 0) },
  { name: "POST /v1/messages", send: (b, k) => post("/v1/messages", k, JSON.stringify(messagesBody(b)), json) },
  {
    name: "POST /v1/messages →chat",
    send: (b, k) => post("/v1/messages", k, JSON.stringify(messagesBody(b, "beta-5")), json),
  },
  {
    name: "POST /v1/chat/completions",
    send: (b, k) => post("/v1/chat/completions", k, JSON.stringify(chatBody(b)), json),
  },
  {
    name: "POST /v1/responses",
    send: (b, k) =>
      post(
        "/v1/responses",
        k,
        JSON.stringify({ model: "beta-5", input: shape === "blob" ? blob(b) : chatBody(b).messages }),
        json,
      ),
  },
  {
    name: "WS /v1/responses frame",
    send: (b, k) =>
      new Promise((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/responses`, { headers: { authorization: `Bearer ${k}` } });
        ws.onopen = () => {
          const frame = JSON.stringify({
            type: "response.create",
            model: "beta-5",
            input: shape === "blob" ? blob(b) : chatBody(b).messages,
          });
          lastBodyBytes = Buffer.byteLength(frame);
          ws.send(frame);
        };
        ws.onmessage = (ev) => {
          const frame = JSON.parse(String(ev.data)) as { type?: string; status?: number; error?: unknown };
          if (frame.type === "error" || frame.type === "response.completed" || frame.type === "response.failed") {
            ws.close();
            resolve(frame.type === "error" ? (frame.status ?? 400) : 200);
          }
        };
        ws.onerror = () => reject(new Error("websocket error"));
        ws.onclose = () => resolve(0);
      }),
  },
  {
    name: "POST generateContent",
    send: (b, k) =>
      post(
        "/v1beta/models/gamma-3-flash:generateContent",
        k,
        JSON.stringify({
          contents:
            shape === "blob"
              ? [{ role: "user", parts: [{ text: blob(b) }] }]
              : fill(b, (i) => ({ role: i % 2 ? "model" : "user", parts: [{ text: `turn ${i} hi` }] })),
        }),
        json,
      ),
  },
  {
    name: "POST /v1/messages/count_tokens",
    send: (b, k) => post("/v1/messages/count_tokens", k, JSON.stringify(messagesBody(b)), json),
  },
  {
    name: "POST /v1/embeddings",
    send: (b, k) =>
      post(
        "/v1/embeddings",
        k,
        JSON.stringify({
          model: "beta-embedding-3-small",
          input: shape === "blob" ? blob(b) : fill(b, (i) => `text ${i}`),
        }),
        json,
      ),
  },
  {
    name: "POST /v1/files (JSONL)",
    send: (b, k) => {
      const line = (i: number) =>
        JSON.stringify({
          custom_id: `r${i}`,
          method: "POST",
          url: "/v1/chat/completions",
          body: { model: "beta-5", messages: [{ role: "user", content: `hi ${i}` }] },
        });
      const lines = fill(b, line).map((_, i) => line(i));
      const form = new FormData();
      form.set("purpose", "batch");
      form.set("file", new File([lines.join("\n")], "in.jsonl"));
      return post("/v1/files", k, form);
    },
  },
  {
    name: "POST /v1/files (batch input)",
    once: true,
    send: async (_b, k) => {
      const text = batchInput();
      const form = new FormData();
      form.set("purpose", "batch");
      form.set("file", new File([text], "in.jsonl"));
      return post("/v1/files", k, form);
    },
  },
  (() => {
    let fileId = "";
    return {
      name: "POST /v1/batches (file)",
      once: true,
      async before(k: string) {
        const text = batchInput();
        const form = new FormData();
        form.set("purpose", "batch");
        form.set("file", new File([text], "in.jsonl"));
        const res = await fetch(`${base}/v1/files`, {
          method: "POST",
          headers: { authorization: `Bearer ${k}` },
          body: form,
        });
        const file = (await res.json()) as { id?: string };
        if (!file.id) throw new Error(`upload failed: ${res.status} ${JSON.stringify(file).slice(0, 300)}`);
        fileId = file.id;
        lastBodyBytes = text.length;
      },
      async send(_b: number, k: string) {
        const headers = { authorization: `Bearer ${k}`, ...json };
        const res = await fetch(`${base}/v1/batches`, {
          method: "POST",
          headers,
          body: JSON.stringify({ input_file_id: fileId, endpoint: "/v1/chat/completions", completion_window: "24h" }),
        });
        const batch = (await res.json()) as { id?: string; status?: string };
        if (!batch.id) return res.status;
        const end = performance.now() + followS * 1000;
        let status = batch.status ?? "";
        while (performance.now() < end && !["completed", "failed", "expired", "cancelled"].includes(status)) {
          await Bun.sleep(250);
          const got = (await (await fetch(`${base}/v1/batches/${batch.id}`, { headers })).json()) as {
            status?: string;
            request_counts?: { completed: number; total: number };
          };
          status = `${got.status}`;
          if (got.request_counts) status += ` ${got.request_counts.completed}/${got.request_counts.total}`;
          if (got.status === "completed" || got.status === "failed") status = `${got.status}`;
        }
        return status;
      },
    };
  })(),
  {
    name: "POST /v1/messages/batches",
    send: (b, k) =>
      post(
        "/v1/messages/batches",
        k,
        JSON.stringify({
          requests: fill(b, (i) => ({
            custom_id: `r${i}`,
            params: { model: "alpha-haiku-4-5", max_tokens: 8, messages: [{ role: "user", content: `hi ${i}` }] },
          })).slice(0, 50_000),
        }),
        json,
      ),
  },
  {
    name: "POST /mcp",
    send: (b, k) =>
      post(
        "/mcp",
        k,
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "x", version: "1" },
            pad: fill(b, (i) => i),
          },
        }),
        { ...json, accept: "application/json, text/event-stream" },
      ),
  },
  {
    name: "POST /admin/keys",
    send: (b) => post("/admin/keys", adminKey, JSON.stringify({ name: "big", pad: fill(b, (i) => ({ n: i })) }), json),
  },
  ...ledgerReads.map(([name, path]): Case => ({ name: `ledger: ${name}`, once: true, send: () => adminGet(path()) })),
  {
    name: "ledger: dashboard page load",
    once: true,
    async send() {
      let bytes = 0;
      for (const path of [
        "/admin/keys?limit=1000",
        `/admin/usage/daily?by=model&${chartRange(0)}`,
        `/admin/usage/daily?by=model&${chartRange(14)}`,
        "/admin/requests?limit=200",
      ]) {
        const status = await adminGet(path);
        bytes += lastBodyBytes;
        if (status !== 200) return status;
      }
      lastBodyBytes = bytes;
      return 200;
    },
  },
];

/**
 * CPU time (ms; the kernel counts in 10 ms ticks) the gateway spent: the whole process, or with
 * `thread` its server thread alone (the main thread's task has the process's id), which is what
 * holds its event loop whatever the machine's load.
 */
function cpuMs(pid: number, thread = false): number {
  try {
    const stat = readFileSync(thread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

function rssMB(pid: number): number {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : 0;
}

/** The pinger: `GET /health` every 5 ms from a worker thread, so this thread's own work does not delay it. */
const pingerSource = `
let on = false, max = 0, n = 0, maxRss = 0;
const tick = async () => {
  while (on) {
    const t0 = performance.now();
    try { await (await fetch("${base}/health")).arrayBuffer(); } catch {}
    const d = performance.now() - t0;
    if (d > max) max = d;
    n++;
    try {
      const m = /VmRSS:\\s+(\\d+)/.exec(require("node:fs").readFileSync("/proc/" + pid + "/status", "utf8"));
      if (m && Number(m[1]) / 1024 > maxRss) maxRss = Number(m[1]) / 1024;
    } catch {}
    await Bun.sleep(5);
  }
};
let pid = 0, loop;
self.onmessage = async (e) => {
  if (e.data.start) { pid = e.data.pid; on = true; max = 0; n = 0; maxRss = 0; loop = tick(); }
  else { on = false; await loop; postMessage({ max, n, maxRss }); }
};`;

async function startGateway(dir: string) {
  const profile = cpuProf ? ["--cpu-prof", "--cpu-prof-dir", cpuProf] : [];
  // HOLD_PRELOAD=file.ts: preloaded into the gateway (say, a timer that prints each stall of the
  // loop, to line up with a --cpu-prof profile); the gateway's stderr is shown then.
  const preload = process.env.HOLD_PRELOAD ? ["--preload", process.env.HOLD_PRELOAD] : [];
  const proc = Bun.spawn(["bun", ...profile, ...preload, "src/main.ts"], {
    cwd: gatewayDir || join(root, "apps/gateway"),
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      TURNPIKE_DB: join(dir, "t.db"),
      TURNPIKE_ADMIN_KEY: adminKey,
      TURNPIKE_LOG_LEVEL: "warn",
      ...extraEnv,
    },
    stdout: "ignore",
    stderr: process.env.HOLD_PRELOAD ? "inherit" : "ignore",
  });
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok) break;
    } catch {}
    await Bun.sleep(100);
  }
  const res = await fetch(`${base}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminKey}`, ...json },
    body: JSON.stringify({ name: "hold" }),
  });
  const { key } = (await res.json()) as { key: string };
  // Warm the routes' code paths with one small request each.
  await post("/v1/messages", key, JSON.stringify(messagesBody(200)), json);
  return { proc, key };
}

const pinger = new Worker(URL.createObjectURL(new Blob([pingerSource], { type: "application/javascript" })));
const ask = (m: unknown) =>
  new Promise<{ max: number; n: number; maxRss: number }>((resolve) => {
    pinger.onmessage = (e) => resolve(e.data);
    pinger.postMessage(m);
  });

console.log(`shape ${shape}; longest /health answer while the body was in flight; RSS of the gateway process`);
console.log(
  "| route | MB | status | longest /health ms | pings | RSS before MB | RSS peak MB | growth MB | body took ms | CPU ms | server thread CPU ms |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|");
for (const c of cases) {
  if ((only && !only.split("|").some((o) => c.name.includes(o))) || skip.some((s) => c.name.includes(s))) continue;
  for (const size of valuesTarget || c.once ? [0] : sizes) {
    const dir = mkdtempSync(join(tmpdir(), "hold-"));
    const { proc, key } = await startGateway(dir);
    try {
      await c.before?.(key);
      Bun.gc(true);
      const before = rssMB(proc.pid);
      if (process.env.HOLD_PRELOAD?.includes("loop-stalls")) proc.kill("SIGUSR2");
      pinger.postMessage({ start: true, pid: proc.pid });
      await Bun.sleep(50);
      const [cpu0, main0] = [cpuMs(proc.pid), cpuMs(proc.pid, true)];
      const t0 = performance.now();
      const status = await c.send(size * MB, key).catch((e) => `failed: ${e instanceof Error ? e.message : e}`);
      const took = performance.now() - t0;
      const [cpu, main] = [cpuMs(proc.pid) - cpu0, cpuMs(proc.pid, true) - main0];
      await Bun.sleep(30);
      const { max, n, maxRss } = await ask({ stop: true });
      if (process.env.HOLD_PRELOAD?.includes("loop-stalls")) proc.kill("SIGUSR2");
      console.log(
        `| ${c.name} | ${(lastBodyBytes / MB).toFixed(2)} | ${status} | ${max.toFixed(0)} | ${n} | ${before.toFixed(0)} | ${maxRss.toFixed(0)} | ${(maxRss - before).toFixed(0)} | ${took.toFixed(0)} | ${cpu} | ${main} |`,
      );
    } finally {
      proc.kill();
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
pinger.terminate();
