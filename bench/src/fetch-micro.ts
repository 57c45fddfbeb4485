/**
 * What the shape of one upstream `fetch` costs: a small proxy (`Bun.serve`, this file with
 * `--role proxy`, pinned to the proxy core) answers `POST /v/<variant>` by one `fetch` of the
 * benchmark's `messages` baseline to the simulator, shaped as the variant says (signal, headers,
 * body, options), and relays the reply's text. wrk loads one variant at a time, in an order
 * rotated each round; the proxy's CPU is read thread by thread around each cell (as `bun run
 * cost` does) and the report is the median per variant of µs per request, by thread.
 *
 *   bun src/fetch-micro.ts [--rounds N] [--seconds N] [--only a,b] [--ballast 0,100]   (from bench/)
 *
 * Everything but the fetch's shape is the same in every variant, so differences between rows are
 * what the shape costs (the reply read and relayed is the same text each time). `--ballast`
 * starts one proxy per figure, each holding that many megabytes of live objects, and loads every
 * variant on each: the same call beside a larger heap. The variants are measured one after the
 * other, not side by side as `bun run ab` does: on a loaded machine rounds spread by ±20–40 %
 * (bench/README.md, "What was tried").
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { mkdtempSync } from "node:fs";
import { ensureWrk, writeScript } from "./load";
import { CORE, freePort, priorityPrefix, startService } from "./processes";
import { startSimulatorProcess } from "./services";
import { BASELINES, UPSTREAM_KEY } from "./scenarios";
import { THREAD_GROUPS, threadDelta, threadMicros } from "./threads";
import { wrkScript } from "./wrk-script";
import { parseWrkOutput } from "./wrk-result";

type Init = RequestInit & { decompress?: boolean };
/** Builds the fetch's init for one request: the server request, its body text, the plain headers. */
type Variant = (req: Request, text: string, done: (fn: () => void) => void) => Init;

const record = () => ({
  "content-type": "application/json",
  "x-api-key": UPSTREAM_KEY,
  "anthropic-version": "2023-06-01",
});
const encoder = new TextEncoder();
const staticHeaders = new Headers(record());

/** Each variant changes one thing from `floor` (the metering floor's own call), or several, named. */
const VARIANTS: Record<string, Variant> = {
  // The metering floor: a header literal, the body text, the server request's signal.
  floor: (req, text) => ({ method: "POST", headers: record(), body: text, signal: req.signal }),
  "no-signal": (_req, text) => ({ method: "POST", headers: record(), body: text }),
  // Turnpike today: an AbortController of its own, a 20 ms timer that would link the client, cleared at the answer.
  "own-ac+timer": (req, text, done) => {
    const own = new AbortController();
    const timer = setTimeout(() => req.signal.addEventListener("abort", () => own.abort(), { once: true }), 20);
    done(() => clearTimeout(timer));
    return { method: "POST", headers: record(), body: text, signal: own.signal };
  },
  "own-ac": (_req, text) => {
    const own = new AbortController();
    return { method: "POST", headers: record(), body: text, signal: own.signal };
  },
  // The client linked at once: a listener on the server request's signal.
  "own-ac+listener": (req, text) => {
    const own = new AbortController();
    req.signal.addEventListener("abort", () => own.abort(), { once: true });
    return { method: "POST", headers: record(), body: text, signal: own.signal };
  },
  "own-ac+onabort": (req, text) => {
    const own = new AbortController();
    req.signal.onabort = () => own.abort();
    return { method: "POST", headers: record(), body: text, signal: own.signal };
  },
  "signal.any": (req, text) => {
    const own = new AbortController();
    return { method: "POST", headers: record(), body: text, signal: AbortSignal.any([req.signal, own.signal]) };
  },
  "timer-only": (_req, text, done) => {
    const timer = setTimeout(() => {}, 20);
    done(() => clearTimeout(timer));
    return { method: "POST", headers: record(), body: text };
  },
  "signal.timeout": (_req, text) => ({
    method: "POST",
    headers: record(),
    body: text,
    signal: AbortSignal.timeout(600_000),
  }),
  "headers:Headers": (req, text) => ({
    method: "POST",
    headers: new Headers(record()),
    body: text,
    signal: req.signal,
  }),
  "headers:static": (req, text) => ({ method: "POST", headers: staticHeaders, body: text, signal: req.signal }),
  "headers:array": (req, text) => ({
    method: "POST",
    headers: Object.entries(record()),
    body: text,
    signal: req.signal,
  }),
  "body:bytes": (req, text) => ({ method: "POST", headers: record(), body: encoder.encode(text), signal: req.signal }),
  "decompress:false": (req, text) => ({
    method: "POST",
    headers: record(),
    body: text,
    signal: req.signal,
    decompress: false,
  }),
};

