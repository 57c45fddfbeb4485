import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import type { Endpoint } from "../vocabulary/format";
import type { PromptCacheMode } from "../vocabulary/target";
import type { SqlRunner } from "./sql-runner";

/**
 * The state Turnpike keeps: keys (hashed, never the secret) and usage records. One interface,
 * several back ends (SQLite embedded by default; see docs/design.md, "State").
 */

export interface KeyRecord {
  id: string;
  name: string;
  /** sha256 of the secret, hex. */
  hash: string;
  /** The first characters of the secret, safe to show (`sk-tp-AbC…`). */
  prefix: string;
  /** Allowed model ids or `*` globs; null = every model. */
  models: string[] | null;
  /** MCP tools this key may list and call (`<server>__<glob>`, `<server>__*`, `*`); null or absent = none. */
  tools?: string[] | null;
  /** Guardrail policies this key runs on top of its team's (names of the config's `guardrails.policies`); absent = the config's default. */
  guardrails?: string[] | null;
  rpm: number | null;
  tpm: number | null;
  /**
   * Whether Turnpike places prompt-cache breakpoints for this key's requests (`auto` | `off`);
   * null or absent = the model's own setting.
   */
  prompt_cache?: PromptCacheMode | null;
  /** Per-model limits, by exact model id; they apply on top of the key's own. */
  model_limits: Record<string, { rpm?: number | null; tpm?: number | null }> | null;
  /** Monthly budget in USD (calendar month, UTC); null = none. */
  budget_usd: number | null;
  /** After this instant the key is refused; null = never. */
  expires_at: string | null;
  /** The secret before the last rotation, still accepted until `prev_valid_until`. */
  prev_hash: string | null;
  prev_valid_until: string | null;
  created_at: string;
  updated_at: string;
  revoked_at: string | null;
  /** The team that owns the key (its models and limits intersect the key's); absent = none. */
  team_id?: string | null;
  /** The user or admin token that made the key (a member revokes only its own); absent = an admin. */
  user_id?: string | null;
  /**
   * Set on the key a request sees, never stored: its team's model list, budget and MCP tools, which apply
   * beside the key's own (teams/team-directory.ts).
   */
  team?: {
    id: string;
    models: string[] | null;
    budget_usd: number | null;
    tools?: string[] | null;
    guardrails?: string[] | null;
  };
}

/** A usage record's guardrail note (docs/guardrails.md): what was found, never the value. */
export interface GuardrailNote {
  policies: string[];
  categories: string[];
  action: string;
  dry_run: boolean;
  /** Values found, by policy and category (a dry-run policy's with the action it would have taken). */
  detections: { policy: string; category: string; action: string; dry_run: boolean; n: number }[];
}

export interface UsageRecord {
  request_id: string;
  key_id: string;
  model: string;
  endpoint: Endpoint;
  stream: boolean;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** The part of `cache_write_tokens` written for an hour (priced apart from five-minute writes). */
  cache_write_1h_tokens?: number;
  reasoning_tokens: number;
  cost_usd: number;
  /** The vendor's own name of the model that answered (a dated snapshot name), where it said one. */
  upstream_model?: string | null;
  /** The catalog id the client asked for, when a fallback served it under another (`model`). */
  requested_model?: string | null;
  /** Which of the model's deployments served (the last one tried), and how many attempts were made. */
  deployment?: string | null;
  attempts?: number | null;
  /** How many times a stream cut after its 200 was continued on an upstream (0: never); beside `attempts`. */
  continuations?: number | null;
  /** An MCP tool call's arguments and result, in bytes of JSON (`endpoint: "mcp"` only). */
  bytes_in?: number | null;
  bytes_out?: number | null;
  /**
   * The deployment this request's agent session moved away from, on its first turn served
   * elsewhere: the prompt cache it had there is not here, so this turn's cache reads start over.
   */
  cache_reset_from?: string | null;
  /** What the guardrails found and did (policies, categories, action; never a value), where any policy found something. */
  guardrail?: GuardrailNote | null;
  /** The status the client saw (a stream that started: 200, or 502 if it then failed with an in-band error). */
  status: number;
  /** The upstream's HTTP status; 0 when no answer came. */
  upstream_status: number;
  latency_ms: number;
  /** The client went away before the reply ended. */
  aborted: boolean;
  /** Output tokens counted by Turnpike, not reported by the upstream. */
  estimated: boolean;
  created_at: string;
}

/**
 * A stored row's optional fields as records have them: absent when empty (no one-hour writes, no
 * upstream model name, no key setting), so rows written before they existed read as before.
 */
export function withoutEmptyOptionals<
  T extends {
    upstream_model?: string | null;
    cache_write_1h_tokens?: number;
    prompt_cache?: string | null;
    deployment?: string | null;
    attempts?: number | null;
    continuations?: number | null;
    requested_model?: string | null;
    bytes_in?: number | null;
    bytes_out?: number | null;
    cache_reset_from?: string | null;
    guardrail?: GuardrailNote | string | null;
  },
