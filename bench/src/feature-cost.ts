/**
 * What each feature costs a request when it is on (issue 47, "the cost of each feature,
 * published"): one gateway process per variant, all of the same build; each feature's pair —
 * the variant with it, and the same chain without it (the same request on a process whose key
 * and configuration do not use it) — loaded at the same time round after round (the method of
 * `bun run ab`, src/side-by-side.ts), so the two CPU figures per request are taken over the very
 * same seconds.
 *
 * `bun run features-cost` from bench/ runs it alone (`--rounds N`, `--seconds N`, `--warmup N`,
 * `-c N`, `--gateway-dir DIR`); `bun run bench` runs it after the load cells (`--feature-rounds
 * 0` leaves it out) and prints the table in its report.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ensureWrk, writeScript } from "./load";
import type { Service } from "./processes";
import { preflight } from "./preflight";
import { type HttpRequestSpec, SCENARIOS, gatewayRequest } from "./scenarios";
import { type GatewayService, startGatewayProcess, startSimulatorProcess, useGatewayDir } from "./services";
import { WARMUP_SECONDS, measureTogether, roundRatios } from "./side-by-side";
import { percentile } from "./stats";
import { fmt, table } from "./report";
import { wrkScript } from "./wrk-script";

/** One process of the measure: its configuration, its key and the request it is loaded with. */
interface Variant {
  name: string;
  /** The config file (TURNPIKE_CONFIG), as YAML; none: the deployed defaults. */
  config?: string;
  /** Fields of `POST /admin/keys` beside the benchmark's limits. */
  key?: Record<string, unknown>;
  /** A team the key is made in, with these fields of `POST /admin/teams`. */
  team?: Record<string, unknown>;
  /** The scenario whose request it sends (`messages passthrough` unless said). */
  scenario?: string;
  /** Changes the request: a header, a body field. */
  request?: (r: HttpRequestSpec) => HttpRequestSpec;
}

/** A feature row: the variant with it on, the one without it, and what it exercises. */
export interface FeatureRow {
  feature: string;
  /** What the "on" variant does per request. */
  what: string;
  with: string;
  without: string;
}

/** Features the gateway has no configuration for yet: a row marked pending. */
const PENDING: { feature: string; why: string }[] = [
  { feature: "continuation", why: "not on main yet (no configuration to turn on)" },
];

const withBody = (r: HttpRequestSpec, change: (b: Record<string, unknown>) => void): HttpRequestSpec => {
  const b = JSON.parse(r.body) as Record<string, unknown>; // the scenario's own JSON body
  change(b);
  return { ...r, body: JSON.stringify(b) };
};

/** A limit so high no run reaches it: the budget's step runs on every request, never refuses. */
const HIGH_BUDGET = 1_000_000;

export const VARIANTS: Variant[] = [
  { name: "plain" },
  { name: "key budget", key: { budget_usd: HIGH_BUDGET } },
  { name: "team budget", team: { name: "bench", budget_usd: HIGH_BUDGET } },
  {
    name: "fallback",
    config: "models:\n  - { id: alpha-haiku-4-5, fallbacks: [beta-5] }\n",
  },
  {
    name: "affinity",
    config:
      "models:\n  - id: alpha-haiku-4-5\n    deployments: [{ vendor: alpha }, { vendor: alpha, upstream_model: alpha-haiku-4-5-b }]\n",
    request: (r) => ({ ...r, headers: { ...r.headers, "x-session-id": "bench-session-1" } }),
  },
  {
    name: "guardrail",
    config: "guardrails:\n  policies:\n    words: { words: [Project Falcon], action: mask }\n",
    key: { guardrails: ["words"] },
  },
  { name: "responses, not stored", scenario: "responses→chat" },
  {
    name: "responses, stored",
    scenario: "responses→chat",
    request: (r) => withBody(r, (b) => (b.store = true)),
  },
];

