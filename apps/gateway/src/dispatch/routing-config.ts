/**
 * The `routing:` section of the config file, and the per-model `deployments`, `fallbacks` and
 * `timeouts` fields, read and checked: a wrong value is refused at start-up naming the file, the
 * path inside it and the rule.
 */

import { type Static, Type } from "@sinclair/typebox";
import { configProblems, refuse } from "../vocabulary/config-error";

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
  /** A stream cut after its 200 is continued on a healthy deployment (docs: routing, "Continuation"). */
  continuation: boolean;
  /** The most continuations of one stream. */
  continuationAttempts: number;
}

/** One deployment as the file gives it. */
export interface DeploymentRow {
  vendor: string;
  weight: number;
  upstream_model: string | undefined;
  rpm: number | undefined;
  tpm: number | undefined;
  /** This deployment's own `continuation` (undefined: the `routing:` section's). */
  continuation?: boolean | undefined;
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
  continuation: true,
  continuationAttempts: 2,
};

const DAY_MS = 86_400_000;

/** A whole number in [min, max]. */
const whole = (min: number, max: number) =>
  Type.Integer({ minimum: min, maximum: max, rule: `must be a whole number from ${min} to ${max}` });

/** `timeouts`, of the `routing:` section and of a model row. */
const TimeoutsFile = Type.Object(
  {
    connect_ms: Type.Optional(whole(1, DAY_MS)),
    first_byte_ms: Type.Optional(whole(1, DAY_MS)),
    idle_ms: Type.Optional(whole(1, DAY_MS)),
  },
  { additionalProperties: false, listKnown: true, rule: "must be an object {connect_ms, first_byte_ms, idle_ms}" },
);

/** The `routing:` section of the config file. */
export const RoutingFile = Type.Object(
  {
    retries: Type.Optional(whole(0, 10)),
    retry_after_max_s: Type.Optional(whole(0, 3600)),
    timeouts: Type.Optional(TimeoutsFile),
    continuation: Type.Optional(Type.Boolean({ rule: "must be true or false" })),
    continuation_attempts: Type.Optional(whole(0, 10)),
    breaker: Type.Optional(
      Type.Object(
        { failures: Type.Optional(whole(1, 1000)), cooldown_s: Type.Optional(whole(1, 86_400)) },
        { additionalProperties: false, rule: "must be an object {failures, cooldown_s}" },
      ),
    ),
  },
  {
    additionalProperties: false,
    listKnown: true,
    rule: "must be an object {retries, retry_after_max_s, timeouts, breaker, continuation, continuation_attempts}",
  },
);

/** A deployment as the file gives it (once checked). */
interface DeploymentFile {
  vendor: string;
  upstream_model?: string;
}

/** A model row's routing fields; `vendors` are the vendor ids a deployment may name. */
function modelRoutingFile(vendors: readonly string[]) {
  const deployment = Type.Object(
    {
      vendor: Type.Union(
        vendors.map((v) => Type.Literal(v)),
        { rule: `must be one of ${vendors.join(", ")}` },
      ),
      weight: Type.Optional(whole(1, 1_000_000)),
      upstream_model: Type.Optional(Type.String({ minLength: 1 })),
      rpm: Type.Optional(whole(1, 100_000_000)),
      tpm: Type.Optional(whole(1, 100_000_000_000)),
      continuation: Type.Optional(Type.Boolean({ rule: "must be true or false" })),
    },
    {
      additionalProperties: false,
      rule: "must be an object {vendor, weight, upstream_model, rpm, tpm, continuation}",
    },
  );
  return Type.Object({
    deployments: Type.Optional(
      Type.Array(deployment, {
        minItems: 1,
        rule: "must be a non-empty list of {vendor, weight, upstream_model, rpm, tpm, continuation}",
      }),
    ),
    fallbacks: Type.Optional(Type.Array(Type.String(), { rule: "must be a list of catalog model ids" })),
    timeouts: Type.Optional(TimeoutsFile),
  });
}

/** The fields of a `models` row the router reads (the catalog reads the others). */
export const MODEL_ROUTING_FIELDS: readonly string[] = Object.keys(modelRoutingFile([]).properties);

