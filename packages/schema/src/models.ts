/**
 * The models list. One shape that both official client libraries parse: the chat client
 * reads `{id, object, created, owned_by}` (unix seconds) and the messages client reads
 * `{id, type, display_name, created_at}` (RFC 3339) plus the paging fields (docs/protocols.md §1.11,
 * §2.9), so each entry carries both sets.
 */
import { Type, type Static } from "@sinclair/typebox";
import { Nullable } from "./nullable.js";

/**
 * Prices: USD per million tokens, and (as the OpenRouter model object writes them) USD per token
 * as decimal strings.
 */
export const ModelPricing = Type.Object({
  input_per_mtok: Type.Number({ minimum: 0 }),
  output_per_mtok: Type.Number({ minimum: 0 }),
  cache_read_per_mtok: Type.Optional(Type.Number({ minimum: 0 })),
  cache_write_5m_per_mtok: Type.Optional(Type.Number({ minimum: 0 })),
  cache_write_1h_per_mtok: Type.Optional(Type.Number({ minimum: 0 })),
  prompt: Type.Optional(Type.String()),
  completion: Type.Optional(Type.String()),
  input_cache_read: Type.Optional(Type.String()),
  input_cache_write: Type.Optional(Type.String()),
});
export type ModelPricing = Static<typeof ModelPricing>;

/**
 * One catalog entry.
 *
 * @example
 * ```ts
 * const m: Model = {
 *   id: "alpha-sonnet-4-6", object: "model", type: "model", display_name: "Alpha Sonnet 4.6",
 *   created: 1759104000, created_at: "2025-09-29T00:00:00Z", owned_by: "alpha",
 *   pricing: { input_per_mtok: 3, output_per_mtok: 15 }, context_window: 200000,
 * };
 * ```
 */
export const Model = Type.Object({
  id: Type.String(),
  object: Type.Literal("model"),
  type: Type.Literal("model"),
  display_name: Type.String(),
  /** Unix seconds (chat client). */
  created: Type.Integer(),
  /** RFC 3339 (messages client); the same instant as `created`. */
  created_at: Type.String(),
  owned_by: Type.String(),
  pricing: Type.Optional(ModelPricing),
  context_window: Type.Optional(Type.Integer({ minimum: 1 })),
  /** An embedding model (it serves `POST /v1/embeddings` only); false for a model to chat with. */
  embeds: Type.Optional(Type.Boolean()),
  /** An embedding model's vector length when no `dimensions` is asked (the most it makes). */
  embedding_dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
  /** The OpenRouter model object's fields: the context window, modalities, parameters, output cap. */
  context_length: Type.Optional(Type.Integer({ minimum: 1 })),
  architecture: Type.Optional(
    Type.Object({ input_modalities: Type.Array(Type.String()), output_modalities: Type.Array(Type.String()) }),
  ),
  supported_parameters: Type.Optional(Type.Array(Type.String())),
  top_provider: Type.Optional(
    Type.Object({ context_length: Type.Integer(), max_completion_tokens: Nullable(Type.Integer()) }),
  ),
  /** The messages format's: the input window and the output cap. */
  max_input_tokens: Type.Optional(Type.Integer()),
  max_tokens: Type.Optional(Type.Integer()),
  /**
   * Turnpike's prices per million tokens for each way a call is billed: `service_tiers.default`
   * and each sold tier (`priority`, `flex`: the row's prices times `multiplier`), and `batch`
   * (null where batch lines cost what other calls cost).
   */
  turnpike: Type.Optional(
    Type.Object({
      currency: Type.Literal("USD"),
      unit: Type.Literal("per_mtok"),
      service_tiers: Type.Record(Type.String(), Type.Record(Type.String(), Type.Number())),
      batch: Nullable(Type.Record(Type.String(), Type.Number())),
    }),
  ),
});
export type Model = Static<typeof Model>;

/**
 * `GET /v1/models`.
 *
 * @example
 * ```ts
 * const list: ModelList = { object: "list", data: [m], has_more: false, first_id: m.id, last_id: m.id };
 * ```
 */
export const ModelList = Type.Object({
  object: Type.Literal("list"),
  data: Type.Array(Model),
  has_more: Type.Boolean(),
  first_id: Nullable(Type.String()),
  last_id: Nullable(Type.String()),
  /** The same models as the Responses-format coding agent's own model metadata (slug, context window, reasoning levels, …). */
  models: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
  /** The version of `models`, as that agent's decoder requires. */
  etag: Type.Optional(Type.String()),
});
export type ModelList = Static<typeof ModelList>;
