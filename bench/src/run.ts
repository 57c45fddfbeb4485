/**
 * `bun run bench`: measures the gateway's overhead against a bare passthrough proxy and against
 * the upstream called directly, in one run on this machine. See bench/README.md.
 *
 * Options: --seconds N (per cell, default 2) · --warmup N (untimed load per series, default 10:
 * the JIT's compilations done before the cells, bench/README.md) ·
 * --only TEXT (scenarios whose name contains TEXT; =NAME: that scenario alone) · --streams N (open streams, default 1000) ·
 * --fetch-cap N (BUN_CONFIG_MAX_HTTP_REQUESTS of both proxies, default 4096; 0 = Bun's 256) ·
 * --gateway-dir DIR (run the gateway app found there, e.g. a patched copy, instead of apps/gateway) ·
 * --profile (instead of the run: CPU-profile the gateway under each scenario at c=32) ·
 * --feature-rounds N (rounds of the cost of each feature, src/feature-cost.ts, default 8; 0 leaves it out) ·
 * --store postgres / --limits redis (instead of the run: the scale-out back ends against the
 * embedded ones at c=32, src/scale-out.ts).
 */
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir, availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ensureWrk, runWrk, writeScript, type Measured } from "./load";
import { backgroundLoad } from "./machine-load";
import { HELD, LONG, measureMemory, measureOn, type MemoryResult, type StreamPace } from "./memory";
import { measureFeatureCost } from "./feature-cost";
import { PEER_NAME, PEER_PACKAGE, peerDir, peerRequest, peerServes, peerVersion, startPeerProcess } from "./peer";
import { preflight, type ReplyFormat } from "./preflight";
import { pin, priorityPrefix, CORE, type Service } from "./processes";
import { profileGateway } from "./profile";
import { renderScaleOut, scaleOutBench } from "./scale-out";
import { renderReport } from "./report";
import type { BenchResults, ScenarioResult, TargetMetrics, TtfbRow } from "./results";
import { BASELINES, SCENARIOS, gatewayRequest, type BaselineName, type Scenario } from "./scenarios";
import {
  METERING_FLOOR_DIR,
  createGatewayKey,
  startBareProxyProcess,
  startGatewayProcess,
  startSimulatorProcess,
  useGatewayDir,
} from "./services";
import { checkFloorTargets, checkTargets } from "./targets";
import { measureTtfb } from "./ttfb";
import { WARMUP_SECONDS } from "./side-by-side";
import { wrkScript } from "./wrk-script";

export const CONCURRENCIES = [1, 32, 128] as const;
/** The stream held open 1,000 times for the memory figure: translated, so both state machines run. */
const MEMORY_SCENARIO = "stream messages→chat";
/**
 * The scenarios also measured through the metering floor (metering-floor/, which speaks the
 * messages format only): where the least a metering gateway adds sits against the targets.
 */
const FLOOR_SCENARIOS = ["messages passthrough", "stream messages passthrough"];
/** The streams that flow for 15 s, 1,000 at once: a passthrough and a translated one. */
const LONG_MEMORY_SCENARIOS = ["stream messages passthrough", "stream messages→chat"];

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "2" },
    warmup: { type: "string", default: String(WARMUP_SECONDS) },
    only: { type: "string" },
    streams: { type: "string", default: "1000" },
    profile: { type: "boolean", default: false },
    "fetch-cap": { type: "string", default: "4096" },
    "gateway-dir": { type: "string" },
    store: { type: "string", default: "sqlite" },
    limits: { type: "string", default: "memory" },
    "feature-rounds": { type: "string", default: "8" },
  },
});
if (args.store !== "sqlite" && args.store !== "postgres")
  throw new Error(`--store: sqlite or postgres, got ${JSON.stringify(args.store)}`);
if (args.limits !== "memory" && args.limits !== "redis")
  throw new Error(`--limits: memory or redis, got ${JSON.stringify(args.limits)}`);
const storeArg = args.store;
const limitsArg = args.limits;
const scaleOut = storeArg !== "sqlite" || limitsArg !== "memory";
const cellSeconds = Number(args.seconds);
const warmupSeconds = Number(args.warmup);
const streamCount = Number(args.streams);
const fetchCap = Number(args["fetch-cap"]);
if (args["gateway-dir"]) useGatewayDir(resolve(args["gateway-dir"]));
const only = args.only;
const scenarios = SCENARIOS.filter(
  (s) => !only || (only.startsWith("=") ? s.name === only.slice(1) : s.name.includes(only)),
);
/** The cost of each feature (src/feature-cost.ts): in a whole run, or with `--only feature`. */
const featureRounds = Number(args["feature-rounds"]);
const withFeatureCost = featureRounds > 0 && (!only || "feature cost".includes(only.replace(/^=/, "")));
if (scenarios.length === 0 && !withFeatureCost)
  throw new Error(`no scenario name contains ${JSON.stringify(args.only)}`);

