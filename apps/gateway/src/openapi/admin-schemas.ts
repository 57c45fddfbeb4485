/**
 * The admin API's bodies as TypeBox schemas: the description document (`GET /openapi.json`) is
 * built from them, and the admin module's replies are typed by them, so the two cannot drift.
 */
import { Type, type Static } from "@sinclair/typebox";
import { Nullable } from "@turnpike/schema";

const Limit = Nullable(Type.Integer({ minimum: 1 }));
const Time = Type.String({ format: "date-time" });
const ModelLimits = Nullable(Type.Record(Type.String(), Type.Object({ rpm: Type.Optional(Limit), tpm: Type.Optional(Limit) })));
const PromptCache = Nullable(Type.Union([Type.Literal("auto"), Type.Literal("off")]));

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
  previous_secret_valid_until: Nullable(Time),
  created_at: Time,
  updated_at: Time,
  revoked_at: Nullable(Time),
});
export type AdminKey = Static<typeof AdminKey>;

/** A new or rotated key: its secret, shown this once. */
export const AdminKeyWithSecret = Type.Composite([AdminKey, Type.Object({ key: Type.String() })]);
export const AdminRevokedKey = Type.Composite([AdminKey, Type.Object({ revoked: Type.Literal(true) })]);
export const AdminKeyList = Type.Object({ data: Type.Array(AdminKey) });

/** `POST /admin/keys` (name required) and `PATCH /admin/keys/{id}` (all optional; null clears a limit). */
export const AdminKeyFields = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1 })),
    models: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1 })))),
    rpm: Type.Optional(Limit),
    tpm: Type.Optional(Limit),
    model_limits: Type.Optional(ModelLimits),
    budget_usd: Type.Optional(Nullable(Type.Number({ exclusiveMinimum: 0 }))),
    expires_at: Type.Optional(Nullable(Time)),
    prompt_cache: Type.Optional(PromptCache),
  },
  { additionalProperties: false },
);

export const AdminRotate = Type.Object({ grace_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_592_000 })) });

const Endpoint = Type.Union(["chat", "messages", "responses", "generate", "count_tokens"].map((e) => Type.Literal(e)));

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
  by: Type.Union([Type.Literal("model"), Type.Literal("key")]),
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

/** `GET /admin/requests`: the live request log, newest first; what happened, never what was said. */
export const AdminRequestLog = Type.Object({
  data: Type.Array(
    Type.Pick(AdminUsageRecord, ["request_id", "created_at", "key_id", "model", "endpoint", "stream", "status", "latency_ms", "input_tokens", "output_tokens", "cost_usd", "aborted"]),
  ),
});

/** `GET /admin/deployments`: every model's deployments and the state of each one's circuit (per instance). */
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
export const HealthStatus = Type.Object({ status: Type.String() });

/** Every schema of this file, by its component name in the document. */
export const ADMIN_SCHEMAS = { AdminKey, AdminKeyWithSecret, AdminRevokedKey, AdminKeyList, AdminKeyFields, AdminRotate, AdminUsageRecord, AdminUsagePage, AdminUsageGroups, AdminUsageDaily, AdminRequestLog, AdminDeployments, HealthStatus };
