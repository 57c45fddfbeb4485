/** The mock's catalog: the gateway's built-in model ids, in the shape `GET /v1/models` returns. */
import { CATALOG_MODEL_IDS, EMBEDDING_MODEL_IDS, type Model } from "@turnpike/schema";

/**
 * The gateway's built-in model ids (its embedding models last), the mock's default catalog.
 *
 * @example
 * ```ts
 * createTurnpikeMock({ models: DEFAULT_MODEL_IDS.filter((id) => id.startsWith("alpha-")) });
 * ```
 */
export const DEFAULT_MODEL_IDS: readonly string[] = [...CATALOG_MODEL_IDS, ...EMBEDDING_MODEL_IDS];

/** The vector sizes of the built-in embedding models, as the gateway's catalog gives them. */
const EMBEDDING_DIMENSIONS: Record<string, number> = {
  "beta-embedding-3-small": 1536,
  "beta-embedding-3-large": 3072,
  "gamma-embedding-1": 3072,
};

const CREATED_AT = "2026-01-01T00:00:00Z";

/**
 * A catalog entry for `id`: owner = the first word, display name from the id.
 *
 * @example
 * ```ts
 * mockModel("alpha-sonnet-4-6").display_name; // "Alpha Sonnet 4.6"
 * ```
 */
export function mockModel(id: string): Model {
  const owner = id.split("-")[0] ?? id;
  const display = id
    .replace(/-(\d+)-(\d+)/g, " $1.$2")
    .split(/[-\s]+/)
    .map((w) => (w ? w[0]?.toUpperCase() + w.slice(1) : w))
    .join(" ");
  return {
    id,
    object: "model",
    type: "model",
    display_name: display,
    created: Math.floor(Date.parse(CREATED_AT) / 1000),
    created_at: CREATED_AT,
    owned_by: owner,
    // An id naming an embedding model is one (`embeds`), as the gateway marks its catalog.
    embeds: /embedding/.test(id),
    ...(/embedding/.test(id) ? { embedding_dimensions: EMBEDDING_DIMENSIONS[id] ?? 1536 } : {}),
  };
}
