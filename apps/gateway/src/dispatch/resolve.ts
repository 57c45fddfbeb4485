import { GatewayError } from "@turnpike/providers";
import type { GatewayDeps } from "../deps";
import { unaliased } from "../formats/agent-catalog";
import type { Target } from "../protocols";
import type { KeyRecord } from "../storage/store";

export function modelNotFound(model: string): GatewayError {
  return new GatewayError({
    status: 404,
    type: "not_found_error",
    code: "model_not_found",
    param: "model",
    message: `The model \`${model}\` does not exist or this key may not call it (model_not_found).`,
  });
}

/**
 * Step 3: the catalog entry for a model id this key may call (unknown and forbidden look the
 * same), on the upstream of its vendor.
 */
export function resolve(
  deps: Pick<GatewayDeps, "catalog" | "keys" | "upstreams">,
  key: KeyRecord,
  asked: string,
): Target {
  // An agent's alias of a catalog id (formats/agent-catalog.ts) is that id.
  const model = deps.catalog.get(asked) ? asked : unaliased(asked);
  const entry = deps.catalog.get(model);
  if (!entry || !deps.keys.allows(key, model)) throw modelNotFound(asked);
  const upstream = deps.upstreams.get(entry.owned_by);
  // The catalog is built against the vendor table, so every entry's vendor has an upstream.
  if (!upstream) throw new GatewayError({ status: 500, message: `No upstream for vendor ${entry.owned_by}.` });
  // A key's own prompt_cache setting wins over the model's.
  if (key.prompt_cache && key.prompt_cache !== entry.prompt_cache)
    return { entry: { ...entry, prompt_cache: key.prompt_cache }, upstream };
  return { entry, upstream };
}
