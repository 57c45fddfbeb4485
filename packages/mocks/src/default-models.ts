/** The mock's catalog: the gateway's built-in model ids, in the shape `GET /v1/models` returns. */
import { CATALOG_MODEL_IDS, type Model } from "@turnpike/schema";

/**
 * The gateway's built-in model ids, the mock's default catalog.
 *
 * @example
 * ```ts
 * createTurnpikeMock({ models: DEFAULT_MODEL_IDS.filter((id) => id.startsWith("alpha-")) });
 * ```
 */
export const DEFAULT_MODEL_IDS: readonly string[] = CATALOG_MODEL_IDS;

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
  };
}
