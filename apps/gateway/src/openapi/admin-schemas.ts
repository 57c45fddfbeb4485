/**
 * The admin API's bodies as TypeBox schemas: the description document (`GET /openapi.json`) is
 * built from them, the admin module checks the bodies it is sent against them and types its
 * replies by them, so the three cannot drift.
 */
import { Type, type Static } from "@sinclair/typebox";
import { Nullable } from "@turnpike/schema";

/** Upper bounds of a key's limits: beyond them a number is a typo, not a policy. */
export const KEY_LIMIT_BOUNDS = { rpm: 1_000_000, tpm: 10_000_000_000, budget_usd: 10_000_000 } as const;

const Limit = Nullable(Type.Integer({ minimum: 1 }));
const Time = Type.String({ format: "date-time" });
const PromptCache = Nullable(
  Type.Union([Type.Literal("auto"), Type.Literal("off")], {
    rule: "must be auto or off, or null for the model's own setting",
  }),
);
/** A limit of a key as a body sets it: a whole number up to its bound, or null to clear it. */
const limitField = (max: number) =>
  Nullable(Type.Integer({ minimum: 1, maximum: max, rule: `must be a whole number from 1 to ${max}, or null` }));
/** One model's limits of a key. */
export const ModelLimit = Type.Object(
  { rpm: Type.Optional(limitField(KEY_LIMIT_BOUNDS.rpm)), tpm: Type.Optional(limitField(KEY_LIMIT_BOUNDS.tpm)) },
  { additionalProperties: false, listKnown: true },
);
const ModelLimits = Nullable(Type.Record(Type.String(), ModelLimit));

/** A key as the admin API shows it: never its secret, never its hash. */
export const AdminKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  /** The first characters of the secret, safe to show. */
  prefix: Type.String(),
  models: Nullable(Type.Array(Type.String())),
  rpm: Limit,
  tpm: Limit,
  model_limits: ModelLimits,
  budget_usd: Nullable(Type.Number({ exclusiveMinimum: 0 })),
  spent_this_month_usd: Type.Optional(Type.Number({ minimum: 0 })),
  expires_at: Nullable(Time),
  prompt_cache: PromptCache,
  /** MCP tools the key may list and call (`<server>__<glob>`, `*`); null = none. */
  tools: Nullable(Type.Array(Type.String())),
  /** Guardrail policies the key runs on top of its team's; null = the config's `guardrails.default`. */
  guardrails: Type.Optional(Nullable(Type.Array(Type.String()))),
  previous_secret_valid_until: Nullable(Time),
  created_at: Time,
  updated_at: Time,
  revoked_at: Nullable(Time),
  /** The team that owns the key; its models and limits apply beside the key's. */
  team_id: Type.Optional(Nullable(Type.String())),
  /** The user or admin token that made it; null = an administrator. */
  user_id: Type.Optional(Nullable(Type.String())),
});
export type AdminKey = Static<typeof AdminKey>;

/** A new or rotated key: its secret, shown this once. */
export const AdminKeyWithSecret = Type.Composite([AdminKey, Type.Object({ key: Type.String() })]);
export const AdminRevokedKey = Type.Composite([AdminKey, Type.Object({ revoked: Type.Literal(true) })]);
export const AdminKeyList = Type.Object({ data: Type.Array(AdminKey), next_cursor: Nullable(Type.String()) });

/** `POST /admin/keys` (name required) and `PATCH /admin/keys/{id}` (all optional; null clears a limit). */
const KEY_FIELDS = {
  name: Type.Optional(Type.String({ minLength: 1 })),
  models: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1 })))),
  rpm: Type.Optional(limitField(KEY_LIMIT_BOUNDS.rpm)),
  tpm: Type.Optional(limitField(KEY_LIMIT_BOUNDS.tpm)),
  model_limits: Type.Optional(ModelLimits),
  budget_usd: Type.Optional(
    Nullable(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: KEY_LIMIT_BOUNDS.budget_usd,
        rule: `must be a number of US dollars above 0 and at most ${KEY_LIMIT_BOUNDS.budget_usd}, or null`,
      }),
    ),
  ),
  expires_at: Type.Optional(Nullable(Time)),
  prompt_cache: Type.Optional(PromptCache),
  tools: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1 })))),
  /** Guardrail policies (names of the config's `guardrails.policies`) the key runs; null or [] = the config's default. */
  guardrails: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1 }), { maxItems: 32 }))),
  /** The team that owns the key, set when it is made (default: the default team). */
  team_id: Type.Optional(Type.String({ minLength: 1 })),
};
export const AdminKeyFields = Type.Object(KEY_FIELDS, { additionalProperties: false, listKnown: true });

