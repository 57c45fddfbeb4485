import { UPSTREAM_PROTOCOLS } from "@turnpike/schema";
import { MIN_ADMIN_KEY_LENGTH } from "../keys/admin-key";
import { parseTrustedProxies, type TrustedProxies } from "../http/client-address";
import { DEFAULT_MAX_BODY_VALUES, MIB } from "../request/read-body";
import { REDIS_FAIL_MODES, type RedisFailMode } from "../storage/redis-link";
import { type Static, Type } from "@sinclair/typebox";
import { catalogProblems, MODEL_ROW_FIELDS } from "../dispatch/catalog";
import {
  DEFAULT_ROUTING,
  MODEL_ROUTING_FIELDS,
  modelRoutingProblems,
  parseRouting,
  type RoutingConfig,
} from "../dispatch/routing-config";
import { AUTH_SCHEMES, BUILT_IN_VENDORS, type VendorConfig, type VendorRow } from "../dispatch/vendors";
import { isRecord } from "../vocabulary/client-errors";
import { ConfigError, configProblems, refuse } from "../vocabulary/config-error";
import { unknownKeys } from "../vocabulary/unknown-fields";
import { type ConfigSource, readConfigSource, withPositions } from "./config-file";
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from "../log/logger";

import { MCP_DEFAULTS, type McpConfig, parseMcpConfig } from "./mcp-config";
import { parsePublicUrl, parseSignOn, type SignOnConfig } from "./sign-on-config";
import { type GuardrailsConfig, parseGuardrails } from "../guardrails/policy";

export interface Config {
  port: number;
  host: string;
  /** `TURNPIKE_SHARE_PORT` (default `off`): listen beside other processes on the same port (SO_REUSEPORT); off refuses to start on a taken port. */
  sharePort: boolean;
  dbPath: string;
  adminKey: string | undefined;
  /**
   * `TURNPIKE_ADMIN_KEY_PREVIOUS` until `TURNPIKE_ADMIN_KEY_PREVIOUS_UNTIL`: the admin key being
   * rotated out, still accepted until then (docs/operations.md "Rotating the admin key").
   */
  adminKeyPrevious?: PreviousAdminKey;
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
  /** Most JSON values one request body may hold (`TURNPIKE_MAX_BODY_VALUES`; more is a 413): what bounds one body's hold on the event loop. */
  maxBodyValues: number;
  /** Peers whose `X-Forwarded-For` is believed (`TURNPIKE_TRUSTED_PROXIES`: addresses and CIDR ranges). */
  trustedProxies: TrustedProxies;
  /** Several instances (site/operations/scale-out.md "Running several instances"): where shared state lives. */
  scaleOut: ScaleOutConfig;
  /** Seconds open streams may run on after SIGTERM/SIGINT before they are cut (`TURNPIKE_DRAIN_SECONDS`, default 30). */
  drainSeconds: number;
  /** Days a stored Responses-format reply is kept (`TURNPIKE_RESPONSES_RETENTION_DAYS`, default 30). */
  responsesRetentionDays: number;
  /**
   * Days the ledger's raw usage rows are kept (`TURNPIKE_USAGE_RETENTION_DAYS`, default 90); its
   * rollups, which charts, totals and budgets read, are kept for good.
   */
  usageRetentionDays: number;
  /** Metrics, logs and traces (site/operations/monitoring.md "Metrics", "Logging", "Tracing"). */
  ops: OpsConfig;
  /** The upstream MCP servers behind `/mcp` (the file's `mcp_servers:`; site/guide/mcp.md "MCP"). */
  mcp: McpConfig;
  /** The file's `guardrails:` section: named policies, compiled, and the default list (docs/guardrails.md). */
  guardrails: GuardrailsConfig;
  /** OpenID Connect sign-in to the dashboard (`TURNPIKE_OIDC_*` and the file's `sign_on:`); absent = off. */
  signOn?: SignOnConfig;
  /**
   * `TURNPIKE_PUBLIC_URL`: the gateway's origin as clients reach it; the sign-in's redirect, the
   * session cookie's Secure flag and the MCP protected-resource metadata come from it (never from
   * a request's Host). Required with sign-on; without it the metadata is not served.
   */
  publicUrl?: string;
  /** `TURNPIKE_ADMIN_WRITES_PER_MINUTE` (default 120): admin API writes one principal may make per minute; more is a 429. */
  adminWritesPerMinute: number;
  /** `TURNPIKE_RESPONSES_WEBSOCKET` (default `on`): serve the Responses format over WebSocket; `off` answers the upgrade 426. */
  responsesWebsocket: boolean;
  /** Bounds of the Responses WebSocket (the file's `responses_websocket:`; site/guide/responses.md "The Responses API"). */
  websocketLimits: WebsocketLimits;
  /** Batches (batches/): the input limits, and how long a worker holds a job between renewals. */
  batches: BatchConfig;
}

