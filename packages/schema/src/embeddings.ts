/**
 * `POST /v1/embeddings` in the chat family's shape: vectors for texts or token ids, from an
 * embedding model of the catalog.
 */
import { Type, type Static } from "@sinclair/typebox";

/**
 * An embeddings request.
 *
 * @example
 * ```ts
 * const r: EmbeddingsRequest = { model: "beta-embedding-3-small", input: ["a cat", "a dog"], dimensions: 256 };
 * ```
 */
export const EmbeddingsRequest = Type.Object({
  model: Type.String(),
  /** A text, texts, token ids, or arrays of token ids. */
  input: Type.Union([
    Type.String(),
    Type.Array(Type.String()),
    Type.Array(Type.Integer({ minimum: 0 })),
    Type.Array(Type.Array(Type.Integer({ minimum: 0 }))),
  ]),
  /** Shorter vectors than the model's own size. */
  dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
  /** `base64`: each vector as its little-endian float32 bytes, base64-encoded. */
  encoding_format: Type.Optional(Type.Union([Type.Literal("float"), Type.Literal("base64")])),
  user: Type.Optional(Type.String()),
  /** Turnpike extension: what the vectors are for (`RETRIEVAL_QUERY`, …), carried to upstreams that take it. */
  task_type: Type.Optional(Type.String()),
});
export type EmbeddingsRequest = Static<typeof EmbeddingsRequest>;

/** One vector of the reply, at its input's index. */
export const Embedding = Type.Object({
  object: Type.Literal("embedding"),
  index: Type.Integer({ minimum: 0 }),
  embedding: Type.Union([Type.Array(Type.Number()), Type.String()]),
});
export type Embedding = Static<typeof Embedding>;

/**
 * An embeddings reply.
 *
 * @example
 * ```ts
 * const r: EmbeddingsResponse = { object: "list", model: "beta-embedding-3-small", data: [{ object: "embedding", index: 0, embedding: [0.1, -0.2] }], usage: { prompt_tokens: 2, total_tokens: 2 } };
 * ```
 */
export const EmbeddingsResponse = Type.Object({
  object: Type.Literal("list"),
  data: Type.Array(Embedding),
  model: Type.String(),
  usage: Type.Object({ prompt_tokens: Type.Integer({ minimum: 0 }), total_tokens: Type.Integer({ minimum: 0 }) }),
});
export type EmbeddingsResponse = Static<typeof EmbeddingsResponse>;