>(r: T): T {
  const out = { ...r };
  if (out.bytes_in === null) delete out.bytes_in;
  if (out.bytes_out === null) delete out.bytes_out;
  if (out.cache_reset_from === null) delete out.cache_reset_from;
  // Stored as its JSON text (one column).
  if (out.guardrail === null) delete out.guardrail;
  else if (typeof out.guardrail === "string") out.guardrail = JSON.parse(out.guardrail) as GuardrailNote;
  if (out.deployment === null) delete out.deployment;
  if (out.attempts === null) delete out.attempts;
  if (out.continuations === null) delete out.continuations;
  if (out.requested_model === null) delete out.requested_model;
  if (out.upstream_model === null) delete out.upstream_model;
  if (out.cache_write_1h_tokens === 0) delete out.cache_write_1h_tokens;
  if (out.prompt_cache === null) delete out.prompt_cache;
  return out;
}

export interface UsageFilter {
  key_id?: string;
  model?: string;
  since?: string;
  until?: string;
  limit?: number;
  /** Newest first (the admin listing); default: oldest first. */
  newestFirst?: boolean;
  /** Only records older than this one, by time then request id (a newest-first listing's cursor). */
  before?: { created_at: string; request_id: string };
  /** Only requests the client saw fail (status 400 and above). */
  failed?: boolean;
}

export type UsageGroup = "key" | "model" | "day";

export interface UsageAggregate {
  key_id?: string;
  model?: string;
  day?: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  cost_usd: number;
}

/** What ledger latency can be grouped by (usage-latency.ts). */
export type LatencyGroup = "key" | "model" | "deployment";

/** One group's latency: its requests that succeeded, the counts per bucket and the percentiles read from them. */
export interface LatencyAggregate {
  key_id?: string;
  model?: string;
  /** `""` for requests served without a named deployment. */
  deployment?: string;
  requests: number;
  /** Requests per latency bucket; bucket `i` holds latencies below `LATENCY_BOUNDS[i]` (usage-rollup.ts) and at or above the one before. */
  latency_buckets: number[];
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
}

/**
 * One row of `GET /admin/guardrails`: how many values a policy found of one category in one key's
 * requests, and in how many requests — never a value (the ledger's `guardrail` note holds none).
 */
export interface GuardrailTotal {
  policy: string;
  category: string;
  /** What the policy did (a dry-run policy: what it would have done). */
  action: string;
  dry_run: boolean;
  key_id: string;
  /** Requests in which the policy found this category. */
  requests: number;
  /** Values found in them. */
  detections: number;
}

export interface Store {
  createKey(key: KeyRecord): Promise<void>;
  listKeys(): Promise<KeyRecord[]>;
  /** Writes a key's new state (same id). */
  updateKey(key: KeyRecord): Promise<void>;
  insertUsage(records: readonly UsageRecord[]): Promise<void>;
  queryUsage(filter: UsageFilter): Promise<UsageRecord[]>;
  /** Requests, tokens and cost grouped by any of key, model and day (UTC). */
  aggregateUsage(filter: UsageFilter, groupBy: readonly UsageGroup[]): Promise<UsageAggregate[]>;
  /**
   * Latency of the requests that succeeded, per group: bucket counts and p50/p90/p99 read from the
   * rollups (usage-latency.ts). Filters: key, model, since, until.
   */
  latencyUsage(filter: UsageFilter, groupBy: readonly LatencyGroup[]): Promise<LatencyAggregate[]>;
  /**
   * The ledger's guardrail notes summed per policy, category, action, dry run and key over the UTC
   * days `first`..`last` (`YYYY-MM-DD`, both included), most detections first: one statement on the
   * guardrail rollups (storage/guardrail-rollup.ts), whatever the number of requests.
   */
  guardrailTotals(first: string, last: string): Promise<GuardrailTotal[]>;
  /**
   * Spend in USD since an instant (for monthly budgets): per key by its id, and per team by
   * `teamSpendId(team id)` (the sum of its keys').
   */
  spendSince(since: string): Promise<Map<string, number>>;
  /**
   * Deletes the raw usage rows made before `before` (ISO 8601), a slice at a time with `between`
   * awaited after each (so a large cut never holds the server's thread); the rollups stay. Returns
   * how many rows went.
   */
  pruneUsage(before: string, between?: () => Promise<void>): Promise<number>;
  /**
   * The database itself, for the stores each concern keeps in it (teams/team-store.ts,
   * storage/batch-store.ts, stored-responses/response-store-of.ts): the storage layer opens and
   * migrates the database, and never builds a concern's store.
   */
  connection(): Connection;
  close(): Promise<void>;
}

/**
 * An open database: the SQL runner of the stores written once for both dialects, and the driver's
 * own handle for a store written per dialect.
 */
export type Connection =
  | { dialect: "sqlite"; db: Database; runner: SqlRunner }
  | { dialect: "postgres"; sql: SQL; runner: SqlRunner };
