/**
 * The model catalog: one row per model id a client can call. Built in, and overridable by a
 * `TURNPIKE_CONFIG` file (JSON or YAML) whose `models` entries replace or add rows by id.
 */

import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { explainErrors, UPSTREAM_PROTOCOLS, type Protocol } from "@turnpike/schema";
import { EMBEDDING_PROTOCOLS } from "../protocols";
import { isRecord } from "../vocabulary/client-errors";
import { ConfigError } from "../vocabulary/config-error";
import { SERVICE_TIERS, type CatalogEntry, type PromptCacheMode, type ServiceTier } from "../vocabulary/target";
import { nanoDollars } from "../vocabulary/money";

/** What the catalog needs to know of each vendor: that it exists, and its protocol. */
export interface VendorProtocol {
  id: string;
  protocol: Protocol;
}

export const PROMPT_CACHE_MODES: readonly PromptCacheMode[] = ["auto", "off"];

type Optional =
  | "embedding_dimensions"
  | "batch_discount"
  | "protocol"
  | "upstream_model"
  | "upstream_headers"
  | "cache_read_per_mtok"
  | "cache_write_5m_per_mtok"
  | "cache_write_1h_per_mtok"
  | "prompt_cache"
  | "service_tiers";
type Row = Omit<CatalogEntry, Optional> & Partial<Pick<CatalogEntry, Optional>>;

/**
 * The cache prices of the messages-protocol vendor: reads at a tenth of the input price, writes
 * at 1.25× (five minutes) and 2× (an hour).
 */
const ALPHA_CACHE = (input: number) => ({
  cache_read_per_mtok: input / 10,
  cache_write_5m_per_mtok: input * 1.25,
  cache_write_1h_per_mtok: input * 2,
});
/** Vendors that cache on their own: reads at a tenth of the input price, writes at the input price. */
const AUTO_CACHE = (input: number) => ({
  cache_read_per_mtok: input / 10,
  cache_write_5m_per_mtok: input,
  cache_write_1h_per_mtok: input,
});

/** The messages-protocol beta header that unlocks the 1M-token context on models that need it. */
export const CONTEXT_1M_BETA = "context-1m-2025-08-07";

/**
 * The batch price of the vendors whose protocol has a batch API (the messages protocol's
 * `/v1/messages/batches`, the chat family's `/v1/batches`, the generateContent protocol's batch
 * mode): half the normal price, for lines those APIs run (protocols/<name>/<name>-batches.ts). Lines
 * through Turnpike's own queue pay the normal price. delta's row has none: a chat-compatible
 * vendor's batch price is its own to set (a config row's `batch_discount`).
 */
const BATCH_HALF = 0.5;

/**
 * The tiers of the vendors whose APIs sell them per request (the chat family's `service_tier`,
 * the generateContent protocol's `serviceTier`): priority at twice the price of every token
 * class, flex at half. The messages protocol's vendor sells priority by commitment, not per
 * request, and delta sells no tier: their rows list none (a config row may).
 */
const PRIORITY_AND_FLEX = { service_tiers: { priority: 2, flex: 0.5 } };

