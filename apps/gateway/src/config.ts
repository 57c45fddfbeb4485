import { UPSTREAM_PROTOCOLS, type Protocol } from "@turnpike/schema";
import { readFileSync } from "node:fs";
import { MIN_ADMIN_KEY_LENGTH } from "./keys/admin-key";
import { parseTrustedProxies, type TrustedProxies } from "./pipeline/client-address";
import { MIB } from "./pipeline/read-body";
import { REDIS_FAIL_MODES, type RedisFailMode } from "./state/redis-failover";
import { parseRouting, type RoutingConfig } from "./routing/routing-config";
import { AUTH_SCHEMES, BUILT_IN_VENDORS, type AuthScheme, type VendorConfig, type VendorRow } from "./routing/vendors";

export interface Config {
  port: number;
  host: string;
  dbPath: string;
  adminKey: string | undefined;
  configFile: string | undefined;
  /** Every vendor: the built-in rows with the config file's laid over them, keys from the environment. */
  vendors: VendorConfig[];
  /** `models` rows of the config file (laid over the built-in catalog). */
  models: unknown[];
  /** The file's `routing:` section (retries, timeouts, circuit breaking) over the defaults. */
  routing: RoutingConfig;
  /** Seconds between keep-alives on a quiet stream. */
  keepAliveSeconds: number;
  /** Seconds a connection may stay silent before the server closes it (Bun's maximum: 255). */
  idleTimeoutSeconds: number;
  /** Largest request body accepted, in bytes (`TURNPIKE_MAX_BODY_MB`; larger is a 413). */
  maxBodyBytes: number;
  /** Peers whose `X-Forwarded-For` is believed (`TURNPIKE_TRUSTED_PROXIES`: addresses and CIDR ranges). */
  trustedProxies: TrustedProxies;
  /** Several instances (README "Running several instances"): where shared state lives. */
  scaleOut: ScaleOutConfig;
  /** Seconds open streams may run on after SIGTERM/SIGINT before they are cut (`TURNPIKE_DRAIN_SECONDS`, default 30). */
  drainSeconds: number;
  /** Days a stored Responses-format reply is kept (`TURNPIKE_RESPONSES_RETENTION_DAYS`, default 30). */
  responsesRetentionDays: number;
  /** Metrics, logs and traces (README "Metrics", "Logging", "Tracing"). */
  ops: OpsConfig;
  /** `TURNPIKE_RESPONSES_WEBSOCKET` (default `on`): serve the Responses format over WebSocket; `off` answers the upgrade 426. */
  responsesWebsocket: boolean;
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ["json", "pretty"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface OpsConfig {
  /** `TURNPIKE_METRICS_KEY`: the bearer secret `GET /metrics` asks for; unset = open. */
  metricsKey: string | undefined;
  /** `TURNPIKE_LOG_LEVEL` (default `info`: one line per request). */
  logLevel: LogLevel;
  /** `TURNPIKE_LOG_FORMAT`: JSON lines (default) or `pretty` for a terminal. */
  logFormat: LogFormat;
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`: where traces go over OTLP/HTTP; unset = no tracing at all. */
  otlpEndpoint: string | undefined;
  /** `OTEL_SERVICE_NAME` (default `turnpike`). */
  serviceName: string;
}

export interface ScaleOutConfig {
  /** `TURNPIKE_DATABASE_URL`: keys, the ledger and every stored record in PostgreSQL; unset = SQLite. */
  databaseUrl: string | undefined;
  /** `TURNPIKE_REDIS_URL`: limits, budgets, failed-auth counters and key notices in Redis; unset = in process. */
  redisUrl: string | undefined;
  /** `TURNPIKE_REDIS_FAIL`: while Redis is unreachable, serve on local limits (`open`) or refuse (`closed`). */
  redisFail: RedisFailMode;
  /** `TURNPIKE_REDIS_PREFIX`: the prefix of every Redis key and channel. */
  redisPrefix: string;
  /** `TURNPIKE_JOURNAL_DIR`: this instance's local usage journal (with PostgreSQL). */
  journalDir: string;
  /** `TURNPIKE_KEY_CACHE_TTL_MS`: how often keys are re-read from a shared store in any case. */
  keyCacheTtlMs: number;
}

type Env = Record<string, string | undefined>;


function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Reads the config file: JSON by default, YAML when the name ends in .yaml or .yml. */
export function readConfigFile(path: string): Record<string, unknown> {
  const text = readFileSync(path, "utf8");
  const parsed: unknown = /\.ya?ml$/i.test(path) ? Bun.YAML.parse(text) : JSON.parse(text);
  if (!isRecord(parsed)) throw new Error(`${path}: the config file must hold an object with optional "models", "vendors" and "routing"`);
  return parsed;
}

/** `ACME-EU` → `ACME_EU`: the default environment names of a vendor added by config. */
function envWord(id: string): string {
  return id.toUpperCase().replace(/[^A-Z0-9]+/g, "_");
}

/**
 * The vendor rows: built-in ones, changed or added to by the file's `vendors` map
 * (`{id: {protocol, base_url, api_key_env, auth}}`). A new vendor must name its protocol.
 */
export function vendorRows(fileVendors: unknown, where: string): VendorRow[] {
  const rows = new Map<string, VendorRow>(BUILT_IN_VENDORS.map((v) => [v.id, { ...v }]));
  if (fileVendors === undefined) return [...rows.values()];
  if (!isRecord(fileVendors)) throw new Error(`${where}: "vendors" must be a map of vendor id to {protocol, base_url, api_key_env, auth}`);
  for (const [id, raw] of Object.entries(fileVendors)) {
    const at = `${where}: vendors.${id}`;
    if (!/^[a-z0-9][a-z0-9_-]*$/.test(id)) throw new Error(`${at}: a vendor id is lower-case letters, digits, "-" and "_"`);
    if (!isRecord(raw)) throw new Error(`${at}: must be an object {protocol, base_url, api_key_env, auth}`);
    const base = rows.get(id);
    const protocol = raw.protocol ?? base?.protocol;
    if (typeof protocol !== "string" || !UPSTREAM_PROTOCOLS.some((p) => p === protocol)) {
      throw new Error(`${at}.protocol: must be one of ${UPSTREAM_PROTOCOLS.join(", ")}, got ${JSON.stringify(raw.protocol)}`);
    }
    for (const f of ["base_url", "api_key_env"] as const) {
      if (raw[f] !== undefined && (typeof raw[f] !== "string" || raw[f] === "")) throw new Error(`${at}.${f}: must be a non-empty string, got ${JSON.stringify(raw[f])}`);
    }
    if (raw.auth !== undefined && !AUTH_SCHEMES.some((a) => a === raw.auth)) {
      throw new Error(`${at}.auth: must be one of ${AUTH_SCHEMES.join(", ")}, got ${JSON.stringify(raw.auth)}`);
    }
    rows.set(id, {
      id,
      // Each of these was checked above (against its list, or as a non-empty string).
      protocol: protocol as Protocol,
      auth: (raw.auth as AuthScheme | undefined) ?? base?.auth,
      base_url: (raw.base_url as string | undefined) ?? base?.base_url,
      api_key_env: (raw.api_key_env as string | undefined) ?? base?.api_key_env ?? `${envWord(id)}_API_KEY`,
      base_url_env: base?.base_url_env ?? `${envWord(id)}_BASE_URL`,
    });
  }
  return [...rows.values()];
}

export function loadConfig(env: Env = process.env): Config {
  const configFile = env.TURNPIKE_CONFIG || undefined;
  const file = configFile ? readConfigFile(configFile) : {};
  const vendors = vendorRows(file.vendors, configFile ?? "config").map(
    (row): VendorConfig => ({
      id: row.id,
      protocol: row.protocol,
      auth: row.auth,
      // The environment wins over the file, as for every other setting.
      baseURL: (row.base_url_env && env[row.base_url_env]) || row.base_url,
      apiKey: env[row.api_key_env] || undefined,
      apiKeyEnv: row.api_key_env,
    }),
  );
  const models = file.models ?? [];
  if (!Array.isArray(models)) throw new Error(`${configFile}: "models" must be a list`);
  const port = Number(env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, got ${env.PORT}`);
  const maxBodyMB = Number(env.TURNPIKE_MAX_BODY_MB || 32);
  if (!Number.isFinite(maxBodyMB) || maxBodyMB <= 0 || maxBodyMB > 4096) throw new Error(`TURNPIKE_MAX_BODY_MB must be a number of megabytes above 0 and at most 4096, got ${env.TURNPIKE_MAX_BODY_MB}`);
  const adminKey = env.TURNPIKE_ADMIN_KEY || undefined;
  // A short admin key can be guessed; the generated one is 41 characters.
  if (adminKey !== undefined && adminKey.length < MIN_ADMIN_KEY_LENGTH) {
    throw new Error(`TURNPIKE_ADMIN_KEY must be at least ${MIN_ADMIN_KEY_LENGTH} characters long (got ${adminKey.length}); unset it to have one generated for the run.`);
  }
  return {
    port,
    host: env.HOST || "0.0.0.0",
    dbPath: env.TURNPIKE_DB || "data/turnpike.db",
    adminKey,
    configFile,
    vendors,
    models,
    routing: parseRouting(file.routing, configFile ?? "config"),
    keepAliveSeconds: Number(env.TURNPIKE_KEEPALIVE_SECONDS ?? 15),
    idleTimeoutSeconds: Math.min(255, Number(env.TURNPIKE_IDLE_TIMEOUT_SECONDS ?? 255)),
    maxBodyBytes: Math.floor(maxBodyMB * MIB),
    trustedProxies: parseTrustedProxies(env.TURNPIKE_TRUSTED_PROXIES ?? ""),
    scaleOut: scaleOutConfig(env),
    drainSeconds: positiveNumber(env.TURNPIKE_DRAIN_SECONDS, 30, "TURNPIKE_DRAIN_SECONDS"),
    responsesRetentionDays: positiveNumber(env.TURNPIKE_RESPONSES_RETENTION_DAYS, 30, "TURNPIKE_RESPONSES_RETENTION_DAYS"),
    ops: opsConfig(env),
    responsesWebsocket: oneOf(env.TURNPIKE_RESPONSES_WEBSOCKET?.toLowerCase(), ["on", "off"], "on", "TURNPIKE_RESPONSES_WEBSOCKET") === "on",
  };
}

function oneOf<T extends string>(raw: string | undefined, allowed: readonly T[], fallback: T, name: string): T {
  const v = raw || fallback;
  if (!allowed.some((a) => a === v)) throw new Error(`${name} must be one of ${allowed.join(", ")}, got ${JSON.stringify(raw)}`);
  return v as T; // checked against the list just above
}

function opsConfig(env: Env): OpsConfig {
  const otlp = env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined;
  if (otlp && !/^https?:\/\//.test(otlp)) throw new Error(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL, got ${JSON.stringify(otlp)}`);
  return {
    metricsKey: env.TURNPIKE_METRICS_KEY || undefined,
    logLevel: oneOf(env.TURNPIKE_LOG_LEVEL?.toLowerCase(), LOG_LEVELS, "info", "TURNPIKE_LOG_LEVEL"),
    logFormat: oneOf(env.TURNPIKE_LOG_FORMAT?.toLowerCase(), LOG_FORMATS, "json", "TURNPIKE_LOG_FORMAT"),
    otlpEndpoint: otlp,
    serviceName: env.OTEL_SERVICE_NAME || "turnpike",
  };
}

function positiveNumber(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return n;
}

function scaleOutConfig(env: Env): ScaleOutConfig {
  const databaseUrl = env.TURNPIKE_DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) throw new Error(`TURNPIKE_DATABASE_URL must be a postgres:// URL, got ${JSON.stringify(databaseUrl.split("@").pop())}`);
  const redisUrl = env.TURNPIKE_REDIS_URL || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) throw new Error(`TURNPIKE_REDIS_URL must be a redis:// or rediss:// URL, got ${JSON.stringify(redisUrl.split("@").pop())}`);
  const redisFail = env.TURNPIKE_REDIS_FAIL || "open";
  if (!REDIS_FAIL_MODES.some((m) => m === redisFail)) throw new Error(`TURNPIKE_REDIS_FAIL must be one of ${REDIS_FAIL_MODES.join(", ")}, got ${JSON.stringify(redisFail)}`);
  const ttl = Number(env.TURNPIKE_KEY_CACHE_TTL_MS || 1000);
  if (!Number.isInteger(ttl) || ttl < 100) throw new Error(`TURNPIKE_KEY_CACHE_TTL_MS must be a whole number of milliseconds, at least 100, got ${env.TURNPIKE_KEY_CACHE_TTL_MS}`);
  return {
    databaseUrl,
    redisUrl,
    redisFail: redisFail as RedisFailMode, // checked against REDIS_FAIL_MODES just above
    redisPrefix: env.TURNPIKE_REDIS_PREFIX || "turnpike:",
    journalDir: env.TURNPIKE_JOURNAL_DIR || "data/journal",
    keyCacheTtlMs: ttl,
  };
}