/** An admin key accepted until a time, during a rotation. */
export interface PreviousAdminKey {
  key: string;
  /** ISO 8601: from this instant the key is refused like any wrong one. */
  until: string;
}

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
  /**
   * `TURNPIKE_INFLIGHT_AFTER_MS`: a request still running this long after its admission is
   * written to the shared book of requests in flight (one that ends sooner never is); 0, the
   * default: strict, every request written at admission and its record acknowledged only once its
   * row is written (no bill waits for a dead instance; the fast mode trades that for speed).
   */
  inflightAfterMs: number;
}

type Env = Record<string, string | undefined>;

/** Reads the config file: JSON by default, YAML when the name ends in .yaml or .yml. */
export function readConfigFile(path: string): Record<string, unknown> {
  return readConfigSource(path).value;
}

/**
 * The sections of the config file. A new section is added here, or every file using it is
 * refused for an unknown field.
 */
export const CONFIG_FILE_FIELDS = [
  "models",
  "vendors",
  "routing",
  "mcp_servers",
  "mcp_limits",
  "sign_on",
  "responses_websocket",
  "guardrails",
] as const;

/** `ACME-EU` → `ACME_EU`: the default environment names of a vendor added by config. */
function envWord(id: string): string {
  return id.toUpperCase().replace(/[^A-Z0-9]+/g, "_");
}

/** One entry of the file's `vendors` map. */
const VendorFile = Type.Object(
  {
    protocol: Type.Optional(
      Type.Union(
        UPSTREAM_PROTOCOLS.map((p) => Type.Literal(p)),
        { rule: `must be one of ${UPSTREAM_PROTOCOLS.join(", ")}` },
      ),
    ),
    base_url: Type.Optional(Type.String({ minLength: 1 })),
    api_key_env: Type.Optional(Type.String({ minLength: 1 })),
    auth: Type.Optional(
      Type.Union(
        AUTH_SCHEMES.map((a) => Type.Literal(a)),
        { rule: `must be one of ${AUTH_SCHEMES.join(", ")}` },
      ),
    ),
  },
  { additionalProperties: false, rule: "must be an object {protocol, base_url, api_key_env, auth}" },
);
const VendorsFile = Type.Record(Type.String(), VendorFile, {
  rule: "must be a map of vendor id to {protocol, base_url, api_key_env, auth}",
});

/** The file's `models`: rows checked one by one by the catalog and the router. */
const ModelsFile = Type.Array(Type.Unknown(), { rule: "must be a list" });

/**
 * The vendor rows: built-in ones, changed or added to by the file's `vendors` map
 * (`{id: {protocol, base_url, api_key_env, auth}}`), with every mistake of the map. A new vendor
 * must name its protocol.
 */
function readVendorRows(fileVendors: unknown, where: string): { rows: VendorRow[]; problems: string[] } {
  const rows = new Map<string, VendorRow>(BUILT_IN_VENDORS.map((v) => [v.id, { ...v }]));
  if (fileVendors === undefined) return { rows: [...rows.values()], problems: [] };
  const problems = configProblems(VendorsFile, fileVendors, where, "vendors");
  if (problems.length) return { rows: [...rows.values()], problems };
  for (const [id, raw] of Object.entries(fileVendors as Static<typeof VendorsFile>)) {
    const at = `${where}: vendors.${id}`;
    if (!/^[a-z0-9][a-z0-9_-]*$/.test(id)) {
      problems.push(`${at}: a vendor id is lower-case letters, digits, "-" and "_"`);
      continue;
    }
    const base = rows.get(id);
    const protocol = raw.protocol ?? base?.protocol;
    if (protocol === undefined) {
      problems.push(
        `${at}.protocol: must be one of ${UPSTREAM_PROTOCOLS.join(", ")} for a vendor that is not built in, got nothing`,
      );
      continue;
    }
    rows.set(id, {
      id,
      protocol,
      auth: raw.auth ?? base?.auth,
      base_url: raw.base_url ?? base?.base_url,
      api_key_env: raw.api_key_env ?? base?.api_key_env ?? `${envWord(id)}_API_KEY`,
      base_url_env: base?.base_url_env ?? `${envWord(id)}_BASE_URL`,
    });
  }
  return { rows: [...rows.values()], problems };
}

