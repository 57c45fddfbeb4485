import { Elysia } from "elysia";
import type { GatewayDeps } from "../deps";
import { formatOfHeaders } from "../formats";
import { catalogIdOf } from "../formats/generate";
import { authenticate } from "../pipeline/authenticate";
import { newContext } from "../pipeline/context";
import { modelNotFound } from "../pipeline/resolve";
import { errorResponse, toGatewayError } from "../pipeline/respond";
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
    pricing: {
      input_per_mtok: e.input_per_mtok,
      output_per_mtok: e.output_per_mtok,
      cache_read_per_mtok: e.cache_read_per_mtok,
      cache_write_5m_per_mtok: e.cache_write_5m_per_mtok,
      cache_write_1h_per_mtok: e.cache_write_1h_per_mtok,
      currency: "USD",
    },
  };
}

/** `GET /v1/models` and `GET /v1/models/{id}`: the models the calling key may call. */
export const modelsModule = (deps: GatewayDeps) =>
  new Elysia({ name: "module.models" })
    .get("/v1/models", async ({ request, server }) => {
      const ctx = newContext(request, formatOfHeaders(request.headers), server, deps.config.trustedProxies);
      try {
        const key = await authenticate(deps, ctx);
        const allowed = deps.catalog.all().filter((e) => deps.keys.allows(key, e.id));
        // A format whose clients read their own shape (the GenAI SDK calls `/v1/models` by default).
        if (ctx.format.models) return Response.json(ctx.format.models.list(allowed), { headers: ctx.format.idHeaders(ctx.id) });
        // Newest first, as the messages format lists them.
        const data = allowed.sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id)).map(modelEntry);
        const body = { object: "list", data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
        return Response.json(body, { headers: ctx.format.idHeaders(ctx.id) });
      } catch (e) {
        return errorResponse(ctx.format, toGatewayError(e, deps.logger, ctx.id), ctx.id);
      }
    })
    .get("/v1/models/*", async ({ request, params, server }) => {
      const ctx = newContext(request, formatOfHeaders(request.headers), server, deps.config.trustedProxies);
      try {
        const key = await authenticate(deps, ctx);
        // The generateContent format names a model `models/{id}`.
        const id = catalogIdOf(decodeURIComponent(params["*"]));
        const entry = deps.catalog.get(id);
        if (!entry || !deps.keys.allows(key, id)) throw modelNotFound(id);
        return Response.json(ctx.format.models ? ctx.format.models.one(entry) : modelEntry(entry), { headers: ctx.format.idHeaders(ctx.id) });
      } catch (e) {
        return errorResponse(ctx.format, toGatewayError(e, deps.logger, ctx.id), ctx.id);
      }
    });
