/**
 * `bun run bench --profile`: CPU profiles of the gateway's hot path. For each scenario a fresh
 * gateway runs under Bun's sampling profiler (`--cpu-prof`, plus `--cpu-prof-md` for a
 * grep-friendly summary) while wrk drives it at concurrency 32; the profile is written when
 * the gateway exits. Open the `.cpuprofile` in Chrome DevTools (Performance → Load profile).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { runWrk, writeScript } from "./load";
import { renderProfileSummary, summarizeProfile, type CpuProfile } from "./profile-summary";
import type { Service } from "./processes";
import { gatewayRequest, type Scenario } from "./scenarios";
import { createGatewayKey, startGatewayProcess } from "./services";
import { wrkScript } from "./wrk-script";

export async function profileGateway(opts: {
  sim: Service;
  scenarios: Scenario[];
  dir: string;
  tmp: string;
  wrk: string;
  seconds: number;
  fetchCap: number;
  log: (s: string) => void;
}): Promise<void> {
  mkdirSync(opts.dir, { recursive: true });
  for (const s of opts.scenarios) {
    const name = s.name.replace(/[^a-z0-9]+/gi, "-").replace(/^-|-$/g, "");
    const flags = ["--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${opts.dir}`, `--cpu-prof-name=${name}`];
    const gw = await startGatewayProcess(opts.sim.url, join(opts.tmp, `profile-${name}.db`), opts.fetchCap, flags);
    let cpuUsPerReq = 0;
    try {
      const key = await createGatewayKey(gw);
      const req = gatewayRequest(s, key);
      const scriptPath = await writeScript(opts.tmp, `profile ${name}`, wrkScript(req));
      const m = await runWrk({
        wrk: opts.wrk,
        url: gw.url + req.path,
        scriptPath,
        connections: 32,
        durationS: opts.seconds,
        pidUnderTest: gw.pid,
        upstreamPid: opts.sim.pid,
      });
      cpuUsPerReq = m.cpuUsPerReq;
      opts.log(
        `${s.name}: ${(m.rps / 1000).toFixed(1)}k rps, ${m.cpuUsPerReq.toFixed(1)} µs CPU/req under the profiler → ${join(opts.dir, name)}.cpuprofile`,
      );
    } finally {
      await gw.stop(); // the profile is written as the process exits
    }
    const file = join(opts.dir, `${name}.cpuprofile`);
    if (!existsSync(file)) {
      opts.log(`⚠ no profile at ${file} (did the gateway exit cleanly on SIGTERM?)`);
      continue;
    }
    const profile = (await Bun.file(file).json()) as CpuProfile; // written by bun --cpu-prof in this format
    const text = renderProfileSummary(s.name, summarizeProfile(profile, 30), cpuUsPerReq);
    await Bun.write(join(opts.dir, `${name}.summary.txt`), text + "\n");
    console.log(text.split("\n").slice(0, 24).join("\n") + "\n");
  }
}