/** The vendor rows of {@link readVendorRows}, or a ConfigError naming every mistake of the map. */
export function vendorRows(fileVendors: unknown, where: string): VendorRow[] {
  const { rows, problems } = readVendorRows(fileVendors, where);
  refuse(problems);
  return rows;
}

/**
 * The configuration from the environment and the `TURNPIKE_CONFIG` file. Every mistake is found
 * before any is reported: one ConfigError lists them all, each with its file (or variable), path
 * and rule.
 */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const check = <T>(read: () => T, fallback: T): T => {
    try {
      return read();
    } catch (e) {
      if (e instanceof ConfigError) problems.push(...e.problems);
      else problems.push(e instanceof Error ? e.message : String(e));
      return fallback;
    }
  };
  const configFile = env.TURNPIKE_CONFIG || undefined;
  const where = configFile ?? "config";
  const source: ConfigSource | undefined = configFile
    ? check(() => readConfigSource(configFile), undefined)
    : undefined;
  const file = source?.value ?? {};
  // Every field of the file is one Turnpike reads: a typo is refused, with the name it was likely meant to be.
  problems.push(...unknownKeys(file, CONFIG_FILE_FIELDS, "").map((p) => `${where}: ${p}`));
  const read = readVendorRows(file.vendors, where);
  problems.push(...read.problems);
  const vendors = read.rows.map(
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
  const modelProblems = file.models === undefined ? [] : configProblems(ModelsFile, file.models, where, "models");
  problems.push(...modelProblems);
  const models = file.models === undefined || modelProblems.length ? [] : (file.models as unknown[]); // a list: checked just above
  // The models rows, each checked as a catalog row and for its routing fields.
  const catalog = catalogProblems(models, vendors);
  problems.push(...catalog.problems.map((p) => `${where}: ${p}`));
  const vendorIds = new Set(vendors.map((v) => v.id));
  const rowFields = [...MODEL_ROW_FIELDS, ...MODEL_ROUTING_FIELDS];
  models.forEach((row, i) => {
    if (!isRecord(row)) return;
    problems.push(...unknownKeys(row, rowFields, `models[${i}]`).map((p) => `${where}: ${p}`));
    problems.push(...modelRoutingProblems(row, where, `models[${i}]`, vendorIds, catalog.ids, catalog.embedding));
  });
  const routing = check(() => parseRouting(file.routing, where), DEFAULT_ROUTING);
  const port = Number(env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) problems.push(`PORT must be a port number, got ${env.PORT}`);
  const maxBodyMB = Number(env.TURNPIKE_MAX_BODY_MB || 32);
  if (!Number.isFinite(maxBodyMB) || maxBodyMB <= 0 || maxBodyMB > 4096)
    problems.push(
      `TURNPIKE_MAX_BODY_MB must be a number of megabytes above 0 and at most 4096, got ${env.TURNPIKE_MAX_BODY_MB}`,
    );
  const maxBodyValues = Number(env.TURNPIKE_MAX_BODY_VALUES || DEFAULT_MAX_BODY_VALUES);
  if (!Number.isInteger(maxBodyValues) || maxBodyValues < 1000)
    problems.push(
      `TURNPIKE_MAX_BODY_VALUES must be a whole number of JSON values, at least 1000, got ${env.TURNPIKE_MAX_BODY_VALUES}`,
    );
  const adminKey = env.TURNPIKE_ADMIN_KEY || undefined;
  // A short admin key can be guessed; the generated one is 41 characters.
  if (adminKey !== undefined && adminKey.length < MIN_ADMIN_KEY_LENGTH) {
    problems.push(
      `TURNPIKE_ADMIN_KEY must be at least ${MIN_ADMIN_KEY_LENGTH} characters long (got ${adminKey.length}); unset it to have one generated for the run.`,
    );
  }
  const adminKeyPrevious = check(() => previousAdminKey(env), undefined);
  const config: Config = {
    port,
    host: env.HOST || "0.0.0.0",
    sharePort: check(
      () => oneOf(env.TURNPIKE_SHARE_PORT?.toLowerCase(), ["on", "off"], "off", "TURNPIKE_SHARE_PORT") === "on",
      false,
    ),
    dbPath: env.TURNPIKE_DB || "data/turnpike.db",
    adminKey,
    ...(adminKeyPrevious ? { adminKeyPrevious } : {}),
    configFile,
    vendors,
    models,
    routing,
    keepAliveSeconds: Number(env.TURNPIKE_KEEPALIVE_SECONDS ?? 15),
    idleTimeoutSeconds: Math.min(255, Number(env.TURNPIKE_IDLE_TIMEOUT_SECONDS ?? 255)),
    maxBodyBytes: Math.floor(maxBodyMB * MIB),
    maxBodyValues,
    trustedProxies: check(() => parseTrustedProxies(env.TURNPIKE_TRUSTED_PROXIES ?? ""), { ranges: [] }),
    scaleOut: check(() => scaleOutConfig(env), scaleOutConfig({})),
    drainSeconds: check(() => positiveNumber(env.TURNPIKE_DRAIN_SECONDS, 30, "TURNPIKE_DRAIN_SECONDS"), 30),
    responsesRetentionDays: check(
      () => positiveNumber(env.TURNPIKE_RESPONSES_RETENTION_DAYS, 30, "TURNPIKE_RESPONSES_RETENTION_DAYS"),
      30,
    ),
    usageRetentionDays: check(
      () => positiveNumber(env.TURNPIKE_USAGE_RETENTION_DAYS, 90, "TURNPIKE_USAGE_RETENTION_DAYS"),
      90,
    ),
    ops: check(() => opsConfig(env), opsConfig({})),
    mcp: check(() => parseMcpConfig(file, env, where), {
      servers: [],
      maxArgumentBytes: MCP_DEFAULTS.maxArgumentBytes,
      maxResultBytes: MCP_DEFAULTS.maxResultBytes,
    }),
    signOn: check(() => parseSignOn(file, env, where), undefined),
    guardrails: (() => {
      const found: string[] = [];
      const g = parseGuardrails(file.guardrails, found);
      problems.push(...found.map((p) => `${where}: ${p}`));
      return g;
    })(),
    publicUrl: check(() => parsePublicUrl(env), undefined),
    adminWritesPerMinute: check(
      () => Math.floor(positiveNumber(env.TURNPIKE_ADMIN_WRITES_PER_MINUTE, 120, "TURNPIKE_ADMIN_WRITES_PER_MINUTE")),
      120,
    ),
    responsesWebsocket: check(
      () =>
        oneOf(env.TURNPIKE_RESPONSES_WEBSOCKET?.toLowerCase(), ["on", "off"], "on", "TURNPIKE_RESPONSES_WEBSOCKET") ===
        "on",
      true,
    ),
    websocketLimits: check(() => websocketLimits(file.responses_websocket, where), WEBSOCKET_DEFAULTS),
    batches: check(
      () => ({
        maxFileBytes: Math.floor(
          positiveNumber(env.TURNPIKE_BATCH_MAX_FILE_MB, 100, "TURNPIKE_BATCH_MAX_FILE_MB") * MIB,
        ),
        maxLines: Math.floor(positiveNumber(env.TURNPIKE_BATCH_MAX_LINES, 50_000, "TURNPIKE_BATCH_MAX_LINES")),
        maxLineBytes: Math.floor(
          positiveNumber(env.TURNPIKE_BATCH_MAX_LINE_KB, 1024, "TURNPIKE_BATCH_MAX_LINE_KB") * 1024,
        ),
        leaseMs: Math.floor(
          positiveNumber(env.TURNPIKE_BATCH_LEASE_SECONDS, 30, "TURNPIKE_BATCH_LEASE_SECONDS") * 1000,
        ),
        retentionDays: positiveNumber(env.TURNPIKE_BATCH_RETENTION_DAYS, 30, "TURNPIKE_BATCH_RETENTION_DAYS"),
        worker: oneOf(env.TURNPIKE_BATCH_WORKER?.toLowerCase(), ["on", "off"], "on", "TURNPIKE_BATCH_WORKER") === "on",
        upstreamOff: (env.TURNPIKE_BATCH_UPSTREAM_OFF ?? "")
          .split(",")
          .map((v) => v.trim())
          .filter((v) => v !== ""),
        pollMs: Math.floor(positiveNumber(env.TURNPIKE_BATCH_POLL_SECONDS, 30, "TURNPIKE_BATCH_POLL_SECONDS") * 1000),
      }),
      {
        maxFileBytes: 100 * MIB,
        maxLines: 50_000,
        maxLineBytes: 1024 * 1024,
        leaseMs: 30_000,
        retentionDays: 30,
        worker: true,
        upstreamOff: [],
        pollMs: 30_000,
      },
    ),
  };
  refuse(configFile && source ? withPositions(problems, configFile, source) : problems);
  return config;
}

