/**
 * The `routing:` section of the config file, and the per-model `deployments`, `fallbacks` and
 * `timeouts` fields, read and checked: a wrong value is refused at start-up naming the file, the
 * path inside it and the rule.
 */

import { isRecord } from "../vocabulary/client-errors";

export interface Timeouts {
  /** Until the upstream's status line and headers arrive. */
  connectMs: number;
  /** Until the first byte of the upstream's body arrives. */
  firstByteMs: number;
  /** Longest silence between two chunks of a stream. */
  idleMs: number;
}

export interface RoutingConfig {
  /**
   * Extra attempts per model on a deployment that already failed, after its `retry-after` (each
   * healthy deployment is tried once in any case, and then each fallback).
   */
  retries: number;
  /** The longest `retry-after` honoured before retrying the same deployment, in seconds. */
  retryAfterMaxS: number;
  timeouts: Timeouts;
  breaker: { failures: number; cooldownS: number };
}

/** One deployment as the file gives it. */
export interface DeploymentRow {
  vendor: string;
  weight: number;
  upstream_model: string | undefined;
  rpm: number | undefined;
  tpm: number | undefined;
}

/** A model's routing fields as the file gives them (absent = one deployment on its vendor). */
export interface ModelRouting {
  deployments: DeploymentRow[] | undefined;
  fallbacks: string[];
  timeouts: Partial<Timeouts>;
}

export const DEFAULT_ROUTING: RoutingConfig = {
  retries: 0,
  retryAfterMaxS: 10,
  timeouts: { connectMs: 10_000, firstByteMs: 120_000, idleMs: 300_000 },
  breaker: { failures: 3, cooldownS: 30 },
};

/** A whole number in [min, max], or the fallback when absent. */
function whole(raw: unknown, at: string, min: number, max: number, fallback: number): number {
  if (raw === undefined) return fallback;
  if (typeof raw !== "number" || !Number.isInteger(raw) || raw < min || raw > max) throw new Error(`${at}: must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return raw;
}

const TIMEOUT_FIELDS = { connect_ms: "connectMs", first_byte_ms: "firstByteMs", idle_ms: "idleMs" } as const;
const DAY_MS = 86_400_000;

function timeouts(raw: unknown, at: string): Partial<Timeouts> {
  if (raw === undefined) return {};
  if (!isRecord(raw)) throw new Error(`${at}: must be an object {connect_ms, first_byte_ms, idle_ms}`);
  const out: Partial<Timeouts> = {};
  for (const k of Object.keys(raw)) {
    if (!(k in TIMEOUT_FIELDS)) throw new Error(`${at}.${k}: unknown field (known: ${Object.keys(TIMEOUT_FIELDS).join(", ")})`);
    const f = TIMEOUT_FIELDS[k as keyof typeof TIMEOUT_FIELDS]; // a known field: checked just above
    out[f] = whole(raw[k], `${at}.${k}`, 1, DAY_MS, 0);
  }
  return out;
}

/** The file's `routing:` section over the defaults. `where` is the file's name. */
export function parseRouting(raw: unknown, where: string): RoutingConfig {
  if (raw === undefined) return DEFAULT_ROUTING;
  const at = `${where}: routing`;
  if (!isRecord(raw)) throw new Error(`${at}: must be an object {retries, retry_after_max_s, timeouts, breaker}`);
  const known = ["retries", "retry_after_max_s", "timeouts", "breaker"];
  for (const k of Object.keys(raw)) if (!known.includes(k)) throw new Error(`${at}.${k}: unknown field (known: ${known.join(", ")})`);
  const breaker = raw.breaker ?? {};
  if (!isRecord(breaker)) throw new Error(`${at}.breaker: must be an object {failures, cooldown_s}`);
  const d = DEFAULT_ROUTING;
  return {
    retries: whole(raw.retries, `${at}.retries`, 0, 10, d.retries),
    retryAfterMaxS: whole(raw.retry_after_max_s, `${at}.retry_after_max_s`, 0, 3600, d.retryAfterMaxS),
    timeouts: { ...d.timeouts, ...timeouts(raw.timeouts, `${at}.timeouts`) },
    breaker: {
      failures: whole(breaker.failures, `${at}.breaker.failures`, 1, 1000, d.breaker.failures),
      cooldownS: whole(breaker.cooldown_s, `${at}.breaker.cooldown_s`, 1, 86_400, d.breaker.cooldownS),
    },
  };
}

/**
 * A `models` row's routing fields. `vendors` are the vendor ids and `models` the catalog ids,
 * each checked; `at` is `file: models[i]`.
 */
export function parseModelRouting(row: Record<string, unknown>, at: string, vendors: ReadonlySet<string>, models: ReadonlySet<string>): ModelRouting {
  let deployments: DeploymentRow[] | undefined;
  if (row.deployments !== undefined) {
    if (!Array.isArray(row.deployments) || row.deployments.length === 0) throw new Error(`${at}.deployments: must be a non-empty list of {vendor, weight, upstream_model, rpm, tpm}`);
    deployments = row.deployments.map((d: unknown, j: number) => {
      const dat = `${at}.deployments[${j}]`;
      if (!isRecord(d)) throw new Error(`${dat}: must be an object {vendor, weight, upstream_model, rpm, tpm}`);
      if (typeof d.vendor !== "string" || !vendors.has(d.vendor)) throw new Error(`${dat}.vendor: must be one of ${[...vendors].join(", ")}, got ${JSON.stringify(d.vendor)}`);
      if (d.upstream_model !== undefined && (typeof d.upstream_model !== "string" || d.upstream_model === "")) throw new Error(`${dat}.upstream_model: must be a non-empty string, got ${JSON.stringify(d.upstream_model)}`);
      return {
        vendor: d.vendor,
        weight: whole(d.weight, `${dat}.weight`, 1, 1_000_000, 1),
        upstream_model: d.upstream_model as string | undefined, // checked just above
        rpm: d.rpm === undefined ? undefined : whole(d.rpm, `${dat}.rpm`, 1, 100_000_000, 0),
        tpm: d.tpm === undefined ? undefined : whole(d.tpm, `${dat}.tpm`, 1, 100_000_000_000, 0),
      };
    });
    const seen = new Set<string>();
    for (const [j, d] of deployments.entries()) {
      const id = `${d.vendor}/${d.upstream_model ?? ""}`;
      if (seen.has(id)) throw new Error(`${at}.deployments[${j}]: the same vendor and upstream_model twice`);
      seen.add(id);
    }
  }
  const fallbacks = row.fallbacks ?? [];
  if (!Array.isArray(fallbacks)) throw new Error(`${at}.fallbacks: must be a list of catalog model ids`);
  fallbacks.forEach((f: unknown, j: number) => {
    if (typeof f !== "string" || !models.has(f)) throw new Error(`${at}.fallbacks[${j}]: must be a catalog model id, got ${JSON.stringify(f)}`);
    if (f === row.id) throw new Error(`${at}.fallbacks[${j}]: a model cannot fall back to itself`);
  });
  return { deployments, fallbacks: fallbacks as string[], timeouts: timeouts(row.timeouts, `${at}.timeouts`) };
}
