import { GatewayError } from "@turnpike/providers";
import { unaliased } from "../formats/agent-catalog";
import type { Target } from "../protocols";
import type { KeyRecord } from "../storage/store";
import type { Catalog } from "../dispatch/catalog";
import type { KeyService } from "../keys/key-service";
import type { Upstream } from "../vocabulary/target";

/** What this step needs of the gateway (wiring/deps.ts `GatewayDeps` is one). */
export interface ResolveDeps {
  catalog: Catalog;
  keys: KeyService;
  upstreams: ReadonlyMap<string, Upstream>;
}

export function modelNotFound(model: string): GatewayError {
  return new GatewayError({
    status: 404,
    type: "not_found_error",
    code: "model_not_found",
    param: "model",
    message: `The model \`${model}\` does not exist or this key may not call it (model_not_found).`,
  });
}

/** What a call asks a model for: a reply (the inference routes, token counts) or vectors (embeddings). */
export type ModelUse = "inference" | "embeddings";

/** A model of the other kind than the route serves: a 400 naming the route that serves it. */
export function wrongModelKind(model: string, use: ModelUse): GatewayError {
  const message =
    use === "inference"
      ? `The model \`${model}\` is an embedding model: it serves POST /v1/embeddings only, not this route.`
      : `The model \`${model}\` is not an embedding model: POST /v1/embeddings takes an embedding model (GET /v1/models marks them with \`embeds: true\`).`;
  return new GatewayError({
    status: 400,
    type: "invalid_request_error",
    code: "model_not_supported",
    param: "model",
    message,
  });
}

/**
 * Step 3: the catalog entry for a model id this key may call (unknown and forbidden look the
 * same), on the upstream of its vendor; a model of the other kind than `use` is a 400.
 */
export function resolve(
  deps: Pick<ResolveDeps, "catalog" | "keys" | "upstreams">,
  key: KeyRecord,
  asked: string,
  use: ModelUse = "inference",
): Target {
  // An agent's alias of a catalog id (formats/agent-catalog.ts) is that id.
  const model = deps.catalog.get(asked) ? asked : unaliased(asked);
  const entry = deps.catalog.get(model);
  if (!entry || !deps.keys.allows(key, model)) throw modelNotFound(asked);
  if ((entry.embedding_dimensions !== undefined) !== (use === "embeddings")) throw wrongModelKind(model, use);
  const upstream = deps.upstreams.get(entry.owned_by);
  // The catalog is built against the vendor table, so every entry's vendor has an upstream.
  if (!upstream) throw new GatewayError({ status: 500, message: `No upstream for vendor ${entry.owned_by}.` });
  // A key's own prompt_cache setting wins over the model's.
  if (key.prompt_cache && key.prompt_cache !== entry.prompt_cache)
    return { entry: { ...entry, prompt_cache: key.prompt_cache }, upstream };
  return { entry, upstream };
}