/** What one Responses WebSocket, and one key's sockets, may hold (the file's `responses_websocket:`). */
export interface WebsocketLimits {
  /** Frames received on one socket and not yet answered (the turn in flight and those waiting behind it). */
  maxQueuedFrames: number;
  /** Their bytes together: a frame that would pass it is refused on arrival, never queued. */
  maxQueuedBytes: number;
  /** Sockets one key may hold open on one instance; the next handshake is a 429. */
  maxSocketsPerKey: number;
}

/**
 * An agent sends its next turn once the last has completed: one frame waits at most. 24 frames of
 * 8 MiB sent at once on one socket took the gateway's peak resident memory from 122 to 1,164 MiB
 * unbounded; with these bounds (a frame as large as a request body fits) to 520–533 MiB, 21 of
 * them refused (issue 41, item 7; most of what remains is the refused frames, which the runtime
 * has already read, waiting for the collector).
 */
export const WEBSOCKET_DEFAULTS: WebsocketLimits = {
  maxQueuedFrames: 4,
  maxQueuedBytes: 32 * MIB,
  maxSocketsPerKey: 16,
};

const whole = Type.Integer({ minimum: 1, rule: "must be a positive whole number" });
const WebsocketFile = Type.Object(
  {
    max_queued_frames: Type.Optional(whole),
    max_queued_bytes: Type.Optional(whole),
    max_sockets_per_key: Type.Optional(whole),
  },
  {
    additionalProperties: false,
    listKnown: true,
    rule: "must be an object {max_queued_frames?, max_queued_bytes?, max_sockets_per_key?}",
  },
);

