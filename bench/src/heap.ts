/**
 * What a gateway build keeps alive and allocates per request: `bun run heap -- [--only NAME]
 * [--requests N] [--batch K] [--snapshot] [DIR]`.
 *
 * Starts the simulator in its own process and the gateway as the benchmark does (SQLite, a keyed
 * client, every vendor on the simulator), with `heap-probe.ts` preloaded (a bench file; the
 * gateway has no such hook). Reads, after a full collection each: the heap at idle after boot,
 * after N requests of the scenario under wrk (`-c`, default 32 connections), and — with no collection before the second
 * reading — what K requests sent one at a time leave on the heap, per request and by type. The
 * last figure counts what was allocated only while no collection ran in between (the heap size
 * says so: it must grow by roughly the objects' size).
 *
 * `--gc-log`: instead, the gateway runs with `BUN_JSC_logGC=1` (no probe) and the script counts,
 * over a load of `--seconds` after 3 s of warm-up, its collections (eden and full), the heap
 * size each started at and the mutator pauses they summed, per request.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ensureWrk, runWrk, writeScript } from "./load";
import { SCENARIOS, gatewayRequest } from "./scenarios";
import { createGatewayKey, startGatewayProcess, startSimulatorProcess } from "./services";
import { wrkScript } from "./wrk-script";
import type { Service } from "./processes";

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    only: { type: "string", default: "messages passthrough" },
    seconds: { type: "string", default: "10" },
    batch: { type: "string", default: "200" },
    snapshot: { type: "boolean", default: false },
    keep: { type: "string" },
    "gc-log": { type: "boolean", default: false },
    c: { type: "string", short: "c", default: "32" },
    env: { type: "string", multiple: true, default: [] },
  },
});
const found = SCENARIOS.find((s) => s.name === args.only);
if (!found) throw new Error(`no scenario named "${args.only}"`);
const scenario = found;
const dir = positionals[0] ? resolve(positionals[0]) : undefined;
/** `--env NAME=VALUE` (repeatable): set in the gateway's environment, e.g. to turn a feature off. */
const extraEnv = Object.fromEntries(
  (args.env ?? []).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)] as const),
);

interface Reading {
  cmd: string;
  stats: {
    heapSize: number;
    heapCapacity: number;
    extraMemorySize: number;
    objectCount: number;
    protectedObjectCount: number;
    objectTypeCounts: Record<string, number>;
    protectedObjectTypeCounts: Record<string, number>;
  };
  mem: { rss: number; heapUsed: number; external: number; arrayBuffers: number };
}

const tmp = mkdtempSync(join(tmpdir(), "turnpike-heap-"));
const out = join(tmp, "probe");
const services: Service[] = [];
let n = 0;
async function read(pid: number, cmd: "gc" | "nogc" | "snapshot"): Promise<Reading> {
  writeFileSync(`${out}.cmd`, cmd);
  const file = `${out}.${n++}.json`;
  process.kill(pid, "SIGUSR2");
  for (let i = 0; i < 600 && !existsSync(file); i++) await Bun.sleep(50);
  await Bun.sleep(cmd === "snapshot" ? 3000 : 200);
  const r = JSON.parse(readFileSync(file, "utf8")) as Reading;
  if (cmd === "snapshot" && args.keep) {
    const snap = file.replace(/\.json$/, ".heapsnapshot");
    for (let i = 0; i < 100 && !existsSync(snap); i++) await Bun.sleep(100);
    Bun.spawnSync(["cp", snap, `${args.keep}.${n - 1}.heapsnapshot`]);
  }
  return r;
}
const mb = (b: number) => (b / 1048576).toFixed(1);
function show(label: string, r: Reading): void {
  console.log(
    `${label}: heap ${mb(r.stats.heapSize)} MB (capacity ${mb(r.stats.heapCapacity)}, extra ${mb(r.stats.extraMemorySize)}), ` +
      `${r.stats.objectCount} objects, rss ${mb(r.mem.rss)} MB, external ${mb(r.mem.external)} MB`,
  );
}
function diff(a: Reading, b: Reading, per: number, top: number): void {
  const keys = new Set([...Object.keys(a.stats.objectTypeCounts), ...Object.keys(b.stats.objectTypeCounts)]);
  const rows = [...keys]
    .map((k) => [k, (b.stats.objectTypeCounts[k] ?? 0) - (a.stats.objectTypeCounts[k] ?? 0)] as const)
    .filter(([, d]) => d !== 0)
    .sort((x, y) => Math.abs(y[1]) - Math.abs(x[1]))
    .slice(0, top);
  for (const [k, d] of rows) console.log(`    ${k.padEnd(36)} ${(d / per).toFixed(2)}`);
}
function biggest(r: Reading, top: number): void {
  const rows = Object.entries(r.stats.objectTypeCounts)
    .sort((x, y) => y[1] - x[1])
    .slice(0, top);
  for (const [k, c] of rows) console.log(`    ${k.padEnd(36)} ${c}`);
}

/** Collections in a `BUN_JSC_logGC=1` log: each `START` line opens one; every `p=…ms` is a pause of the mutator. */
export function readGcLog(text: string): {
  eden: number;
  full: number;
  pauseMs: number;
  startKb: number[];
  allocatedKb: number;
  /** Collections the log says the allocation limit started (the rest: the runtime's timers and its own scheduling). */
  byLimit: number;
} {
  let byLimit = 0;
  let eden = 0;
  let full = 0;
  let pauseMs = 0;
  const startKb: number[] = [];
  /** What the heap grew by between one collection's end and the next one's start: what was allocated. */
  let allocatedKb = 0;
  let lastEnd: number | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("Requesting GC because bytes allocated")) byLimit++;
    const start = /START \S+ (\d+)kb => (\w+)/.exec(line);
    if (start) {
      startKb.push(Number(start[1]));
      if (lastEnd !== undefined) allocatedKb += Math.max(0, Number(start[1]) - lastEnd);
      if (start[2] === "EdenCollection") eden++;
      else full++;
    }
    for (const m of line.matchAll(/ p=([\d.]+)ms/g)) pauseMs += Number(m[1]);
    const end = /=> (\d+)kb, p=[\d.]+ms.*END/.exec(line);
    if (end) lastEnd = Number(end[1]);
  }
  return { eden, full, pauseMs, startKb, allocatedKb, byLimit };
}

