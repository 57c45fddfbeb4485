/**
 * A/B of gateway builds on a noisy machine: `bun run ab -- [--only NAME] DIR_A DIR_B [DIR…]`.
 *
 * Every build (an `apps/gateway` directory, e.g. of a git worktree) runs pinned to the proxy core,
 * and all of them are loaded at the same time, each by its own wrk: they share the core and
 * whatever the machine does meanwhile, so the ratio of their CPU per request is taken over the
 * very same seconds. Measured one after the other, two cells of the same build seconds apart
 * differed by up to ±20 % on a virtual machine whose neighbours come and go; measured together,
 * the per-round ratio is steady. The first build is the reference of the ratios.
 *
 * The word `bare` in place of a directory loads the bare proxy (src/bare-proxy.ts) with the
 * scenario's baseline request, and `floor` the metering floor (metering-floor/, messages
 * scenarios only): the least any gateway that bills each token adds to the bare proxy, and
 * `features` the features floor (features-floor/, messages scenarios only): the metering floor
 * with the cheapest form of each per-request feature of Turnpike. `peer`
 * loads the peer gateway (src/peer.ts, `@portkey-ai/gateway`) on the scenarios it serves.
 *
 * `scaled:DIR` runs the build DIR on the scale-out back ends (PostgreSQL for keys, the ledger and
 * the book of requests in flight; Redis for limits), each such build in a database and key prefix
 * of its own, removed afterwards: `bun run ab -- DIR scaled:DIR` reads scale-out against embedded.
 *
 * `bun=PATH:` before any of these (`bun=/opt/bun-1.4.5/bun:../apps/gateway`, `bun=PATH:bare`) runs
 * that build on the Bun binary at PATH instead of the one running this script, so a runtime
 * upgrade is read against the current one in the same seconds.
 *
 * Options: `--only NAME` (one scenario, exact name; default `messages passthrough`), `--rounds N`
 * (default 12), `--seconds N` per cell (default 2), `--warmup N` untimed seconds of load given each
 * build first (default 10: the JIT compilers done before the rounds), `-c N` connections (default 32),
 * `--sim-first-byte MS` (the simulator waits MS before each answer's head, as a real vendor does:
 * default 0, the instant simulator).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ensureWrk, writeScript } from "./load";
import { PEER_NAME, PEER_PACKAGE, peerDir, peerRequest, startPeerProcess } from "./peer";
import { preflight } from "./preflight";
import { scaleOutBackends } from "./scale-out";
import type { Service } from "./processes";
import { BASELINES, SCENARIOS, gatewayRequest } from "./scenarios";
import {
  FEATURES_FLOOR_DIR,
  METERING_FLOOR_DIR,
  createGatewayKey,
  startBareProxyProcess,
  startGatewayProcess,
  startSimulatorProcess,
} from "./services";
import { WARMUP_SECONDS, measureTogether } from "./side-by-side";
import { percentile } from "./stats";
import { wrkScript } from "./wrk-script";

/** The words that load a reference of this benchmark in place of a gateway directory. */
const REFERENCES: Record<string, { dir: string; name: string }> = {
  floor: { dir: METERING_FLOOR_DIR, name: "metering floor" },
  features: { dir: FEATURES_FLOOR_DIR, name: "features floor" },
};

const { values: args, positionals: dirs } = parseArgs({
  allowPositionals: true,
  options: {
    only: { type: "string", default: "messages passthrough" },
    rounds: { type: "string", default: "12" },
    seconds: { type: "string", default: "2" },
    warmup: { type: "string", default: String(WARMUP_SECONDS) },
    c: { type: "string", short: "c", default: "32" },
    "sim-first-byte": { type: "string", default: "0" },
  },
});
const scenario = SCENARIOS.find((s) => s.name === args.only);
if (!scenario) throw new Error(`no scenario named "${args.only}"; one of: ${SCENARIOS.map((s) => s.name).join(", ")}`);
if (dirs.length < 2) throw new Error("give two or more gateway directories (e.g. worktrees' apps/gateway) to compare");
const rounds = Number(args.rounds);
const seconds = Number(args.seconds);
/** The version a Bun binary reports, to name the builds run on it. */
const runtimeVersion = (bin: string) =>
  `bun ${Bun.spawnSync([bin, "--version"], { stdout: "pipe" }).stdout.toString().trim()}`;
const connections = Number(args.c);

