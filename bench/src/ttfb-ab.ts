/**
 * Time to first byte of one stream scenario at c=1, builds side by side:
 * `bun src/ttfb-ab.ts [--only NAME] [--rounds N] [--samples N] DIR_A DIR_B …` (each an apps/gateway,
 * or `floor`). Each round runs `--samples` sequential streams on every build in a rotated order;
 * the report is each build's p50 per round and the median of those.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Service } from "./processes";
import { SCENARIOS, gatewayRequest } from "./scenarios";
import { METERING_FLOOR_DIR, createGatewayKey, startGatewayProcess, startSimulatorProcess } from "./services";
import { percentile } from "./stats";
import { measureTtfb } from "./ttfb";

const { values: args, positionals: dirs } = parseArgs({
  allowPositionals: true,
  options: {
    only: { type: "string", default: "stream messages passthrough" },
    rounds: { type: "string", default: "8" },
    samples: { type: "string", default: "200" },
  },
});
const scenario = SCENARIOS.find((s) => s.name === args.only);
if (!scenario) throw new Error(`no scenario named "${args.only}"`);
const tmp = mkdtempSync(join(tmpdir(), "turnpike-ttfb-"));
const services: Service[] = [];
try {
  const sim = await startSimulatorProcess();
  services.push(sim);
  const builds: { name: string; url: string; req: ReturnType<typeof gatewayRequest> }[] = [];
  for (const [i, d] of dirs.entries()) {
    const dir = d === "floor" ? METERING_FLOOR_DIR : resolve(d);
    const gw = await startGatewayProcess(sim.url, join(tmp, `gw${i}.db`), 4096, [], {}, dir);
    services.push(gw);
    builds.push({ name: `${i}:${d}`, url: gw.url, req: gatewayRequest(scenario, await createGatewayKey(gw)) });
  }
  const p50s: number[][] = builds.map(() => []);
  for (const b of builds) await measureTtfb(b.url, b.req, { samples: 0, warmup: 200 });
  for (let r = 0; r < Number(args.rounds); r++) {
    for (let k = 0; k < builds.length; k++) {
      const i = (k + r) % builds.length;
      const b = builds[i]!;
      p50s[i]!.push((await measureTtfb(b.url, b.req, { samples: Number(args.samples), warmup: 10 })).p50_ms);
    }
    console.log(`round ${r + 1}: ${builds.map((b, i) => `${b.name} ${p50s[i]!.at(-1)!.toFixed(3)}`).join(" · ")}`);
  }
  for (const [i, b] of builds.entries())
    console.log(
      `${b.name}: p50 ms, median of rounds ${percentile(p50s[i]!, 50).toFixed(3)} (rounds ${[...p50s[i]!]
        .sort((x, y) => x - y)
        .map((x) => x.toFixed(2))
        .join(" ")})`,
    );
} finally {
  for (const s of services) await s.stop();
  rmSync(tmp, { recursive: true, force: true });
}
