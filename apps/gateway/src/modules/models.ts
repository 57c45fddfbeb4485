import { Elysia } from "elysia";
import type { GatewayDeps } from "../deps";
import { authenticate } from "../pipeline/authenticate";
import { clientAddress } from "../pipeline/client-address";
import { dialectOfHeaders, errorResponse, idHeaders } from "../pipeline/dialect";
import { newRequestId } from "../pipeline/request-id";
import { modelNotFound } from "../pipeline/resolve";
import type { CatalogEntry } from "../routing/catalog";

/**
 * One entry shape that both standard client libraries parse: the chat format's
 * `{id, object, created, owned_by}` and the messages format's `{type, id, display_name,
 * created_at}`, plus what a client needs to pick and budget (prices, context window).
 */
export function modelEntry(e: CatalogEntry) {
  return {
    id: e.id,
    object: "model" as const,
    type: "model" as const,
    display_name: e.display_name,
    created: Math.floor(Date.parse(e.created_at) / 1000),
    created_at: e.created_at,
    owned_by: e.owned_by,
    context_window: e.context_window,
    max_output_tokens: e.max_output_tokens,
    pricing: { input_per_mtok: e.input_per_mtok, output_per_mtok: e.output_per_mtok, currency: "USD" },
  };
}

/** `GET /v1/models` and `GET /v1/models/{id}`: the models the calling key may call. */
export const modelsModule = (deps: GatewayDeps) =>
  new Elysia({ name: "module.models" })
    .get("/v1/models", ({ request, server }) => {
      const requestId = newRequestId();
      const dialect = dialectOfHeaders(request.headers);
      try {
        const key = authenticate(deps, request.headers, dialect, () => clientAddress(server, request));
        // Newest first, as the messages format lists them.
        const data = deps.catalog
          .all()
          .filter((e) => deps.keys.allows(key, e.id))
          .sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id))
          .map(modelEntry);
        const body = { object: "list", data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
        return Response.json(body, { headers: idHeaders(dialect, requestId) });
      } catch (e) {
        return errorResponse(dialect, e, requestId);
      }
    })
    .get("/v1/models/*", ({ request, params, server }) => {
      const requestId = newRequestId();
      const dialect = dialectOfHeaders(request.headers);
      try {
        const key = authenticate(deps, request.headers, dialect, () => clientAddress(server, request));
        const id = decodeURIComponent(params["*"]);
        const entry = deps.catalog.get(id);
        if (!entry || !deps.keys.allows(key, id)) throw modelNotFound(dialect, id);
        return Response.json(modelEntry(entry), { headers: idHeaders(dialect, requestId) });
      } catch (e) {
        return errorResponse(dialect, e, requestId);
      }
    });