/**
 * The body `POST /admin/keys` and `PATCH /admin/keys/{id}` are checked against: the fields above,
 * where the admin module checks the entries of `model_limits` (each names a catalog model) and
 * `expires_at` (a time `Date` reads) itself.
 */
export const AdminKeyBody = Type.Object(
  {
    ...KEY_FIELDS,
    model_limits: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
    expires_at: Type.Optional(Nullable(Type.String())),
  },
  { additionalProperties: false, listKnown: true },
);
export type AdminKeyBody = Static<typeof AdminKeyBody>;

export const AdminRotate = Type.Object({
  grace_seconds: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 2_592_000,
      rule: "must be a whole number of seconds from 0 to 2592000 (30 days)",
    }),
  ),
});
export type AdminRotate = Static<typeof AdminRotate>;

const Endpoint = Type.Union(
  ["chat", "messages", "responses", "generate", "count_tokens", "mcp", "embeddings"].map((e) => Type.Literal(e)),
);

/** One usage record of the ledger. */
export const AdminUsageRecord = Type.Object({
  request_id: Type.String(),
  key_id: Type.String(),
  model: Type.String(),
  endpoint: Endpoint,
  stream: Type.Boolean(),
  input_tokens: Type.Integer({ minimum: 0 }),
  output_tokens: Type.Integer({ minimum: 0 }),
  cache_read_tokens: Type.Integer({ minimum: 0 }),
  cache_write_tokens: Type.Integer({ minimum: 0 }),
  cache_write_1h_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
  reasoning_tokens: Type.Integer({ minimum: 0 }),
  cost_usd: Type.Number({ minimum: 0 }),
  upstream_model: Type.Optional(Nullable(Type.String())),
  /** An MCP tool call's arguments and result in bytes of JSON (`endpoint: "mcp"`; `model` is `<server>__<tool>`). */
  bytes_in: Type.Optional(Type.Integer({ minimum: 0 })),
  bytes_out: Type.Optional(Type.Integer({ minimum: 0 })),
  status: Type.Integer(),
  upstream_status: Type.Integer(),
  latency_ms: Type.Number({ minimum: 0 }),
  aborted: Type.Boolean(),
  estimated: Type.Boolean(),
  created_at: Time,
});

export const AdminUsagePage = Type.Object({ data: Type.Array(AdminUsageRecord), next_cursor: Nullable(Type.String()) });

/** `GET /admin/usage?group_by=…`: totals per group (only the grouped-by fields are present). */
export const AdminUsageGroups = Type.Object({
  data: Type.Array(
    Type.Object({
      key_id: Type.Optional(Type.String()),
      /** With `group_by=team`: the keys' team. */
      team_id: Type.Optional(Nullable(Type.String())),
      /** With `group_by=user`: who made the keys (`(admin)` for an administrator). */
      user_id: Type.Optional(Nullable(Type.String())),
      model: Type.Optional(Type.String()),
      day: Type.Optional(Type.String()),
      requests: Type.Integer({ minimum: 0 }),
      input_tokens: Type.Integer({ minimum: 0 }),
      output_tokens: Type.Integer({ minimum: 0 }),
      cache_read_tokens: Type.Integer({ minimum: 0 }),
      cache_write_tokens: Type.Integer({ minimum: 0 }),
      reasoning_tokens: Type.Integer({ minimum: 0 }),
      cost_usd: Type.Number({ minimum: 0 }),
    }),
  ),
});

/** `GET /admin/usage/daily`: one zero-filled series per model or key over a range of UTC days. */
export const AdminUsageDaily = Type.Object({
  by: Type.Union([Type.Literal("model"), Type.Literal("key"), Type.Literal("team"), Type.Literal("user")]),
  days: Type.Array(Type.String({ format: "date" })),
  series: Type.Array(
    Type.Object({
      /** A model id or a key id. */
      id: Type.String(),
      requests: Type.Array(Type.Integer({ minimum: 0 })),
      tokens: Type.Array(Type.Integer({ minimum: 0 })),
      cost_usd: Type.Array(Type.Number({ minimum: 0 })),
    }),
  ),
});