export const FEATURES: FeatureRow[] = [
  { feature: "key budget", what: "the key has a monthly budget", with: "key budget", without: "plain" },
  { feature: "team budget", what: "the key's team has a monthly budget", with: "team budget", without: "plain" },
  {
    feature: "fallback configured",
    what: "the model names a fallback (the first deployment answers)",
    with: "fallback",
    without: "plain",
  },
  {
    feature: "session affinity",
    what: "two deployments; the request names its session",
    with: "affinity",
    without: "plain",
  },
  {
    feature: "stored reply",
    what: "responses→chat with store: true",
    with: "responses, stored",
    without: "responses, not stored",
  },
  {
    feature: "guardrail policy",
    what: "the key runs a word-list policy (nothing found)",
    with: "guardrail",
    without: "plain",
  },
];

export interface FeatureCostRow {
  feature: string;
  what: string;
  /** The scenario both sides send. */
  scenario: string;
  /** Median CPU µs per request over the rounds, without and with the feature. */
  without_us: number;
  with_us: number;
  /** Median of the per-round ratios with ÷ without, and their spread. */
  ratio: number;
  ratio_min: number;
  ratio_max: number;
  /** Set instead of the figures for a feature not measurable yet. */
  pending?: string;
}

export interface FeatureCost {
  rounds: number;
  seconds: number;
  connections: number;
  rows: FeatureCostRow[];
}

async function adminPost(gw: GatewayService, path: string, body: Record<string, unknown>): Promise<unknown> {
  const res = await fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${gw.adminKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text); // a 201 body is JSON
}

/** The key of a variant: the benchmark's limits (the rate limiter runs, never refuses), plus its own fields. */
async function variantKey(gw: GatewayService, v: Variant): Promise<string> {
  const team = v.team ? ((await adminPost(gw, "/admin/teams", v.team)) as { id?: unknown }).id : undefined;
  if (v.team && typeof team !== "string") throw new Error(`POST /admin/teams gave no id`);
  const made = (await adminPost(gw, "/admin/keys", {
    name: `bench ${v.name}`,
    rpm: 1_000_000,
    tpm: 10_000_000_000,
    ...(team ? { team_id: team } : {}),
    ...v.key,
  })) as { key?: unknown };
  if (typeof made.key !== "string") throw new Error(`POST /admin/keys gave no key`);
  return made.key;
}

/** Starts one gateway per variant, loads them together, and returns the feature rows. */
export async function measureFeatureCost(opts: {
  wrk: string;
  sim: Service;
  tmp: string;
  rounds: number;
  seconds: number;
  connections: number;
  warmupSeconds: number;
  fetchCap: number;
  track: (s: Service) => void;
  log: (line: string) => void;
}): Promise<FeatureCost> {
  const builds: { name: string; pid: number; url: string; script: string }[] = [];
  const started: Service[] = [];
  try {
    for (const [i, v] of VARIANTS.entries()) {
      const env: Record<string, string> = {};
      if (v.config) {
        const path = join(opts.tmp, `feature-${i}.yaml`);
        await Bun.write(path, v.config);
        env.TURNPIKE_CONFIG = path;
      }
      const gw = await startGatewayProcess(opts.sim.url, join(opts.tmp, `feature-${i}.db`), opts.fetchCap, [], env);
      started.push(gw);
      opts.track(gw);
      const scenario = SCENARIOS.find((s) => s.name === (v.scenario ?? "messages passthrough"))!;
      const base = gatewayRequest(scenario, await variantKey(gw, v));
      const req = v.request ? v.request(base) : base;
      const problem = await preflight(gw.url, req, scenario.gateway.format);
      if (problem) throw new Error(`feature cost, ${v.name}: ${problem}`);
      builds.push({
        name: v.name,
        pid: gw.pid,
        url: gw.url + req.path,
        script: await writeScript(opts.tmp, `feature-${i}`, wrkScript(req)),
      });
    }
    // Each gateway warmed once (its JIT's compilations done), then each feature's pair loaded
    // together, round after round: two processes share the core at a time, as in `bun run ab`.
    opts.log(`feature cost: ${builds.length} gateways, warmed ${opts.warmupSeconds} s each`);
    await measureTogether({
      wrk: opts.wrk,
      simPid: opts.sim.pid,
      builds,
      rounds: 0,
      seconds: opts.seconds,
      connections: opts.connections,
      warmupSeconds: opts.warmupSeconds,
    });
    const at = (name: string) => VARIANTS.findIndex((v) => v.name === name);
    const rows: FeatureCostRow[] = [];
    for (const f of FEATURES) {
      const wo = at(f.without);
      const w = at(f.with);
      opts.log(
        `feature cost, ${f.feature}: ${opts.rounds} rounds of ${opts.seconds} s, "${f.without}" beside "${f.with}"`,
      );
      const t = await measureTogether({
        wrk: opts.wrk,
        simPid: opts.sim.pid,
        builds: [builds[wo]!, builds[w]!],
        rounds: opts.rounds,
        seconds: opts.seconds,
        connections: opts.connections,
        warmupSeconds: 0,
        log: opts.log,
      });
      const ratios = roundRatios(t, 1, 0);
      rows.push({
        feature: f.feature,
        what: f.what,
        scenario: VARIANTS[w]!.scenario ?? "messages passthrough",
        without_us: percentile(t.cpu[0]!, 50),
        with_us: percentile(t.cpu[1]!, 50),
        ratio: percentile(ratios, 50),
        ratio_min: Math.min(...ratios),
        ratio_max: Math.max(...ratios),
      });
    }
    for (const p of PENDING)
      rows.push({
        feature: p.feature,
        what: "—",
        scenario: "—",
        without_us: Number.NaN,
        with_us: Number.NaN,
        ratio: Number.NaN,
        ratio_min: Number.NaN,
        ratio_max: Number.NaN,
        pending: p.why,
      });
    return { rounds: opts.rounds, seconds: opts.seconds, connections: opts.connections, rows };
  } finally {
    for (const s of started) await s.stop();
  }
}

