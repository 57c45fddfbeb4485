/**
 * `bun run cost`: the cost table of bench/README.md — where a request's CPU goes, step by step,
 * for each scenario, against the bare proxy and the metering floor (and the peer's total).
 *
 * Per scenario: the bare proxy, Turnpike, the floor (messages scenarios) and the peer (the
 * scenarios it serves) are loaded at the same time for `--rounds` rounds (src/side-by-side.ts),
 * their CPU read thread by thread; then Turnpike, the bare proxy and the floor are each run
 * alone under Bun's sampling profiler, and their JavaScript thread's CPU is split by step in the
 * profile's proportions (src/steps.ts). Writes bench/results/cost-table.{md,json}.
 *
 * Options: `--only NAME[,NAME…]` (exact scenario names; default all), `--rounds N` (default 8),
 * `--seconds N` per round (default 2), `--warmup N` untimed seconds of load each build gets first
 * (default 10, as `bun run ab`), `--profile-seconds N` (default 5), `-c N` (default 32),
 * `--gateway-dir DIR` (another build's apps/gateway, to read a change against the table),
 * `--reclassify` (measure nothing: split the last run's threads again from its saved profiles,
 * after a change to src/steps.ts).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type CostColumn, type CostRow, type CostTable, renderCostTable, splitColumn } from "./cost";
import { ensureWrk, runWrk, writeScript } from "./load";
import { PEER_NAME, peerDir, peerRequest, peerVersion, startPeerProcess } from "./peer";
import { preflight, type ReplyFormat } from "./preflight";
import { CORE, pin, type Service } from "./processes";
import type { CpuProfile } from "./profile-summary";
import { BASELINES, gatewayRequest, type HttpRequestSpec, SCENARIOS, type Scenario } from "./scenarios";
import {
  createGatewayKey,
  METERING_FLOOR_DIR,
  startBareProxyProcess,
  startGatewayProcess,
  startSimulatorProcess,
  useGatewayDir,
} from "./services";
import { type Loaded, WARMUP_SECONDS, measureTogether, roundRatios } from "./side-by-side";
import { percentile } from "./stats";
import { GATEWAY_RULES, REFERENCE_RULES, stepShares } from "./steps";
import { wrkScript } from "./wrk-script";

/** The scenarios the floor speaks (a messages client), as in run.ts. */
const FLOOR_SCENARIOS = ["messages passthrough", "stream messages passthrough"];
const FETCH_CAP = 4096;

const { values: args } = parseArgs({
  options: {
    only: { type: "string" },
    rounds: { type: "string", default: "8" },
    seconds: { type: "string", default: "2" },
    warmup: { type: "string", default: String(WARMUP_SECONDS) },
    "profile-seconds": { type: "string", default: "5" },
    c: { type: "string", short: "c", default: "32" },
    "gateway-dir": { type: "string" },
    reclassify: { type: "boolean", default: false },
  },
});
const names = args.only?.split(",").map((s) => s.trim());
const scenarios = names ? SCENARIOS.filter((s) => names.includes(s.name)) : SCENARIOS;
if (names && scenarios.length !== names.length)
  throw new Error(`unknown scenario in --only; the names are: ${SCENARIOS.map((s) => s.name).join(", ")}`);
if (args["gateway-dir"]) useGatewayDir(resolve(args["gateway-dir"]));
const rounds = Number(args.rounds);
const seconds = Number(args.seconds);
const profileSeconds = Number(args["profile-seconds"]);
const connections = Number(args.c);

const resultsDir = join(import.meta.dir, "..", "results");
const profileDir = join(resultsDir, "cost-profiles");
const fileName = (label: string) => label.replace(/[^a-z0-9]+/gi, "-").replace(/^-|-$/g, "");
if (args.reclassify) await reclassify();