/** The file's `responses_websocket:` over {@link WEBSOCKET_DEFAULTS}. */
function websocketLimits(raw: unknown, where: string): WebsocketLimits {
  if (raw === undefined) return WEBSOCKET_DEFAULTS;
  refuse(configProblems(WebsocketFile, raw, where, "responses_websocket"));
  const f = raw as Static<typeof WebsocketFile>; // conforms: checked just above
  return {
    maxQueuedFrames: f.max_queued_frames ?? WEBSOCKET_DEFAULTS.maxQueuedFrames,
    maxQueuedBytes: f.max_queued_bytes ?? WEBSOCKET_DEFAULTS.maxQueuedBytes,
    maxSocketsPerKey: f.max_sockets_per_key ?? WEBSOCKET_DEFAULTS.maxSocketsPerKey,
  };
}

/** The batch limits and worker settings (`TURNPIKE_BATCH_*`). */
export interface BatchConfig {
  /** A batch input file (or a messages batch body) at most this big. */
  maxFileBytes: number;
  maxLines: number;
  maxLineBytes: number;
  /** A job's lease: renewed while its worker works; another instance takes the job once it runs out. */
  leaseMs: number;
  /** Ended jobs, their results and files are kept this many days after they were made. */
  retentionDays: number;
  /** `TURNPIKE_BATCH_WORKER=off`: this instance takes batches but runs none (another instance does). */
  worker: boolean;
  /**
   * `TURNPIKE_BATCH_UPSTREAM_OFF`: vendors (comma-separated ids, or `all`) whose own batch API is
   * not used: their lines run through Turnpike's queue at the normal price.
   */
  upstreamOff: readonly string[];
  /** `TURNPIKE_BATCH_POLL_SECONDS`: how often an upstream batch is asked whether it has ended (default 30). */
  pollMs: number;
}

/**
 * `TURNPIKE_ADMIN_KEY_PREVIOUS` and `TURNPIKE_ADMIN_KEY_PREVIOUS_UNTIL`, both or neither: a key
 * kept working forever would be no rotation, so the end of its grace is required.
 */