/** The table of the report (and of the README and the site's performance page). */
export function renderFeatureCost(f: FeatureCost): string {
  const lines = [
    `What each feature adds when it is on: CPU per request against the same chain without it, same build, each pair loaded together (${f.rounds} rounds of ${f.seconds} s, c=${f.connections} each)`,
    table(
      ["feature", "scenario", "cpu µs without", "with", "with/without", "per-round range", "added µs", "what is on"],
      f.rows.map((r) =>
        r.pending
          ? [r.feature, "—", "—", "—", "pending", "—", "—", r.pending]
          : [
              r.feature,
              r.scenario,
              fmt.us(r.without_us),
              fmt.us(r.with_us),
              fmt.ratio(r.ratio),
              `${r.ratio_min.toFixed(2)}–${r.ratio_max.toFixed(2)}`,
              // The ratio on the figure without: the medians' difference would mix two rounds' noise.
              fmt.us((r.ratio - 1) * r.without_us),
              r.what,
            ],
      ),
    ),
  ];
  return lines.join("\n");
}

if (import.meta.main) {
  const { values: args } = parseArgs({
    options: {
      rounds: { type: "string", default: "8" },
      seconds: { type: "string", default: "2" },
      warmup: { type: "string", default: String(WARMUP_SECONDS) },
      c: { type: "string", short: "c", default: "32" },
      "gateway-dir": { type: "string" },
    },
  });
  if (args["gateway-dir"]) useGatewayDir(resolve(args["gateway-dir"]));
  const tmp = mkdtempSync(join(tmpdir(), "turnpike-features-"));
  const services: Service[] = [];
  try {
    const sim = await startSimulatorProcess();
    services.push(sim);
    const f = await measureFeatureCost({
      wrk: ensureWrk(),
      sim,
      tmp,
      rounds: Number(args.rounds),
      seconds: Number(args.seconds),
      connections: Number(args.c),
      warmupSeconds: Number(args.warmup),
      fetchCap: 4096,
      track: (s) => services.push(s),
      log: (line) => console.log(line),
    });
    const text = renderFeatureCost(f);
    console.log("\n" + text);
    const dir = join(import.meta.dir, "..", "results");
    await Bun.write(join(dir, "feature-cost.txt"), text + "\n");
    await Bun.write(join(dir, "feature-cost.json"), JSON.stringify(f, null, 2) + "\n");
  } finally {
    for (const s of services.reverse()) await s.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
  process.exit(0);
}