const t0 = performance.now();
const elapsed = () => `${((performance.now() - t0) / 1000).toFixed(0).padStart(3)} s`;
const log = (s: string) => console.log(`[${elapsed()}] ${s}`);

const wrk = ensureWrk();
const cores = availableParallelism();
if (cores < 2) throw new Error(`the benchmark pins its processes on 2 cores; this machine has ${cores}`);
const loadBefore = await backgroundLoad(1000, cores);
if (loadBefore > 0.25) log(`⚠ other processes are using ${loadBefore.toFixed(2)} cores: the numbers will be noisy`);
// The runner (TTFB loop, open-streams client) belongs with the load generator.
pin(process.pid, CORE.loadgen);
const niced = priorityPrefix().length > 0;
if (niced) Bun.spawnSync(["renice", "-n", "-10", "-p", String(process.pid)], { stdout: "ignore", stderr: "ignore" });
else log("note: not allowed to raise the benchmark's priority (nice -10 needs root): background work will weigh more");
const resultsDir = join(import.meta.dir, "..", "results");
mkdirSync(resultsDir, { recursive: true });
const tmp = mkdtempSync(join(tmpdir(), "turnpike-bench-"));
const services: Service[] = [];
const stopAll = async () => {
  await Promise.all(services.splice(0).map((s) => s.stop()));
};
process.on("SIGINT", () => void stopAll().then(() => process.exit(130)));
// Whatever happens, no child outlives the run.
process.on("exit", () => {
  for (const s of services) s.proc.kill("SIGKILL");
});

/** The format a reply comes in: the client's for the gateway, the upstream's for baselines. */
const baselineFormat: Record<BaselineName, ReplyFormat> = {
  messages: "messages",
  chat: "chat",
  generate: "generate",
  "messages-stream": "messages",
  "chat-stream": "chat",
  "chat-1k": "chat",
};

function metrics(m: Measured): TargetMetrics {
  return {
    rps: m.rps,
    p50_ms: m.wrk.latencyUs.p50 / 1000,
    p99_ms: m.wrk.latencyUs.p99 / 1000,
    cpu_us_per_req: m.cpuUsPerReq,
    errors: m.errors,
    core0_busy: m.core0Busy,
  };
}

try {
  log("starting simulator (core 0), bare proxy and gateway (core 1)");
  const sim = await startSimulatorProcess();
  services.push(sim);

  if (scaleOut) {
    const rows = await scaleOutBench({
      sim,
      scenarios,
      tmp,
      wrk,
      seconds: cellSeconds,
      warmup: warmupSeconds,
      fetchCap,
      store: storeArg,
      limits: limitsArg,
      track: (s) => services.push(s),
      log,
    });
    const report = renderScaleOut(rows, storeArg, limitsArg);
    console.log("\n" + report);
    await Bun.write(join(resultsDir, "scale-out.txt"), report + "\n");
    await Bun.write(
      join(resultsDir, "scale-out.json"),
      JSON.stringify({ store: storeArg, limits: limitsArg, rows }, null, 2) + "\n",
    );
  } else if (args.profile) {
    const dir = join(resultsDir, "profiles");
    await profileGateway({ sim, scenarios, dir, tmp, wrk, seconds: Math.max(cellSeconds, 5), fetchCap, log });
  } else {
    await benchmark(sim);
  }
} finally {
  await stopAll();
  rmSync(tmp, { recursive: true, force: true });
}
// Sockets of the open-streams client may linger in their close handshake; nothing is left to do.
process.exit(0);