function previousAdminKey(env: Env): PreviousAdminKey | undefined {
  const key = env.TURNPIKE_ADMIN_KEY_PREVIOUS || undefined;
  const until = env.TURNPIKE_ADMIN_KEY_PREVIOUS_UNTIL || undefined;
  if (key === undefined && until === undefined) return undefined;
  if (key === undefined)
    throw new Error(
      "TURNPIKE_ADMIN_KEY_PREVIOUS_UNTIL is set without TURNPIKE_ADMIN_KEY_PREVIOUS: unset it, or set both",
    );
  if (until === undefined || Number.isNaN(Date.parse(until)))
    throw new Error(
      `TURNPIKE_ADMIN_KEY_PREVIOUS_UNTIL must be the ISO 8601 time the previous admin key stops working (e.g. 2026-12-01T00:00:00Z), got ${JSON.stringify(until ?? "")}`,
    );
  if (!env.TURNPIKE_ADMIN_KEY)
    throw new Error("TURNPIKE_ADMIN_KEY_PREVIOUS is set without TURNPIKE_ADMIN_KEY: set the new admin key too");
  if (key === env.TURNPIKE_ADMIN_KEY)
    throw new Error(
      "TURNPIKE_ADMIN_KEY_PREVIOUS is the same as TURNPIKE_ADMIN_KEY: set the new key in TURNPIKE_ADMIN_KEY",
    );
  if (key.length < MIN_ADMIN_KEY_LENGTH)
    throw new Error(
      `TURNPIKE_ADMIN_KEY_PREVIOUS must be at least ${MIN_ADMIN_KEY_LENGTH} characters long (got ${key.length})`,
    );
  return { key, until: new Date(Date.parse(until)).toISOString() };
}

function oneOf<T extends string>(raw: string | undefined, allowed: readonly T[], fallback: T, name: string): T {
  const v = raw || fallback;
  if (!allowed.some((a) => a === v))
    throw new Error(`${name} must be one of ${allowed.join(", ")}, got ${JSON.stringify(raw)}`);
  return v as T; // checked against the list just above
}

function opsConfig(env: Env): OpsConfig {
  const otlp = env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined;
  if (otlp && !/^https?:\/\//.test(otlp))
    throw new Error(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL, got ${JSON.stringify(otlp)}`);
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
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl))
    throw new Error(
      `TURNPIKE_DATABASE_URL must be a postgres:// URL, got ${JSON.stringify(databaseUrl.split("@").pop())}`,
    );
  const redisUrl = env.TURNPIKE_REDIS_URL || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl))
    throw new Error(
      `TURNPIKE_REDIS_URL must be a redis:// or rediss:// URL, got ${JSON.stringify(redisUrl.split("@").pop())}`,
    );
  const redisFail = env.TURNPIKE_REDIS_FAIL || "open";
  if (!REDIS_FAIL_MODES.some((m) => m === redisFail))
    throw new Error(
      `TURNPIKE_REDIS_FAIL must be one of ${REDIS_FAIL_MODES.join(", ")}, got ${JSON.stringify(redisFail)}`,
    );
  const ttl = Number(env.TURNPIKE_KEY_CACHE_TTL_MS || 1000);
  if (!Number.isInteger(ttl) || ttl < 100)
    throw new Error(
      `TURNPIKE_KEY_CACHE_TTL_MS must be a whole number of milliseconds, at least 100, got ${env.TURNPIKE_KEY_CACHE_TTL_MS}`,
    );
  const after = Number(env.TURNPIKE_INFLIGHT_AFTER_MS || 0);
  if (!Number.isInteger(after) || after < 0 || after > 60_000)
    throw new Error(
      `TURNPIKE_INFLIGHT_AFTER_MS must be a whole number of milliseconds from 0 to 60000, got ${env.TURNPIKE_INFLIGHT_AFTER_MS}`,
    );
  return {
    databaseUrl,
    redisUrl,
    redisFail: redisFail as RedisFailMode, // checked against REDIS_FAIL_MODES just above
    redisPrefix: env.TURNPIKE_REDIS_PREFIX || "turnpike:",
    journalDir: env.TURNPIKE_JOURNAL_DIR || "data/journal",
    keyCacheTtlMs: ttl,
    inflightAfterMs: after,
  };
}