const BUILT_IN: Row[] = [
  {
    id: "alpha-opus-4-8",
    owned_by: "alpha",
    batch_discount: BATCH_HALF,
    display_name: "Alpha Opus 4.8",
    input_per_mtok: 5,
    output_per_mtok: 25,
    ...ALPHA_CACHE(5),
    context_window: 200_000,
    max_output_tokens: 64_000,
    created_at: "2026-09-15T00:00:00Z",
  },
  {
    id: "alpha-fable-5",
    owned_by: "alpha",
    batch_discount: BATCH_HALF,
    display_name: "Alpha Fable 5",
    input_per_mtok: 10,
    output_per_mtok: 50,
    ...ALPHA_CACHE(10),
    context_window: 400_000,
    max_output_tokens: 128_000,
    created_at: "2026-10-20T00:00:00Z",
  },
  {
    id: "alpha-sonnet-4-6",
    owned_by: "alpha",
    batch_discount: BATCH_HALF,
    display_name: "Alpha Sonnet 4.6",
    input_per_mtok: 3,
    output_per_mtok: 15,
    ...ALPHA_CACHE(3),
    context_window: 200_000,
    max_output_tokens: 64_000,
    created_at: "2026-06-10T00:00:00Z",
  },
  {
    id: "alpha-haiku-4-5",
    owned_by: "alpha",
    batch_discount: BATCH_HALF,
    display_name: "Alpha Haiku 4.5",
    input_per_mtok: 1,
    output_per_mtok: 5,
    ...ALPHA_CACHE(1),
    context_window: 200_000,
    max_output_tokens: 64_000,
    created_at: "2025-10-15T00:00:00Z",
  },
  {
    id: "alpha-sonnet-4-6 (context-1m beta)",
    owned_by: "alpha",
    batch_discount: BATCH_HALF,
    display_name: "Alpha Sonnet 4.6 (1M context, beta)",
    upstream_model: "alpha-sonnet-4-6",
    upstream_headers: { "anthropic-beta": CONTEXT_1M_BETA },
    input_per_mtok: 6,
    output_per_mtok: 22.5,
    ...ALPHA_CACHE(6),
    context_window: 1_000_000,
    max_output_tokens: 64_000,
    created_at: "2026-06-10T00:00:00Z",
  },
  {
    id: "beta-5.5",
    owned_by: "beta",
    batch_discount: BATCH_HALF,
    ...PRIORITY_AND_FLEX,
    display_name: "Beta 5.5",
    input_per_mtok: 2.5,
    output_per_mtok: 10,
    ...AUTO_CACHE(2.5),
    context_window: 400_000,
    max_output_tokens: 128_000,
    created_at: "2026-08-05T00:00:00Z",
  },
  {
    id: "beta-5",
    owned_by: "beta",
    batch_discount: BATCH_HALF,
    ...PRIORITY_AND_FLEX,
    display_name: "Beta 5",
    input_per_mtok: 1.25,
    output_per_mtok: 6.25,
    ...AUTO_CACHE(1.25),
    context_window: 400_000,
    max_output_tokens: 128_000,
    created_at: "2025-08-07T00:00:00Z",
  },
  {
    id: "gamma-3-pro",
    owned_by: "gamma",
    batch_discount: BATCH_HALF,
    ...PRIORITY_AND_FLEX,
    display_name: "Gamma 3 Pro",
    input_per_mtok: 2,
    output_per_mtok: 10,
    ...AUTO_CACHE(2),
    context_window: 1_048_576,
    max_output_tokens: 65_536,
    created_at: "2025-11-18T00:00:00Z",
  },
  {
    id: "gamma-3-flash",
    owned_by: "gamma",
    batch_discount: BATCH_HALF,
    ...PRIORITY_AND_FLEX,
    display_name: "Gamma 3 Flash",
    input_per_mtok: 0.5,
    output_per_mtok: 2.5,
    ...AUTO_CACHE(0.5),
    context_window: 1_048_576,
    max_output_tokens: 65_536,
    created_at: "2025-12-17T00:00:00Z",
  },
  {
    id: "delta-m3",
    owned_by: "delta",
    display_name: "Delta M3",
    input_per_mtok: 0.3,
    output_per_mtok: 1.2,
    ...AUTO_CACHE(0.3),
    context_window: 204_800,
    max_output_tokens: 131_072,
    created_at: "2026-03-01T00:00:00Z",
  },
  // Embedding models (POST /v1/embeddings): input priced only, no output; `embedding_dimensions` marks them.
  {
    id: "beta-embedding-3-small",
    owned_by: "beta",
    batch_discount: BATCH_HALF,
    display_name: "Beta Embedding 3 Small",
    input_per_mtok: 0.02,
    output_per_mtok: 0,
    context_window: 8191,
    max_output_tokens: 0,
    embedding_dimensions: 1536,
    created_at: "2024-01-25T00:00:00Z",
  },
  {
    id: "beta-embedding-3-large",
    owned_by: "beta",
    batch_discount: BATCH_HALF,
    display_name: "Beta Embedding 3 Large",
    input_per_mtok: 0.13,
    output_per_mtok: 0,
    context_window: 8191,
    max_output_tokens: 0,
    embedding_dimensions: 3072,
    created_at: "2024-01-25T00:00:00Z",
  },
  {
    id: "gamma-embedding-1",
    owned_by: "gamma",
    display_name: "Gamma Embedding 1",
    input_per_mtok: 0.15,
    output_per_mtok: 0,
    context_window: 2048,
    max_output_tokens: 0,
    embedding_dimensions: 3072,
    created_at: "2025-07-14T00:00:00Z",
  },
];