/** Splits the saved run's JavaScript threads again from its saved profiles (src/steps.ts changed). */
async function reclassify(): Promise<never> {
  const name = args.only ? "cost-table.partial" : "cost-table";
  const table = (await Bun.file(join(resultsDir, `${name}.json`)).json()) as CostTable; // written by this script
  const again = async (col: CostColumn | undefined, label: string, rules: typeof GATEWAY_RULES) => {
    if (!col) return;
    const profile = (await Bun.file(join(profileDir, `${fileName(label)}.cpuprofile`)).json()) as CpuProfile;
    const split = stepShares(profile, rules);
    Object.assign(col, splitColumn(col.threads, split.shares, split.samples, col.median));
  };
  for (const r of table.rows) {
    await again(r.gateway, `gateway ${r.scenario}`, GATEWAY_RULES);
    await again(r.bare, `bare ${r.scenario}`, REFERENCE_RULES);
    await again(r.floor, `floor ${r.scenario}`, REFERENCE_RULES);
  }
  const text = renderCostTable(table);
  console.log(text);
  await Bun.write(join(resultsDir, `${name}.md`), `${text}\n`);
  await Bun.write(join(resultsDir, `${name}.json`), `${JSON.stringify(table, null, 2)}\n`);
  process.exit(0);
}

const wrk = ensureWrk();
pin(process.pid, CORE.loadgen);
const tmp = mkdtempSync(join(tmpdir(), "turnpike-cost-"));
mkdirSync(profileDir, { recursive: true });
const services: Service[] = [];
const track = <S extends Service>(s: S): S => {
  services.push(s);
  return s;
};
const stop = async (s: Service) => {
  await s.stop();
  services.splice(services.indexOf(s), 1);
};
process.on("exit", () => {
  for (const s of services) s.proc.kill("SIGKILL");
});
const log = (s: string) => console.log(s);