/** `GET /admin/guardrails`: what the guardrail policies found, by policy, category, action and key; never a value. */
export const AdminGuardrailTotals = Type.Object({
  since: Type.String({ format: "date" }),
  until: Type.String({ format: "date" }),
  data: Type.Array(
    Type.Object({
      policy: Type.String(),
      category: Type.String(),
      action: Type.String({ description: "What the policy did; for a dry-run policy, what it would have done." }),
      dry_run: Type.Boolean(),
      key_id: Type.String(),
      requests: Type.Integer({ minimum: 0 }),
      detections: Type.Integer({ minimum: 0 }),
    }),
  ),
  /** Always false: every request of the range is summed (from the guardrail rollups); kept for clients that read it. */
  truncated: Type.Boolean(),
});

/** `GET /admin/requests`: the live request log, newest first; what happened, never what was said. */
export const AdminRequestLog = Type.Object({
  data: Type.Array(
    Type.Pick(AdminUsageRecord, [
      "request_id",
      "created_at",
      "key_id",
      "model",
      "endpoint",
      "stream",
      "status",
      "latency_ms",
      "input_tokens",
      "output_tokens",
      "cost_usd",
      "aborted",
    ]),
  ),
  /** Older requests follow: pass this as `cursor` (null: none). */
  next_cursor: Nullable(Type.String()),
});

/** `GET /admin/deployments`: every model's deployments and the state of each one's circuit (per instance). */
const Ms = Nullable(Type.Number({ minimum: 0 }));
export const AdminLatency = Type.Object({
  /** How many of this instance's last requests the rows are of, at most. */
  window: Type.Integer({ minimum: 1 }),
  data: Type.Array(
    Type.Object({
      model: Type.String(),
      deployment: Type.String(),
      requests: Type.Integer({ minimum: 0 }),
      errors: Type.Integer({ minimum: 0 }),
      latency_p50_ms: Ms,
      latency_p95_ms: Ms,
      streams: Type.Integer({ minimum: 0 }),
      ttft_p50_ms: Ms,
      ttft_p95_ms: Ms,
    }),
  ),
});

/** `GET /admin/usage/latency`: latency of the requests that succeeded, per group, from the ledger's rollups. */
export const AdminUsageLatency = Type.Object({
  by: Type.Array(Type.Union([Type.Literal("key"), Type.Literal("model"), Type.Literal("deployment")])),
  /** Upper bounds (ms, exclusive) of the buckets; one more bucket holds the rest. */
  bucket_bounds_ms: Type.Array(Type.Number({ minimum: 0 })),
  data: Type.Array(
    Type.Object({
      key_id: Type.Optional(Type.String()),
      model: Type.Optional(Type.String()),
      /** `""` for requests served without a named deployment. */
      deployment: Type.Optional(Type.String()),
      requests: Type.Integer({ minimum: 1 }),
      latency_buckets: Type.Array(Type.Integer({ minimum: 0 })),
      p50_ms: Type.Number({ minimum: 0 }),
      p90_ms: Type.Number({ minimum: 0 }),
      p99_ms: Type.Number({ minimum: 0 }),
    }),
  ),
});

export const AdminDeployments = Type.Object({
  data: Type.Array(
    Type.Object({
      model: Type.String(),
      /** Unique within its model: the vendor id (with `:upstream_model` when one vendor serves it twice). */
      deployment: Type.String(),
      vendor: Type.String(),
      upstream_model: Type.String(),
      weight: Type.Number({ exclusiveMinimum: 0 }),
      state: Type.Union([Type.Literal("closed"), Type.Literal("open"), Type.Literal("half_open")]),
      consecutive_failures: Type.Integer({ minimum: 0 }),
      failures: Type.Integer({ minimum: 0 }),
      last_failure_at: Nullable(Time),
      last_error: Nullable(Type.String()),
      latency_ms: Type.Number({ minimum: 0 }),
    }),
  ),
});

/** `GET /health` and `GET /ready` (the latter also names each back end and whether it answers). */
export const HealthStatus = Type.Object({
  status: Type.String(),
  /** The release this instance runs (`GET /health` only). */
  version: Type.Optional(Type.String()),
});

/** Every schema of this file, by its component name in the document. */
export const ADMIN_SCHEMAS = {
  AdminKey,
  AdminKeyWithSecret,
  AdminRevokedKey,
  AdminKeyList,
  AdminKeyFields,
  AdminRotate,
  AdminUsageRecord,
  AdminUsagePage,
  AdminUsageGroups,
  AdminUsageDaily,
  AdminGuardrailTotals,
  AdminUsageLatency,
  AdminRequestLog,
  AdminDeployments,
  AdminLatency,
  HealthStatus,
};