function complete(row: Row, vendors: ReadonlyMap<string, Protocol>): CatalogEntry {
  const protocol = row.protocol ?? vendors.get(row.owned_by);
  if (!protocol)
    throw new Error(`model ${row.id}: its vendor ${JSON.stringify(row.owned_by)} is not in the vendor table`);
  return {
    ...row,
    protocol,
    upstream_model: row.upstream_model ?? row.id,
    upstream_headers: row.upstream_headers ?? {},
    // A row without cache prices bills cached tokens as plain input: never below the vendor's price.
    cache_read_per_mtok: row.cache_read_per_mtok ?? row.input_per_mtok,
    cache_write_5m_per_mtok: row.cache_write_5m_per_mtok ?? row.input_per_mtok,
    cache_write_1h_per_mtok: row.cache_write_1h_per_mtok ?? row.input_per_mtok,
    prompt_cache: row.prompt_cache ?? "auto",
  };
}

/** The token classes a call is billed by (`input_tokens` is the uncached input). */
export interface BilledTokens {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  /** The one-hour share of the cache writes. */
  cache_creation_1h_input_tokens?: number;
  /** The tier the call was served at, when not the default one: every token at the row's price for it. */
  service_tier?: ServiceTier;
}

export class Catalog {
  private readonly byId: Map<string, CatalogEntry>;

  constructor(entries: CatalogEntry[]) {
    this.byId = new Map(entries.map((e) => [e.id, e]));
  }

  get(id: string): CatalogEntry | undefined {
    return this.byId.get(id);
  }

  all(): CatalogEntry[] {
    return [...this.byId.values()];
  }

  /**
   * Cost in USD of a call, from the catalog's prices, each token class at its own: uncached
   * input, cache reads, cache writes (five-minute and one-hour apart) and output. The same
   * through every endpoint.
   */
  cost(entry: CatalogEntry, t: BilledTokens): number {
    const hour = Math.min(t.cache_creation_1h_input_tokens ?? 0, t.cache_creation_input_tokens);
    const tier = (t.service_tier && entry.service_tiers?.[t.service_tier]) ?? 1;
    const usd =
      (tier *
        (t.input_tokens * entry.input_per_mtok +
          t.cache_read_input_tokens * entry.cache_read_per_mtok +
          (t.cache_creation_input_tokens - hour) * entry.cache_write_5m_per_mtok +
          hour * entry.cache_write_1h_per_mtok +
          t.output_tokens * entry.output_per_mtok)) /
      1_000_000;
    return nanoDollars(usd);
  }
}

const nonNegative = (rule: string) => Type.Number({ minimum: 0, rule, expected: "non-negative number" });

/** A `models` row of the config file, laid over the built-in row of its id; `vendors` are the vendor ids. */
function rowFile(vendors: readonly string[]) {
  return Type.Object(
    {
      id: Type.String({ minLength: 1 }),
      owned_by: Type.Union(
        vendors.map((v) => Type.Literal(v)),
        { rule: `must be one of ${vendors.join(", ")}` },
      ),
      protocol: Type.Optional(
        Type.Union(
          UPSTREAM_PROTOCOLS.map((p) => Type.Literal(p)),
          { rule: `must be ${UPSTREAM_PROTOCOLS.join(", ")}` },
        ),
      ),
      upstream_model: Type.Optional(Type.String({ minLength: 1 })),
      upstream_headers: Type.Optional(Type.Record(Type.String(), Type.String())),
      display_name: Type.Optional(Type.String()),
      input_per_mtok: nonNegative("must be a non-negative number"),
      output_per_mtok: nonNegative("must be a non-negative number"),
      context_window: nonNegative("must be a non-negative number"),
      max_output_tokens: Type.Optional(nonNegative("must be a non-negative number")),
      cache_read_per_mtok: Type.Optional(nonNegative("must be a non-negative number")),
      cache_write_5m_per_mtok: Type.Optional(nonNegative("must be a non-negative number")),
      cache_write_1h_per_mtok: Type.Optional(nonNegative("must be a non-negative number")),
      prompt_cache: Type.Optional(
        Type.Union(
          PROMPT_CACHE_MODES.map((m) => Type.Literal(m)),
          { rule: `must be ${PROMPT_CACHE_MODES.join(" or ")}` },
        ),
      ),
      created_at: Type.Optional(Type.String()),
      batch_discount: Type.Optional(
        Type.Number({
          minimum: 0,
          maximum: 1,
          rule: "must be a number from 0 to 1 (the share off a batch line's price)",
          expected: "number from 0 to 1",
        }),
      ),
      service_tiers: Type.Optional(
        Type.Object(
          Object.fromEntries(
            SERVICE_TIERS.map((t) => [
              t,
              Type.Optional(
                Type.Number({
                  exclusiveMinimum: 0,
                  rule: `must be a positive number (the multiplier of every token price at the ${t} tier)`,
                  expected: "positive number",
                }),
              ),
            ]),
          ),
          { additionalProperties: false, rule: `may name ${SERVICE_TIERS.join(" and ")} only` },
        ),
      ),
      embedding_dimensions: Type.Optional(
        Type.Integer({
          minimum: 1,
          rule: "must be a positive integer (the vector length; it makes the row an embedding model)",
          expected: "positive integer",
        }),
      ),
    },
    { rule: "must be an object {id, owned_by, input_per_mtok, output_per_mtok, context_window, …}" },
  );
}

