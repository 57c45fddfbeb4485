/**
 * `bun run bench -- --store postgres --limits redis`: the gateway on the scale-out back ends
 * (PostgreSQL for keys and the ledger, Redis for limits and budgets) against the same gateway on
 * its embedded ones (SQLite, in-process limits), cell by cell in the same run, at c=32. The
 * target: scale-out requests/s within 10 % of embedded. PostgreSQL and Redis are the test
 * servers (`TURNPIKE_TEST_DATABASE_URL`, `TURNPIKE_TEST_REDIS_URL`), in a database and key prefix
 * of the run's own, removed afterwards.
 */
import { RedisClient, SQL } from "bun";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { runWrk, writeScript, type Measured } from "./load";
import { preflight } from "./preflight";
import type { Service } from "./processes";
import { gatewayRequest, type Scenario } from "./scenarios";
import { createGatewayKey, startGatewayProcess, type GatewayService } from "./services";
import { wrkScript } from "./wrk-script";

const DATABASE_URL = process.env.TURNPIKE_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.TURNPIKE_TEST_REDIS_URL || "redis://127.0.0.1:6379";
/** Scale-out requests/s at c=32 must be at least this share of embedded's. */
export const SCALE_OUT_TARGET = 0.9;

export interface ScaleOutOptions {
  sim: Service;
  scenarios: Scenario[];
  tmp: string;
  wrk: string;
  seconds: number;
  warmup: number;
  fetchCap: number;
  store: "sqlite" | "postgres";
  limits: "memory" | "redis";
  track: (s: Service) => void;
  log: (line: string) => void;
}

export interface ScaleOutRow {
  name: string;
  embedded_rps: number;
  scale_out_rps: number;
  ratio: number;
  /** CPU of the gateway process per request, µs: what the back ends cost the gateway itself. */
  embedded_cpu_us: number;
  scale_out_cpu_us: number;
  errors: number;
  met: boolean;
}

export async function scaleOutBench(o: ScaleOutOptions): Promise<ScaleOutRow[]> {
  const dbName = `turnpike_bench_${randomBytes(4).toString("hex")}`;
  const prefix = `turnpike-bench-${randomBytes(4).toString("hex")}:`;
  const env: Record<string, string> = {};
  if (o.store === "postgres") {
    const admin = new SQL(DATABASE_URL, { max: 1 });
    await admin.unsafe(`CREATE DATABASE ${dbName}`);
    await admin.close();
    const u = new URL(DATABASE_URL);
    u.pathname = "/" + dbName;
    env.TURNPIKE_DATABASE_URL = u.toString();
    env.TURNPIKE_JOURNAL_DIR = join(o.tmp, "journal");
    mkdirSync(env.TURNPIKE_JOURNAL_DIR, { recursive: true });
  }
  if (o.limits === "redis") {
    env.TURNPIKE_REDIS_URL = REDIS_URL;
    env.TURNPIKE_REDIS_PREFIX = prefix;
  }
  const gateways: GatewayService[] = [];
  try {
    const embedded = await startGatewayProcess(o.sim.url, join(o.tmp, "embedded.db"), o.fetchCap);
    gateways.push(embedded);
    o.track(embedded);
    const scaled = await startGatewayProcess(o.sim.url, join(o.tmp, "scaled.db"), o.fetchCap, [], env);
    gateways.push(scaled);
    o.track(scaled);
    const keys = new Map([
      [embedded, await createGatewayKey(embedded)],
      [scaled, await createGatewayKey(scaled)],
    ]);
    o.log(
      `scale-out mode: embedded (SQLite, in-process limits) vs store=${o.store}, limits=${o.limits}, c=32, ${o.seconds} s per cell`,
    );
    const rows: ScaleOutRow[] = [];
    for (const s of o.scenarios) {
      const cells = new Map<GatewayService, Measured[]>();
      const runs = new Map<GatewayService, (durationS: number) => Promise<Measured>>();
      for (const gw of gateways) {
        const req = gatewayRequest(s, keys.get(gw)!);
        const problem = await preflight(gw.url, req, s.gateway.format);
        if (problem) throw new Error(`${s.name} through ${gw === embedded ? "embedded" : "scale-out"}: ${problem}`);
        const scriptPath = await writeScript(o.tmp, `${gw.pid}-${s.name}`, wrkScript(req));
        runs.set(gw, (durationS) =>
          runWrk({
            wrk: o.wrk,
            url: gw.url + req.path,
            scriptPath,
            connections: 32,
            durationS,
            pidUnderTest: gw.pid,
            upstreamPid: o.sim.pid,
          }),
        );
        cells.set(gw, []);
      }
      if (o.warmup > 0) for (const gw of gateways) await runs.get(gw)!(o.warmup);
      // Alternating cells, twice each: a drift of the machine weighs on both alike.
      for (let i = 0; i < 2; i++) for (const gw of gateways) cells.get(gw)!.push(await runs.get(gw)!(o.seconds));
      const mean = (ms: Measured[], f: (m: Measured) => number) => ms.reduce((a, m) => a + f(m), 0) / ms.length;
      const e = mean(cells.get(embedded)!, (m) => m.rps);
      const x = mean(cells.get(scaled)!, (m) => m.rps);
      const errors = [...cells.values()].flat().reduce((a, m) => a + m.errors, 0);
      const row = {
        name: s.name,
        embedded_rps: e,
        scale_out_rps: x,
        ratio: x / e,
        embedded_cpu_us: mean(cells.get(embedded)!, (m) => m.cpuUsPerReq),
        scale_out_cpu_us: mean(cells.get(scaled)!, (m) => m.cpuUsPerReq),
        errors,
        met: errors === 0 && x / e >= SCALE_OUT_TARGET,
      };
      rows.push(row);
      o.log(
        `${s.name.padEnd(32)} embedded ${(e / 1000).toFixed(1).padStart(5)}k rps, ${row.embedded_cpu_us.toFixed(0)} µs CPU/req · scale-out ${(x / 1000).toFixed(1).padStart(5)}k rps, ${row.scale_out_cpu_us.toFixed(0)} µs CPU/req · ${(row.ratio * 100).toFixed(1)} %${errors ? ` · ${errors} ERRORS` : ""} ${row.met ? "✓" : "✗"}`,
      );
    }
    return rows;
  } finally {
    for (const gw of gateways) await gw.stop();
    if (o.store === "postgres") {
      const admin = new SQL(DATABASE_URL, { max: 1 });
      await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
      await admin.close();
    }
    if (o.limits === "redis") {
      const r = new RedisClient(REDIS_URL);
      await r.connect();
      const keys = (await r.send("KEYS", [`${prefix}*`])) as string[]; // the run's own prefix: a handful of keys
      if (keys.length) await r.send("DEL", keys);
      r.close();
    }
  }
}