function timeouts(raw: Static<typeof TimeoutsFile> | undefined): Partial<Timeouts> {
  const out: Partial<Timeouts> = {};
  if (raw?.connect_ms !== undefined) out.connectMs = raw.connect_ms;
  if (raw?.first_byte_ms !== undefined) out.firstByteMs = raw.first_byte_ms;
  if (raw?.idle_ms !== undefined) out.idleMs = raw.idle_ms;
  return out;
}

/** The mistakes of the file's `routing:` section (`file: routing.…: rule` lines). */
export function routingProblems(raw: unknown, file: string): string[] {
  return raw === undefined ? [] : configProblems(RoutingFile, raw, file, "routing");
}

/** The file's `routing:` section over the defaults. `where` is the file's name. */
export function parseRouting(raw: unknown, where: string): RoutingConfig {
  if (raw === undefined) return DEFAULT_ROUTING;
  refuse(routingProblems(raw, where));
  const r = raw as Static<typeof RoutingFile>; // checked against RoutingFile just above
  const d = DEFAULT_ROUTING;
  return {
    retries: r.retries ?? d.retries,
    retryAfterMaxS: r.retry_after_max_s ?? d.retryAfterMaxS,
    timeouts: { ...d.timeouts, ...timeouts(r.timeouts) },
    continuation: r.continuation ?? d.continuation,
    continuationAttempts: r.continuation_attempts ?? d.continuationAttempts,
    breaker: {
      failures: r.breaker?.failures ?? d.breaker.failures,
      cooldownS: r.breaker?.cooldown_s ?? d.breaker.cooldownS,
    },
  };
}

/**
 * The mistakes of a `models` row's routing fields, all of them; `path` is `models[i]`. `vendors`
 * are the vendor ids and `models` the catalog ids a row may name; `embedding` the ids of the
 * embedding models among them (a fallback serves the same calls as its model: vectors, or replies).
 */
export function modelRoutingProblems(
  row: Record<string, unknown>,
  file: string,
  path: string,
  vendors: ReadonlySet<string>,
  models: ReadonlySet<string>,
  embedding?: ReadonlySet<string>,
): string[] {
  const problems = configProblems(modelRoutingFile([...vendors]), row, file, path);
  // What a schema cannot say, for each field whose shape is right.
  const wrong = (field: string) => problems.some((p) => p.startsWith(`${file}: ${path}.${field}`));
  if (Array.isArray(row.deployments) && !wrong("deployments")) {
    const seen = new Set<string>();
    for (const [j, d] of (row.deployments as DeploymentFile[]).entries()) {
      const id = `${d.vendor}/${d.upstream_model ?? ""}`;
      if (seen.has(id)) problems.push(`${file}: ${path}.deployments[${j}]: the same vendor and upstream_model twice`);
      seen.add(id);
    }
  }
  if (Array.isArray(row.fallbacks) && !wrong("fallbacks")) {
    for (const [j, f] of (row.fallbacks as string[]).entries()) {
      if (!models.has(f))
        problems.push(`${file}: ${path}.fallbacks[${j}]: must be a catalog model id, got ${JSON.stringify(f)}`);
      else if (f === row.id) problems.push(`${file}: ${path}.fallbacks[${j}]: a model cannot fall back to itself`);
      else if (embedding && typeof row.id === "string" && embedding.has(f) !== embedding.has(row.id))
        problems.push(
          `${file}: ${path}.fallbacks[${j}]: ${f} ${embedding.has(f) ? "is" : "is not"} an embedding model and ${row.id} ${embedding.has(row.id) ? "is" : "is not"}; a fallback must serve the same calls`,
        );
    }
  }
  return problems;
}

/** A `models` row's routing fields, checked ({@link modelRoutingProblems}). */
export function parseModelRouting(
  row: Record<string, unknown>,
  file: string,
  path: string,
  vendors: ReadonlySet<string>,
  models: ReadonlySet<string>,
  embedding?: ReadonlySet<string>,
): ModelRouting {
  refuse(modelRoutingProblems(row, file, path, vendors, models, embedding));
  const r = row as Static<ReturnType<typeof modelRoutingFile>>; // checked just above
  return {
    deployments: r.deployments?.map((d) => ({
      vendor: d.vendor,
      weight: d.weight ?? 1,
      upstream_model: d.upstream_model,
      rpm: d.rpm,
      tpm: d.tpm,
      continuation: d.continuation,
    })),
    fallbacks: r.fallbacks ?? [],
    timeouts: timeouts(r.timeouts),
  };
}