/** The fields of a `models` row the catalog reads (the router reads the routing ones). */
export const MODEL_ROW_FIELDS: readonly string[] = Object.keys(rowFile([]).properties);

/**
 * The mistakes of the config file's `models` rows as catalog rows (`models[i].field: rule`),
 * every one of every row; and the ids the catalog will hold.
 */
export function catalogProblems(
  overrides: unknown[],
  vendors: readonly VendorProtocol[],
): { problems: string[]; ids: Set<string>; embedding: Set<string> } {
  const schema = rowFile(vendors.map((v) => v.id));
  const rows = new Map<string, Row>(BUILT_IN.map((r) => [r.id, r]));
  const problems: string[] = [];
  const protocols = new Map(vendors.map((v) => [v.id, v.protocol]));
  overrides.forEach((raw, i) => {
    const row = overrideRow(raw, i, rows, schema);
    if (Array.isArray(row)) problems.push(...row);
    else {
      const wrong = embeddingProblem(row, i, protocols);
      if (wrong) problems.push(wrong);
      rows.set(row.id, row);
    }
  });
  const embedding = new Set([...rows.values()].filter((r) => r.embedding_dimensions !== undefined).map((r) => r.id));
  return { problems, ids: new Set(rows.keys()), embedding };
}

/** The catalog with the config file's `models` rows laid over the built-in ones. */
export function buildCatalog(overrides: unknown[], vendors: readonly VendorProtocol[]): Catalog {
  const protocols = new Map(vendors.map((v) => [v.id, v.protocol]));
  const schema = rowFile(vendors.map((v) => v.id));
  const rows = new Map<string, Row>(BUILT_IN.map((r) => [r.id, r]));
  overrides.forEach((raw, i) => {
    const row = overrideRow(raw, i, rows, schema);
    if (Array.isArray(row)) throw new ConfigError(row);
    const wrong = embeddingProblem(row, i, protocols);
    if (wrong) throw new ConfigError([wrong]);
    rows.set(row.id, row);
  });
  return new Catalog([...rows.values()].map((r) => complete(r, protocols)));
}

/** An embedding row on a vendor whose protocol has no embeddings call. */
function embeddingProblem(row: Row, i: number, protocols: ReadonlyMap<string, Protocol>): string | undefined {
  if (row.embedding_dimensions === undefined) return undefined;
  const protocol = row.protocol ?? protocols.get(row.owned_by);
  if (protocol === undefined || EMBEDDING_PROTOCOLS.includes(protocol)) return undefined;
  return `models[${i}].embedding_dimensions: the ${protocol} protocol has no embeddings call; an embedding model must be served by ${EMBEDDING_PROTOCOLS.join(" or ")}`;
}

/** A row laid over the built-in row of its id (a new id adds one), or every mistake of it. */
function overrideRow(
  raw: unknown,
  i: number,
  rows: Map<string, Row>,
  schema: ReturnType<typeof rowFile>,
): Row | string[] {
  const where = `models[${i}]`;
  const id = isRecord(raw) && typeof raw.id === "string" && raw.id !== "" ? raw.id : undefined;
  // The routing fields (deployments, fallbacks, timeouts) are read by dispatch/deployments.ts.
  const { deployments: _d, fallbacks: _f, timeouts: _t, ...own } = isRecord(raw) ? raw : {};
  const merged = isRecord(raw) ? { ...(id === undefined ? {} : rows.get(id)), ...own } : raw;
  if (!Value.Check(schema, merged)) return explainErrors(schema, merged, where).map((issue) => issue.message);
  const row = merged as Static<typeof schema>; // checked just above
  return {
    ...row,
    display_name: row.display_name ?? row.id,
    max_output_tokens: row.max_output_tokens ?? 8192,
    created_at: row.created_at ?? "2026-01-01T00:00:00Z",
  };
}