/** The whole measured run: load cells, TTFB, memory, then the report and latest.json. */
async function benchmark(sim: Service): Promise<void> {
  const bare = await startBareProxyProcess(sim.url, fetchCap);
  services.push(bare);
  const gw = await startGatewayProcess(sim.url, join(tmp, "gateway.db"), fetchCap);
  services.push(gw);
  const key = await createGatewayKey(gw);
  const floorScenarios = scenarios.filter((s) => FLOOR_SCENARIOS.includes(s.name));
  const floor = floorScenarios.length
    ? await startGatewayProcess(sim.url, join(tmp, "floor.db"), fetchCap, [], {}, METERING_FLOOR_DIR)
    : undefined;
  if (floor) services.push(floor);
  const floorKey = floor ? await createGatewayKey(floor) : "";
  // The peer gateway, on the scenarios it serves; skipped by name when its package is not installed.
  const peerScenarios = scenarios.filter(peerServes);
  const peerInstalled = peerDir() !== undefined;
  if (peerScenarios.length && !peerInstalled)
    log(`peer skipped: ${PEER_PACKAGE} is not installed (a bench dependency; bun install)`);
  const peer = peerScenarios.length > 0 && peerInstalled ? await startPeerProcess(fetchCap) : undefined;
  if (peer) services.push(peer);

  // Preflight every request shape through every target.
  const baselines = [...new Set(scenarios.map((s) => s.baseline))];
  for (const b of baselines) {
    for (const [name, url] of [
      ["direct", sim.url],
      ["bare proxy", bare.url],
    ] as const) {
      const problem = await preflight(url, BASELINES[b], baselineFormat[b]);
      if (problem) throw new Error(`${name}, ${b} baseline: ${problem}`);
    }
  }
  const runnable: Scenario[] = [];
  const skipped: string[] = [];
  for (const s of scenarios) {
    const problem = await preflight(gw.url, gatewayRequest(s, key), s.gateway.format);
    if (problem) skipped.push(`${s.name}: ${problem}`);
    else runnable.push(s);
  }
  for (const s of skipped) log(`⚠ skipped (gateway reply is wrong): ${s}`);
  for (const s of floorScenarios) {
    const problem = await preflight(floor!.url, gatewayRequest(s, floorKey), s.gateway.format);
    if (problem) throw new Error(`metering floor, ${s.name}: ${problem}`);
  }
  const peerRunnable = new Set<string>();
  for (const s of peer ? peerScenarios : []) {
    const problem = await preflight(peer!.url, peerRequest(s, sim.url)!, s.gateway.format);
    if (problem) log(`⚠ peer skipped on ${s.name}: ${problem}`);
    else peerRunnable.add(s.name);
  }

  // A target under load: its script, and one wrk run at a given concurrency.
  const foreign: number[] = [];
  const stolen: number[] = [];
  const target = async (label: string, url: string, lua: string, pid: number) => {
    const scriptPath = await writeScript(tmp, label, lua);
    return async (connections: number, durationS: number): Promise<Measured> => {
      const m = await runWrk({ wrk, url, scriptPath, connections, durationS, pidUnderTest: pid, upstreamPid: sim.pid });
      if (durationS === cellSeconds) {
        foreign.push(m.foreignCores);
        stolen.push(m.stealCores);
      }
      return m;
    };
  };
  const summary = (label: string, m: Measured) =>
    log(
      `${label.padEnd(40)} c=32: ${(m.rps / 1000).toFixed(1).padStart(5)}k rps, p50 ${(m.wrk.latencyUs.p50 / 1000).toFixed(3)} ms, ${m.cpuUsPerReq.toFixed(1).padStart(6)} µs CPU/req${m.errors ? `, ${m.errors} ERRORS` : ""}`,
    );

  // Direct to the upstream: once per baseline (warm-up, then each concurrency).
  const direct = new Map<BaselineName, Map<number, Measured>>();
  for (const b of [...new Set(runnable.map((s) => s.baseline))]) {
    const run = await target(`direct ${b}`, sim.url + BASELINES[b].path, wrkScript(BASELINES[b]), sim.pid);
    if (warmupSeconds > 0) await run(32, warmupSeconds);
    const out = new Map<number, Measured>();
    const levels = new Set(runnable.filter((s) => s.baseline === b).flatMap((s) => s.concurrencies ?? CONCURRENCIES));
    for (const c of CONCURRENCIES.filter((x) => levels.has(x))) out.set(c, await run(c, cellSeconds));
    direct.set(b, out);
    summary(`direct ${b}`, out.get(32)!);
  }

  // Gateway and bare proxy cell by cell, side by side in time: a ratio is taken between runs a
  // few seconds apart, so slow drifts of the machine weigh on both sides alike.
  const rows: ScenarioResult[] = [];
  const warmBaselines = new Set<BaselineName>();
  for (const s of runnable) {
    const req = gatewayRequest(s, key);
    const viaGw = await target(`gateway ${s.name}`, gw.url + req.path, wrkScript(req), gw.pid);
    const base = BASELINES[s.baseline];
    const viaBare = await target(`bare proxy ${s.name}`, bare.url + base.path, wrkScript(base), bare.pid);
    if (warmupSeconds > 0) {
      if (!warmBaselines.has(s.baseline)) await viaBare(32, warmupSeconds);
      await viaGw(32, warmupSeconds);
    }
    warmBaselines.add(s.baseline);
    const floorReq = floor && FLOOR_SCENARIOS.includes(s.name) ? gatewayRequest(s, floorKey) : undefined;
    const viaFloor =
      floorReq && floor
        ? await target(`metering floor ${s.name}`, floor.url + floorReq.path, wrkScript(floorReq), floor.pid)
        : undefined;
    if (viaFloor && warmupSeconds > 0) await viaFloor(32, warmupSeconds);
    const peerReq = peer && peerRunnable.has(s.name) ? peerRequest(s, sim.url) : undefined;
    const viaPeer =
      peerReq && peer
        ? await target(`peer ${s.name}`, peer.url + peerReq.path, wrkScript(peerReq), peer.pid)
        : undefined;
    if (viaPeer && warmupSeconds > 0) await viaPeer(32, warmupSeconds);
    for (const c of s.concurrencies ?? CONCURRENCIES) {
      const b = await viaBare(c, cellSeconds);
      const g = await viaGw(c, cellSeconds);
      const f = viaFloor ? await viaFloor(c, cellSeconds) : undefined;
      const p = viaPeer ? await viaPeer(c, cellSeconds) : undefined;
      rows.push({
        name: s.name,
        kind: s.kind,
        stream: s.stream,
        baseline: s.baseline,
        concurrency: c,
        ...(s.published ? { published: s.published } : {}),
        gateway: metrics(g),
        bare_proxy: metrics(b),
        direct: metrics(direct.get(s.baseline)!.get(c)!),
        ...(f ? { metering_floor: metrics(f) } : {}),
        ...(p ? { peer: metrics(p) } : {}),
      });
      if (c === 32) {
        summary(`bare proxy ${s.baseline}`, b);
        summary(`gateway ${s.name}`, g);
      }
    }
  }

  // What each feature adds, against the same chain without it: gateways of their own, loaded together.
  const featureCost = withFeatureCost
    ? await measureFeatureCost({
        wrk,
        sim,
        tmp,
        rounds: featureRounds,
        seconds: cellSeconds,
        connections: 32,
        warmupSeconds,
        fetchCap,
        track: (s) => services.push(s),
        log,
      })
    : undefined;
  if (featureCost)
    for (const r of featureCost.rows.filter((x) => !x.pending))
      log(`feature cost, ${r.feature}: ${r.ratio.toFixed(3)}× (${r.ratio_min.toFixed(2)}–${r.ratio_max.toFixed(2)})`);

  // Time to first byte of each stream scenario, one request at a time.
  const ttfb: TtfbRow[] = [];
  for (const s of runnable.filter((x) => x.stream)) {
    const opts = { samples: 300, warmup: 50 };
    const g = await measureTtfb(gw.url, gatewayRequest(s, key), opts);
    const b = await measureTtfb(bare.url, BASELINES[s.baseline], opts);
    const d = await measureTtfb(sim.url, BASELINES[s.baseline], opts);
    const f =
      floor && FLOOR_SCENARIOS.includes(s.name)
        ? await measureTtfb(floor.url, gatewayRequest(s, floorKey), opts)
        : undefined;
    const p =
      peer && peerRunnable.has(s.name) ? await measureTtfb(peer.url, peerRequest(s, sim.url)!, opts) : undefined;
    ttfb.push({
      ...(f ? { metering_floor: { p50_ms: f.p50_ms, p99_ms: f.p99_ms } } : {}),
      ...(p ? { peer: { p50_ms: p.p50_ms, p99_ms: p.p99_ms } } : {}),
      name: s.name,
      gateway: { p50_ms: g.p50_ms, p99_ms: g.p99_ms },
      bare_proxy: { p50_ms: b.p50_ms, p99_ms: b.p99_ms },
      direct: { p50_ms: d.p50_ms, p99_ms: d.p99_ms },
      overhead_p50_ms: g.p50_ms - d.p50_ms,
      bare_overhead_p50_ms: b.p50_ms - d.p50_ms,
    });
  }
  log(`stream time to first byte measured (${ttfb.length} scenarios)`);

  // Memory per open stream, on fresh processes (the loaded ones carry the heap of the run).
  for (const svc of [gw, bare, floor, peer]) {
    if (!svc) continue;
    await svc.stop();
    services.splice(services.indexOf(svc), 1);
  }
  const memScenario = runnable.find((s) => s.name === MEMORY_SCENARIO);
  const memoryOf = async (scenario: Scenario, pace: StreamPace, db: string) => {
    const m = await measureMemory({
      scenario,
      simulatorURL: sim.url,
      dbPath: join(tmp, db),
      fetchCap,
      count: streamCount,
      pace,
      track: (s) => services.push(s),
    });
    // The peer on a fresh process too, for the scenarios it serves.
    if (pace === LONG && peerInstalled && peerRunnable.has(scenario.name)) {
      const fresh = await startPeerProcess(fetchCap);
      services.push(fresh);
      m.peer = await measureOn(fresh, peerRequest(scenario, sim.url)!, streamCount, pace);
    }
    // The metering floor on a fresh process too, for the flowing streams it speaks (a target is its ratio).
    if (pace === LONG && FLOOR_SCENARIOS.includes(scenario.name)) {
      const fresh = await startGatewayProcess(sim.url, join(tmp, `floor-${db}`), fetchCap, [], {}, METERING_FLOOR_DIR);
      services.push(fresh);
      m.metering_floor = await measureOn(
        fresh,
        gatewayRequest(scenario, await createGatewayKey(fresh)),
        streamCount,
        pace,
      );
    }
    log(
      `memory (${scenario.name}, ${pace.directive}): gateway ${m.per_stream_kib.toFixed(1)} KiB per open stream (${m.open} of ${streamCount} open), bare proxy ${m.bare_proxy.per_stream_kib.toFixed(1)} KiB` +
        (m.peer ? `, peer ${m.peer.per_stream_kib.toFixed(1)} KiB (${m.peer.open} open)` : "") +
        (m.metering_floor
          ? `, metering floor ${m.metering_floor.per_stream_kib.toFixed(1)} KiB (${m.metering_floor.open} open)`
          : ""),
    );
    return m;
  };
  const memory = memScenario ? await memoryOf(memScenario, HELD, "gateway-mem.db") : null;
  const memoryLong: MemoryResult[] = [];
  for (const s of runnable.filter((x) => LONG_MEMORY_SCENARIOS.includes(x.name)))
    memoryLong.push(await memoryOf(s, LONG, `gateway-mem-long-${memoryLong.length}.db`));
  await stopAll();

  const results: BenchResults = {
    meta: {
      started_at: new Date(Date.now() - (performance.now() - t0)).toISOString(),
      duration_s: Math.round((performance.now() - t0) / 1000),
      cell_seconds: cellSeconds,
      warmup_seconds: warmupSeconds,
      cpus: cores,
      bun: Bun.version,
      wrk: Bun.spawnSync([wrk, "-v"]).stdout.toString().split("\n")[0]?.trim() ?? "",
      pinning: `core ${CORE.upstream}: simulator + wrk (+ this runner); core ${CORE.proxy}: gateway or bare proxy`,
      fetch_cap: fetchCap,
      nice: niced ? -10 : 0,
      ...(peerRunnable.size
        ? { peer: { name: PEER_NAME, version: (await peerVersion()) ?? "?", runtime: `bun ${Bun.version}` } }
        : {}),
      foreign_load_cores: {
        before: loadBefore,
        mean: foreign.reduce((a, b) => a + b, 0) / Math.max(1, foreign.length),
        max: Math.max(0, ...foreign),
        steal_mean: stolen.reduce((a, b) => a + b, 0) / Math.max(1, stolen.length),
      },
    },
    scenarios: rows,
    ttfb,
    memory,
    memory_long: memoryLong,
    ...(featureCost ? { feature_cost: featureCost } : {}),
    targets: checkTargets(rows, ttfb, memoryLong),
    floor_targets: checkFloorTargets(rows, ttfb, memoryLong),
  };
  if (skipped.length) console.log(`\n⚠ not measured:\n  ${skipped.join("\n  ")}`);
  const report = renderReport(results);
  console.log("\n" + report);
  // latest.json is always a whole run; a run cut down with --only must not replace it.
  const name = args.only ? "partial" : "latest";
  const out = join(resultsDir, `${name}.json`);
  await Bun.write(out, JSON.stringify(results, null, 2) + "\n");
  await Bun.write(join(resultsDir, `${name}.txt`), report + "\n");
  log(`wrote ${out} (and the report as ${name}.txt)`);
}