/**
 * The environment of one gateway on the scale-out back ends, in a PostgreSQL database and a Redis
 * key prefix of its own (`bun run ab -- scaled:DIR`), and the clean-up that removes both.
 */
export async function scaleOutBackends(
  tmp: string,
): Promise<{ env: Record<string, string>; remove: () => Promise<void> }> {
  const dbName = `turnpike_bench_${randomBytes(4).toString("hex")}`;
  const prefix = `turnpike-bench-${randomBytes(4).toString("hex")}:`;
  const admin = new SQL(DATABASE_URL, { max: 1 });
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  await admin.close();
  const u = new URL(DATABASE_URL);
  u.pathname = "/" + dbName;
  const journal = join(tmp, `journal-${dbName}`);
  mkdirSync(journal, { recursive: true });
  return {
    env: {
      TURNPIKE_DATABASE_URL: u.toString(),
      TURNPIKE_JOURNAL_DIR: journal,
      TURNPIKE_REDIS_URL: REDIS_URL,
      TURNPIKE_REDIS_PREFIX: prefix,
    },
    remove: async () => {
      const a = new SQL(DATABASE_URL, { max: 1 });
      await a.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
      await a.close();
      const r = new RedisClient(REDIS_URL);
      await r.connect();
      const keys = (await r.send("KEYS", [`${prefix}*`])) as string[]; // the build's own prefix: a handful of keys
      if (keys.length) await r.send("DEL", keys);
      r.close();
    },
  };
}

/** The report: both figures per scenario, and the target met or missed. */
export function renderScaleOut(rows: ScaleOutRow[], store: string, limits: string): string {
  const lines = [
    `Scale-out (store=${store}, limits=${limits}) vs embedded, c=32: target ≥ ${SCALE_OUT_TARGET * 100} % of embedded requests/s`,
    "",
    "| scenario | embedded rps | scale-out rps | scale-out / embedded | gateway CPU µs/req, embedded → scale-out | target |",
    "| --- | ---: | ---: | ---: | ---: | :-: |",
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.embedded_rps.toFixed(0)} | ${r.scale_out_rps.toFixed(0)} | ${(r.ratio * 100).toFixed(1)} %${r.errors ? ` (${r.errors} errors)` : ""} | ${r.embedded_cpu_us.toFixed(0)} → ${r.scale_out_cpu_us.toFixed(0)} | ${r.met ? "met" : "MISSED"} |`,
    ),
  ];
  return lines.join("\n");
}
