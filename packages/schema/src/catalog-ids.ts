/**
 * The model ids of the gateway's built-in catalog, in catalog order: the one list that tests,
 * `@turnpike/mocks` (its default catalog) and the SDK tests use. The gateway's catalog tests
 * (`apps/gateway/test/models.test.ts`, `compat.test.ts`) check the served catalog against it,
 * so a change to the built-in catalog shows up there first.
 *
 * @example
 * ```ts
 * import { CATALOG_MODEL_IDS } from "@turnpike/schema";
 * CATALOG_MODEL_IDS.filter((id) => id.startsWith("gamma-")); // ["gamma-3-pro", "gamma-3-flash"]
 * ```
 */
export const CATALOG_MODEL_IDS = [
  "alpha-opus-4-8",
  "alpha-fable-5",
  "alpha-sonnet-4-6",
  "alpha-haiku-4-5",
  "alpha-sonnet-4-6 (context-1m beta)",
  "beta-5.5",
  "beta-5",
  "gamma-3-pro",
  "gamma-3-flash",
  "delta-m3",
] as const;

/** One of the built-in catalog's model ids. */
export type CatalogModelId = (typeof CATALOG_MODEL_IDS)[number];

/**
 * The embedding models of the built-in catalog (`POST /v1/embeddings`), in catalog order. They are
 * not in {@link CATALOG_MODEL_IDS}: those are the models a client can chat with.
 */
export const EMBEDDING_MODEL_IDS = ["beta-embedding-3-small", "beta-embedding-3-large", "gamma-embedding-1"] as const;

/** One of the built-in catalog's embedding model ids. */
export type EmbeddingModelId = (typeof EMBEDDING_MODEL_IDS)[number];
