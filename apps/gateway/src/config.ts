import { readFileSync } from "node:fs";
import { VENDORS, type Vendor } from "./routing/catalog";

/** Where one vendor's upstream lives. `apiKey` unset = served by the built-in simulator. */
export interface VendorConfig {
  baseURL: string | undefined;
  apiKey: string | undefined;
}

export interface Config {
  port: number;
  host: string;
  dbPath: string;
  adminKey: string | undefined;
  configFile: string | undefined;
  vendors: Record<Vendor, VendorConfig>;
  /** `models` rows of the config file (laid over the built-in catalog). */
  models: unknown[];
  /** Seconds between keep-alives on a quiet stream. */
  keepAliveSeconds: number;
  /** Seconds a connection may stay silent before the server closes it (Bun's maximum: 255). */
  idleTimeoutSeconds: number;
}

/** The env names of each vendor's pair (DESIGN.md §3). */
export const VENDOR_ENV: Record<Vendor, { base: string; key: string }> = {
  alpha: { base: "ALPHA_BASE_URL", key: "ALPHA_API_KEY" },
  beta: { base: "BETA_BASE_URL", key: "BETA_API_KEY" },
  gamma: { base: "GAMMA_BASE_URL", key: "GAMMA_API_KEY" },
  delta: { base: "DELTA_BASE_URL", key: "DELTA_API_KEY" },
};

type Env = Record<string, string | undefined>;

/** Reads the config file: JSON by default, YAML when the name ends in .yaml or .yml. */
export function readConfigFile(path: string): Record<string, unknown> {
  const text = readFileSync(path, "utf8");
  const parsed: unknown = /\.ya?ml$/i.test(path) ? Bun.YAML.parse(text) : JSON.parse(text);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`${path}: the config file must hold an object with optional "models" and "vendors"`);
  }
  return parsed as Record<string, unknown>;
}

export function loadConfig(env: Env = process.env): Config {
  const configFile = env.TURNPIKE_CONFIG || undefined;
  const file = configFile ? readConfigFile(configFile) : {};
  const fileVendors = (file.vendors ?? {}) as Record<string, { base_url?: string } | undefined>;
  const vendors = {} as Record<Vendor, VendorConfig>;
  for (const v of VENDORS) {
    vendors[v] = {
      baseURL: env[VENDOR_ENV[v].base] || fileVendors[v]?.base_url || undefined,
      apiKey: env[VENDOR_ENV[v].key] || undefined,
    };
  }
  const models = file.models ?? [];
  if (!Array.isArray(models)) throw new Error(`${configFile}: "models" must be a list`);
  const port = Number(env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, got ${env.PORT}`);
  return {
    port,
    host: env.HOST || "0.0.0.0",
    dbPath: env.TURNPIKE_DB || "data/turnpike.db",
    adminKey: env.TURNPIKE_ADMIN_KEY || undefined,
    configFile,
    vendors,
    models,
    keepAliveSeconds: Number(env.TURNPIKE_KEEPALIVE_SECONDS ?? 15),
    idleTimeoutSeconds: Math.min(255, Number(env.TURNPIKE_IDLE_TIMEOUT_SECONDS ?? 255)),
  };
}