const { values: args } = parseArgs({
  options: {
    role: { type: "string", default: "run" },
    port: { type: "string", default: "0" },
    upstream: { type: "string", default: "" },
    rounds: { type: "string", default: "8" },
    seconds: { type: "string", default: "2" },
    connections: { type: "string", default: "32" },
    only: { type: "string", default: "" },
    // Megabytes of live objects the proxy holds (a gateway's heap is larger than a bare proxy's):
    // the same fetch measured beside a larger heap, to tell the collections it sets off.
    ballast: { type: "string", default: "0" },
  },
});

if (args.role === "proxy") {
  // About 100 bytes per object: a key, a number, a string of its own, a link to the one before.
  let ballast: unknown = null;
  for (let i = 0; i < Number(args.ballast) * 10_000; i++) ballast = { i, s: `item ${i}`, prev: ballast };
  (globalThis as { ballast?: unknown }).ballast = ballast;
  const url = `${args.upstream}/v1/messages`;
  const server = Bun.serve({
    port: Number(args.port),
    hostname: "127.0.0.1",
    routes: {
      "/health": new Response("ok"),
      "/v/:variant": {
        POST: async (req) => {
          const variant = VARIANTS[req.params.variant]!;
          const text = await req.text();
          let after: (() => void) | undefined;
          const res = await fetch(
            url,
            variant(req, text, (fn) => (after = fn)),
          );
          after?.();
          const reply = await res.text();
          return new Response(reply, { status: res.status, headers: { "content-type": "application/json" } });
        },
      },
    },
  });
  console.log(`http://127.0.0.1:${server.port}`);
  process.on("SIGTERM", () => process.exit(0));
} else {
  const wrk = ensureWrk();
  const rounds = Number(args.rounds);
  const names = args.only ? args.only.split(",") : Object.keys(VARIANTS);
  const sim = await startSimulatorProcess();
  const proxies = new Map<string, Awaited<ReturnType<typeof startService>>>();
  for (const mb of args.ballast.split(",")) {
    const port = freePort();
    proxies.set(
      mb,
      await startService({
        name: `fetch-micro proxy (ballast ${mb} MB)`,
        core: CORE.proxy,
        cmd: [
          "bun",
          import.meta.path,
          "--role",
          "proxy",
          "--port",
          String(port),
          "--upstream",
          sim.url,
          "--ballast",
          mb,
        ],
        cwd: join(import.meta.dir, ".."),
        port,
        probe: "/health",
      }),
    );
  }
  const cells = names.flatMap((n) =>
    [...proxies.keys()].map((mb) => ({ n, mb, label: proxies.size > 1 ? `${n} (${mb} MB)` : n })),
  );
  const dir = mkdtempSync(join(tmpdir(), "fetch-micro-"));
  const script = await writeScript(dir, "messages", wrkScript(BASELINES.messages));
  const cell = async (c: (typeof cells)[number], seconds: number) => {
    const name = c.n;
    const proxy = proxies.get(c.mb)!;
    const before = threadMicros(proxy.pid);
    const p = Bun.spawn(
      [
        ...priorityPrefix(),
        "taskset",
        "-c",
        String(CORE.loadgen),
        wrk,
        "-t1",
        `-c${args.connections}`,
        `-d${seconds}s`,
        "-s",
        script,
        `${proxy.url}/v/${name}`,
      ],
      { stdout: "pipe", stderr: "pipe" },
    );
    const out = (await new Response(p.stdout).text()) + (await new Response(p.stderr).text());
    await p.exited;
    const d = threadDelta(before, threadMicros(proxy.pid));
    const r = parseWrkOutput(out);
    const bad = r.errors.status + r.errors.connect + r.errors.read + r.errors.write + r.errors.timeout;
    if (bad > 0) throw new Error(`${name}: ${bad} errors`);
    return Object.fromEntries(THREAD_GROUPS.map((g) => [g, d[g] / r.requests])) as Record<string, number>;
  };
  try {
    for (const c of cells) await cell(c, 1); // warm-up, every variant's code compiled
    const got: Record<string, Record<string, number>[]> = Object.fromEntries(cells.map((c) => [c.label, []]));
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < cells.length; i++) {
        const c = cells[(i + round) % cells.length]!;
        got[c.label]!.push(await cell(c, Number(args.seconds)));
      }
      process.stderr.write(`round ${round + 1}/${rounds}\n`);
    }
    const median = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
    };
    console.log(`| variant | total | ${THREAD_GROUPS.join(" | ")} | total range |`);
    console.log(`| --- | --- | ${THREAD_GROUPS.map(() => "---").join(" | ")} | --- |`);
    for (const { label: n } of cells) {
      const rows = got[n]!;
      const totals = rows.map((r) => THREAD_GROUPS.reduce((s, g) => s + r[g]!, 0));
      const cols = THREAD_GROUPS.map((g) => median(rows.map((r) => r[g]!)).toFixed(1));
      console.log(
        `| ${n} | ${median(totals).toFixed(1)} | ${cols.join(" | ")} | ${Math.min(...totals).toFixed(1)}–${Math.max(...totals).toFixed(1)} |`,
      );
    }
  } finally {
    for (const p of proxies.values()) await p.stop();
    await sim.stop();
  }
}