/** Runs a fresh process under the profiler at `connections` for `profileSeconds`; its profile. */
async function profiled(
  label: string,
  start: (flags: string[]) => Promise<Service>,
  request: (svc: Service) => Promise<HttpRequestSpec>,
  simPid: number,
): Promise<CpuProfile> {
  const name = fileName(label);
  const flags = ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`];
  const svc = track(await start(flags));
  try {
    const req = await request(svc);
    const script = await writeScript(tmp, `profile-${name}`, wrkScript(req));
    await runWrk({
      wrk,
      url: svc.url + req.path,
      scriptPath: script,
      connections,
      durationS: profileSeconds,
      pidUnderTest: svc.pid,
      upstreamPid: simPid,
    });
  } finally {
    await stop(svc); // the profile is written as the process exits
  }
  const file = join(profileDir, `${name}.cpuprofile`);
  if (!existsSync(file)) throw new Error(`no profile at ${file} (did ${label} exit cleanly on SIGTERM?)`);
  return (await Bun.file(file).json()) as CpuProfile; // written by bun --cpu-prof in this format
}

async function costOf(s: Scenario, sim: Service): Promise<CostRow> {
  log(`\n${s.name}: ${rounds} rounds side by side …`);
  const bare = track(await startBareProxyProcess(sim.url, FETCH_CAP));
  const gw = track(await startGatewayProcess(sim.url, join(tmp, `gw-${Date.now()}.db`), FETCH_CAP));
  const key = await createGatewayKey(gw);
  const withFloor = FLOOR_SCENARIOS.includes(s.name);
  const floor = withFloor
    ? track(
        await startGatewayProcess(sim.url, join(tmp, `floor-${Date.now()}.db`), FETCH_CAP, [], {}, METERING_FLOOR_DIR),
      )
    : undefined;
  const floorKey = floor ? await createGatewayKey(floor) : "";
  const peerReq = peerDir() ? peerRequest(s, sim.url) : undefined;
  const peer = peerReq ? track(await startPeerProcess(FETCH_CAP)) : undefined;

  const builds: Loaded[] = [];
  const add = async (name: string, svc: Service, req: HttpRequestSpec, format: ReplyFormat) => {
    const problem = await preflight(svc.url, req, format);
    if (problem) throw new Error(`${name}, ${s.name}: ${problem}`);
    builds.push({
      name,
      pid: svc.pid,
      url: svc.url + req.path,
      script: await writeScript(tmp, `${name}-${s.name}`, wrkScript(req)),
    });
  };
  const baselineFormat: ReplyFormat = s.baseline.startsWith("messages")
    ? "messages"
    : s.baseline.startsWith("chat")
      ? "chat"
      : "generate";
  await add("bare", bare, BASELINES[s.baseline], baselineFormat);
  await add("gateway", gw, gatewayRequest(s, key), s.gateway.format);
  if (floor) await add("floor", floor, gatewayRequest(s, floorKey), s.gateway.format);
  if (peer && peerReq) await add("peer", peer, peerReq, s.gateway.format);
  const together = await measureTogether({
    wrk,
    simPid: sim.pid,
    builds,
    rounds,
    seconds,
    connections,
    warmupSeconds: Number(args.warmup),
    log,
  });
  for (const svc of [bare, gw, floor, peer]) if (svc) await stop(svc);
  const at = (name: string) => builds.findIndex((b) => b.name === name);

  log(`${s.name}: profiles …`);
  const gwProfile = await profiled(
    `gateway ${s.name}`,
    (flags) => startGatewayProcess(sim.url, join(tmp, `gwp-${Date.now()}.db`), FETCH_CAP, flags),
    async (svc) => gatewayRequest(s, await createGatewayKey(svc as Awaited<ReturnType<typeof startGatewayProcess>>)),
    sim.pid,
  );
  const bareProfile = await profiled(
    `bare ${s.name}`,
    (flags) => startBareProxyProcess(sim.url, FETCH_CAP, flags),
    async () => BASELINES[s.baseline],
    sim.pid,
  );
  const floorProfile = withFloor
    ? await profiled(
        `floor ${s.name}`,
        (flags) =>
          startGatewayProcess(sim.url, join(tmp, `floorp-${Date.now()}.db`), FETCH_CAP, flags, {}, METERING_FLOOR_DIR),
        async (svc) =>
          gatewayRequest(s, await createGatewayKey(svc as Awaited<ReturnType<typeof startGatewayProcess>>)),
        sim.pid,
      )
    : undefined;

  const column = (name: string, profile: CpuProfile, rules: typeof GATEWAY_RULES): CostColumn => {
    const i = at(name);
    const split = stepShares(profile, rules);
    return splitColumn(together.threads[i]!, split.shares, split.samples, percentile(together.cpu[i]!, 50));
  };
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const row: CostRow = {
    scenario: s.name,
    stream: s.stream,
    kind: s.kind,
    rounds,
    gateway: column("gateway", gwProfile, GATEWAY_RULES),
    bare: column("bare", bareProfile, REFERENCE_RULES),
    ...(floorProfile ? { floor: column("floor", floorProfile, REFERENCE_RULES) } : {}),
    ...(peer
      ? { peer: { median: percentile(together.cpu[at("peer")]!, 50), threads: together.threads[at("peer")]! } }
      : {}),
    ratios: {
      gw_bare: sorted(roundRatios(together, at("gateway"), at("bare"))),
      ...(floor ? { gw_floor: sorted(roundRatios(together, at("gateway"), at("floor"))) } : {}),
      ...(peer ? { peer_bare: sorted(roundRatios(together, at("peer"), at("bare"))) } : {}),
    },
  };
  return row;
}

try {
  const sim = track(await startSimulatorProcess());
  const rows: CostRow[] = [];
  for (const s of scenarios) rows.push(await costOf(s, sim));
  const version = await peerVersion();
  const table: CostTable = {
    meta: {
      started_at: new Date().toISOString(),
      bun: Bun.version,
      connections,
      seconds,
      ...(version ? { peer: `${PEER_NAME} ${version} on Bun ${Bun.version}` } : {}),
    },
    rows,
  };
  const text = renderCostTable(table);
  console.log(`\n${text}`);
  const name = args.only ? "cost-table.partial" : "cost-table";
  await Bun.write(join(resultsDir, `${name}.md`), `${text}\n`);
  await Bun.write(join(resultsDir, `${name}.json`), `${JSON.stringify(table, null, 2)}\n`);
  log(`wrote ${join(resultsDir, `${name}.md`)} and .json`);
} finally {
  for (const s of services.reverse()) await s.stop();
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(0);