async function gcLog(): Promise<void> {
  const sim = await startSimulatorProcess();
  services.push(sim);
  const logFile = join(tmp, "gc.log");
  const gw = await startGatewayProcess(
    sim.url,
    join(tmp, "gw.db"),
    4096,
    [],
    { ...extraEnv, BUN_JSC_logGC: "1" },
    dir,
    logFile,
  );
  services.push(gw);
  const key = await createGatewayKey(gw);
  const req = gatewayRequest(scenario, key);
  const wrk = ensureWrk();
  const script = await writeScript(tmp, "gc", wrkScript(req));
  const load = (durationS: number) =>
    runWrk({
      wrk,
      url: gw.url + req.path,
      scriptPath: script,
      connections: Number(args.c),
      durationS,
      pidUnderTest: gw.pid,
      upstreamPid: sim.pid,
    });
  await load(3);
  const from = readFileSync(logFile, "utf8").length;
  const m = await load(Number(args.seconds));
  const g = readGcLog(readFileSync(logFile, "utf8").slice(from));
  const sizes = [...g.startKb].sort((a, z) => a - z);
  console.log(
    `${m.wrk.requests} requests (${m.rps.toFixed(0)}/s, ${m.cpuUsPerReq.toFixed(1)} µs CPU each): ${g.eden + g.full} collections (${g.eden} eden, ${g.full} full, ${g.byLimit} by the allocation limit), ` +
      `pauses ${g.pauseMs.toFixed(0)} ms = ${((g.pauseMs * 1000) / m.wrk.requests).toFixed(1)} µs per request, ` +
      `${((g.eden + g.full) / Number(args.seconds)).toFixed(1)} a second; ${(g.allocatedKb / Math.max(1, m.wrk.requests * ((g.eden + g.full - 1) / Math.max(1, g.eden + g.full)))).toFixed(1)} kB allocated per request between collections; heap at start ${sizes[0] ?? 0}–${sizes.at(-1) ?? 0} kB (median ${sizes[sizes.length >> 1] ?? 0})`,
  );
}

async function heapReadings(): Promise<void> {
  const sim = await startSimulatorProcess();
  services.push(sim);
  const gw = await startGatewayProcess(
    sim.url,
    join(tmp, "gw.db"),
    4096,
    ["--preload", join(import.meta.dir, "heap-probe.ts")],
    { ...extraEnv, HEAP_PROBE_OUT: out },
    dir,
  );
  services.push(gw);
  const key = await createGatewayKey(gw);
  const req = gatewayRequest(scenario, key);
  const url = gw.url + req.path;
  const send = async () => {
    const res = await fetch(url, { method: req.method, headers: req.headers, body: req.body });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${res.status}`);
  };
  for (let i = 0; i < 50; i++) await send();
  await Bun.sleep(500);
  const idle = await read(gw.pid, args.snapshot ? "snapshot" : "gc");
  show("idle after boot (+50 requests)", idle);
  biggest(idle, 25);

  const wrk = ensureWrk();
  const script = await writeScript(tmp, "heap", wrkScript(req));
  const m = await runWrk({
    wrk,
    url,
    scriptPath: script,
    connections: Number(args.c),
    durationS: Number(args.seconds),
    pidUnderTest: gw.pid,
    upstreamPid: sim.pid,
  });
  await Bun.sleep(1500);
  const loaded = await read(gw.pid, args.snapshot ? "snapshot" : "gc");
  show(`after ${m.wrk.requests} requests (${m.rps.toFixed(0)}/s, ${m.cpuUsPerReq.toFixed(1)} µs CPU each)`, loaded);
  console.log("  kept, by type, per 1,000 requests of the load (after − idle):");
  diff(idle, loaded, m.wrk.requests / 1000, 25);

  const k = Number(args.batch);
  for (let round = 0; round < 3; round++) {
    const before = await read(gw.pid, "gc");
    for (let i = 0; i < k; i++) await send();
    const after = await read(gw.pid, "nogc");
    // `objectCount` and `heapSize` are those of the last collection; the counts by type walk every cell.
    const cells = Object.entries(after.stats.objectTypeCounts).reduce(
      (sum, [t, c]) => sum + c - (before.stats.objectTypeCounts[t] ?? 0),
      0,
    );
    // A collection between the readings (an eden one can come at any time) takes what the
    // requests before it left: the live `BunRequest` cells say how many requests are still counted.
    const requests = (after.stats.objectTypeCounts.BunRequest ?? 0) - (before.stats.objectTypeCounts.BunRequest ?? 0);
    console.log(
      `${k} requests one at a time, no collection between the readings: ${(cells / k).toFixed(1)} cells per request` +
        (requests > 0 && requests < k
          ? `; a collection ran: ${requests} requests' cells left, ${(cells / requests).toFixed(1)} cells per request of them`
          : ""),
    );
    if (round === 2) diff(before, after, k, 40);
  }
}

try {
  await (args["gc-log"] ? gcLog() : heapReadings());
} finally {
  for (const s of services.reverse()) await s.stop();
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(0);