const wrk = ensureWrk();
const tmp = mkdtempSync(join(tmpdir(), "turnpike-ab-"));
const services: Service[] = [];
/** The scale-out builds' databases and key prefixes, removed at the end. */
const removals: (() => Promise<void>)[] = [];
try {
  const sim = await startSimulatorProcess(Number(args["sim-first-byte"]));
  services.push(sim);
  const builds: { name: string; pid: number; url: string; script: string }[] = [];
  for (const [i, spec] of dirs.entries()) {
    const runtime = /^bun=([^:]+):(.+)$/.exec(spec);
    const bin = runtime ? runtime[1]! : "bun";
    const d = runtime ? runtime[2]! : spec;
    const on = runtime ? ` on ${runtimeVersion(bin)}` : "";
    if (d === "bare") {
      const bare = await startBareProxyProcess(sim.url, 4096, [], bin);
      services.push(bare);
      const req = BASELINES[scenario.baseline];
      builds.push({
        name: `${i}:bare proxy${on}`,
        pid: bare.pid,
        url: bare.url + req.path,
        script: await writeScript(tmp, `b${i}`, wrkScript(req)),
      });
      continue;
    }
    if (d === "peer") {
      if (!peerDir()) throw new Error(`peer: ${PEER_PACKAGE} is not installed (a bench dependency: bun install)`);
      const req = peerRequest(scenario, sim.url);
      if (!req) throw new Error(`peer: ${PEER_NAME} does not serve "${scenario.name}"`);
      const peer = await startPeerProcess(4096);
      services.push(peer);
      const problem = await preflight(peer.url, req, scenario.gateway.format);
      if (problem) throw new Error(`peer: ${problem}`);
      builds.push({
        name: `${i}:peer`,
        pid: peer.pid,
        url: peer.url + req.path,
        script: await writeScript(tmp, `b${i}`, wrkScript(req)),
      });
      continue;
    }
    const scaled = d.startsWith("scaled:");
    const reference = REFERENCES[d];
    const dir = reference?.dir ?? resolve(scaled ? d.slice("scaled:".length) : d);
    let env: Record<string, string> = {};
    if (scaled) {
      const b = await scaleOutBackends(tmp);
      removals.push(b.remove);
      env = b.env;
    }
    const gw = await startGatewayProcess(sim.url, join(tmp, `gw${i}.db`), 4096, [], env, dir, undefined, bin);
    services.push(gw);
    const key = await createGatewayKey(gw);
    const req = gatewayRequest(scenario, key);
    const problem = await preflight(gw.url, req, scenario.gateway.format);
    if (problem) throw new Error(`${dir}: ${problem}`);
    const name = reference
      ? `${i}:${reference.name}${on}`
      : `${i}:${scaled ? "scaled " : ""}${basename(dirname(dirname(dir))) || dir}${on}`;
    builds.push({ name, pid: gw.pid, url: gw.url + req.path, script: await writeScript(tmp, `b${i}`, wrkScript(req)) });
  }
  const { cpu, threads } = await measureTogether({
    wrk,
    simPid: sim.pid,
    builds,
    rounds,
    seconds,
    connections,
    warmupSeconds: Number(args.warmup),
    log: (line) => console.log(line),
  });
  const ratios = builds.map((_, i) => cpu[i]!.map((x, r) => x / cpu[0]![r]!));
  console.log(
    `\n${scenario.name}, c=${connections}, ${rounds} rounds of ${seconds} s cells; CPU per request (µs) and against build 0`,
  );
  for (const [i, b] of builds.entries()) {
    const t = threads[i]!;
    const split = `(JS thread ${t.js.toFixed(1)}, HTTP client ${t["http client"].toFixed(1)}, others ${t["gc, jit and others"].toFixed(1)})`;
    const sorted = [...cpu[i]!].sort((a, z) => a - z);
    console.log(
      `  ${b.name.padEnd(24)} median ${percentile(cpu[i]!, 50).toFixed(1)}  min ${sorted[0]!.toFixed(1)}  ` +
        (i === 0
          ? ""
          : `median of per-round ratios ${percentile(ratios[i]!, 50).toFixed(3)}  (${[...ratios[i]!]
              .sort((a, z) => a - z)
              .map((x) => x.toFixed(2))
              .join(" ")})`) +
        `\n  ${"".padEnd(24)} mean by thread ${split}`,
    );
  }
} finally {
  for (const s of services.reverse()) await s.stop();
  for (const remove of removals) await remove();
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(0);
