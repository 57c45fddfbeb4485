/**
 * The ladder from the features floor to Turnpike (`bun run ladder`; README, "The proof: where the
 * rest of the CPU goes"): `bun run ladder -- [--only NAME] [--rounds N] [--steps a,b,…]
 * [--isolated] [--env NAME=VALUE …] [GATEWAY_DIR]`.
 *
 * Loads, at the same time as `bun run ab` loads its builds (src/side-by-side.ts): the metering
 * floor, the features floor twice (A/A), one features floor per rung — each rung the one below
 * plus one runtime difference between the floor and Turnpike (features-floor/src/steps.ts,
 * `FLOOR_STEP`) — and Turnpike (apps/gateway, or GATEWAY_DIR). `--isolated` takes each step alone
 * on the features floor instead. The table says what each step adds, in µs per request and as a
 * share of the gap between the features floor and Turnpike, with each rung's ratio to the
 * metering floor (the issue's targets) and the load average before and after.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { CLIMB, LADDER_STEPS } from "../features-floor/src/steps";
import { type ThreadReading, byThreadName, ladderMarkdown, ladderRows } from "./ladder-table";
import { clockTicksPerSecond, parseStatTicks } from "./proc-stat";
import { ensureWrk, writeScript } from "./load";
import { preflight } from "./preflight";
import { GATEWAY_DIR, type Service } from "./processes";
import { SCENARIOS, gatewayRequest } from "./scenarios";
import {
  FEATURES_FLOOR_DIR,
  METERING_FLOOR_DIR,
  createGatewayKey,
  startGatewayProcess,
  startSimulatorProcess,
} from "./services";
import { type Loaded, WARMUP_SECONDS, measureTogether } from "./side-by-side";
import { wrkScript } from "./wrk-script";

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    only: { type: "string", default: "messages passthrough" },
    rounds: { type: "string", default: "10" },
    seconds: { type: "string", default: "2" },
    warmup: { type: "string", default: String(WARMUP_SECONDS) },
    c: { type: "string", short: "c", default: "32" },
    steps: { type: "string", default: CLIMB.join(",") },
    isolated: { type: "boolean", default: false },
    env: { type: "string", multiple: true, default: [] },
  },
});
const scenario = SCENARIOS.find((s) => s.name === args.only);
if (!scenario) throw new Error(`no scenario named "${args.only}"`);
if (!scenario.name.includes("messages passthrough"))
  throw new Error("the floors serve the messages passthrough scenarios only");
const steps = args.steps.split(",").map((s) => s.trim());
for (const s of steps)
  if (!(LADDER_STEPS as readonly string[]).includes(s)) throw new Error(`no step "${s}"; one of ${LADDER_STEPS}`);
/** `--env NAME=VALUE`: set in every features floor's environment (FLOOR_SPIN_US, FLOOR_CELLS…). */
const extraEnv = Object.fromEntries(
  (args.env ?? []).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)] as const),
);
const gatewayDir = positionals[0] ? resolve(positionals[0]) : GATEWAY_DIR;
/** Each thread's name and CPU so far (`/proc/<pid>/task`), to tell the collector's threads from the JIT's. */
function readThreads(pid: number): ThreadReading {
  const out: ThreadReading = new Map();
  const hz = clockTicksPerSecond();
  for (const tid of readdirSync(`/proc/${pid}/task`).map(Number)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      const us = (parseStatTicks(readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8")) * 1e6) / hz;
      out.set(tid, { name, us });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}
const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

const plan: { name: string; dir: string; env: Record<string, string> }[] = [
  { name: "metering floor", dir: METERING_FLOOR_DIR, env: {} },
  { name: "features floor", dir: FEATURES_FLOOR_DIR, env: {} },
  { name: "features floor (A/A)", dir: FEATURES_FLOOR_DIR, env: {} },
  ...steps.map((s, k) => ({
    name: args.isolated ? `features + ${s}` : `+ ${s}`,
    dir: FEATURES_FLOOR_DIR,
    env: { ...extraEnv, FLOOR_STEP: args.isolated ? s : steps.slice(0, k + 1).join(",") },
  })),
  { name: "Turnpike", dir: gatewayDir, env: {} },
];

const wrk = ensureWrk();
const tmp = mkdtempSync(join(tmpdir(), "turnpike-ladder-"));
const services: Service[] = [];
try {
  const before = loadAverage();
  const sim = await startSimulatorProcess();
  services.push(sim);
  const builds: Loaded[] = [];
  for (const [i, p] of plan.entries()) {
    const gw = await startGatewayProcess(sim.url, join(tmp, `l${i}.db`), 4096, [], p.env, p.dir);
    services.push(gw);
    const key = await createGatewayKey(gw);
    const req = gatewayRequest(scenario, key);
    const problem = await preflight(gw.url, req, scenario.gateway.format);
    if (problem) throw new Error(`${p.name}: ${problem}`);
    builds.push({
      name: p.name,
      pid: gw.pid,
      url: gw.url + req.path,
      script: await writeScript(tmp, `l${i}`, wrkScript(req)),
    });
  }
  const together = { wrk, simPid: sim.pid, builds, seconds: Number(args.seconds), connections: Number(args.c) };
  // The warm-up first, alone, so that the threads' reading by name covers the rounds only.
  await measureTogether({ ...together, rounds: 0, warmupSeconds: Number(args.warmup) });
  const threadsBefore = builds.map((b) => readThreads(b.pid));
  const t = await measureTogether({
    ...together,
    rounds: Number(args.rounds),
    warmupSeconds: 0,
    log: (line) => console.log(line),
  });
  const threadsAfter = builds.map((b) => readThreads(b.pid));
  const rows = ladderRows(
    builds.map((b, i) => ({ name: b.name, cpu: t.cpu[i]!, threads: t.threads[i]! })),
    {
      floor: 0,
      features: 1,
      turnpike: plan.length - 1,
      steps: steps.map((_, k) => 3 + k),
      isolated: args.isolated,
    },
  );
  console.log(
    `\n${scenario.name}, c=${args.c}, ${args.rounds} rounds of ${args.seconds} s, ${args.isolated ? "steps alone" : "steps cumulative"}; load average ${before} before, ${loadAverage()} after\n`,
  );
  console.log(ladderMarkdown(rows));
  console.log("\nCPU µs per request by thread name over the rounds (threads under 0.5 µs left out):");
  for (const [i, b] of builds.entries()) {
    const requests = t.requests[i]!.reduce((a, z) => a + z, 0);
    const named = byThreadName(threadsBefore[i]!, threadsAfter[i]!, requests).filter(([, us]) => us >= 0.5);
    console.log(`  ${b.name}: ${named.map(([n, us]) => `${n} ${us.toFixed(1)}`).join(", ")}`);
  }
} finally {
  for (const s of services.reverse()) await s.stop();
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(0);
