import { GatewayError } from "@turnpike/providers";
import type { KeyService } from "../keys/key-service";
import type { Catalog, CatalogEntry } from "../routing/catalog";
import type { KeyRecord } from "../storage/store";
import type { Dialect } from "./dialect";

export function modelNotFound(dialect: Dialect, model: string): GatewayError {
  const message = `The model \`${model}\` does not exist or this key may not call it (model_not_found).`;
  return dialect === "messages"
    ? new GatewayError({ status: 404, type: "not_found_error", code: "model_not_found", message })
    : new GatewayError({ status: 404, type: "invalid_request_error", code: "model_not_found", message, param: "model" });
}

/** The catalog entry for a model id this key may call; unknown and forbidden look the same. */
export function resolveModel(catalog: Catalog, keys: KeyService, key: KeyRecord, model: string, dialect: Dialect): CatalogEntry {
  const entry = catalog.get(model);
  if (!entry || !keys.allows(key, model)) throw modelNotFound(dialect, model);
  return entry;
}
