/** The three services of a run: simulator (upstream), bare proxy and gateway. */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { CORE, GATEWAY_DIR, freePort, simulatorDir, startService, type Service } from "./processes";
import { UPSTREAM_KEY } from "./scenarios";

/** Zero latency; 50 pieces per reply, so a stream is 50 content chunks plus its frame events. */
export const SIMULATOR_CHUNKS = 50;

/** `firstByteMs`: how long the simulator waits before each answer's head (default none). */
export async function startSimulatorProcess(firstByteMs = 0): Promise<Service> {
  const port = freePort();
  return startService({
    name: "simulator",
    core: CORE.upstream,
    cmd: [
      "bun",
      join(simulatorDir(), "src", "cli.ts"),
      "--port",
      String(port),
      "--latency",
      "0",
      "--chunks",
      String(SIMULATOR_CHUNKS),
      ...(firstByteMs > 0 ? ["--first-byte", String(firstByteMs)] : []),
    ],
    cwd: simulatorDir(),
    port,
  });
}

/**
 * Bun's fetch keeps at most 256 requests in flight per process and queues the rest; the limit is
 * read from `BUN_CONFIG_MAX_HTTP_REQUESTS` at process start only (setting it from code has no
 * effect). Both proxies get the same value, so 1,000 streams can be open through either.
 * `0` leaves Bun's default.
 */
export function fetchCapEnv(cap: number): Record<string, string> {
  return cap > 0 ? { BUN_CONFIG_MAX_HTTP_REQUESTS: String(cap) } : {};
}

export async function startBareProxyProcess(
  upstream: string,
  fetchCap: number,
  bunFlags: string[] = [],
  bin = "bun",
): Promise<Service> {
  const port = freePort();
  return startService({
    name: "bare proxy",
    core: CORE.proxy,
    cmd: [bin, ...bunFlags, join(import.meta.dir, "bare-proxy.ts"), "--port", String(port), "--upstream", upstream],
    cwd: join(import.meta.dir, ".."),
    port,
    env: fetchCapEnv(fetchCap),
  });
}

export interface GatewayService extends Service {
  adminKey: string;
}

/** Where the gateway app is taken from: this repository's, or `--gateway-dir` (an A/B copy). */
let gatewayDir = GATEWAY_DIR;
export function useGatewayDir(dir: string): void {
  gatewayDir = dir;
}

/** The metering floor (metering-floor/): the least a gateway that bills each token adds; it speaks enough of the gateway's surface to be started and keyed like one. */
export const METERING_FLOOR_DIR = join(import.meta.dir, "..", "metering-floor");

/** The features floor (features-floor/): the metering floor plus the cheapest form of each per-request feature of Turnpike. */
export const FEATURES_FLOOR_DIR = join(import.meta.dir, "..", "features-floor");

/** The gateway as `bun src/main.ts`, every vendor pointed at the external simulator with a key set. */
export async function startGatewayProcess(
  simulatorURL: string,
  dbPath: string,
  fetchCap: number,
  bunFlags: string[] = [],
  extraEnv: Record<string, string> = {},
  dir = gatewayDir,
  stderrFile?: string,
  bin = "bun",
): Promise<GatewayService> {
  const port = freePort();
  const adminKey = "sk-admin-bench-" + randomBytes(12).toString("hex");
  const service = await startService({
    name: "gateway",
    core: CORE.proxy,
    cmd: [bin, ...bunFlags, "src/main.ts"],
    cwd: dir,
    port,
    probe: "/health",
    stderrFile,
    env: {
      PORT: String(port),
      HOST: "127.0.0.1",
      TURNPIKE_DB: dbPath,
      TURNPIKE_ADMIN_KEY: adminKey,
      ALPHA_BASE_URL: simulatorURL,
      ALPHA_API_KEY: UPSTREAM_KEY,
      BETA_BASE_URL: `${simulatorURL}/v1`,
      BETA_API_KEY: UPSTREAM_KEY,
      GAMMA_BASE_URL: simulatorURL,
      GAMMA_API_KEY: UPSTREAM_KEY,
      DELTA_BASE_URL: `${simulatorURL}/v1`,
      DELTA_API_KEY: UPSTREAM_KEY,
      ...fetchCapEnv(fetchCap),
      ...extraEnv,
    },
  });
  return { ...service, adminKey };
}

/**
 * Creates the key the load uses, with limits set (so the rate limiter runs on every request)
 * but far above what one run can send: 1 M requests (the admin API's ceiling) and 10 G tokens a minute.
 */
export async function createGatewayKey(gw: GatewayService): Promise<string> {
  const res = await fetch(`${gw.url}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${gw.adminKey}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench", rpm: 1_000_000, tpm: 10_000_000_000 }),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`POST /admin/keys answered ${res.status}: ${text}`);
  const key = (JSON.parse(text) as { key?: unknown }).key; // a 201 body is a JSON object; `key` is checked below
  if (typeof key !== "string") throw new Error(`POST /admin/keys gave no key: ${text}`);
  return key;
}
