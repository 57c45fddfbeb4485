import { createHash } from "node:crypto";
import type { GatewayDeps } from "../wiring/deps";
import { formatOfHeaders } from "../formats";
import { catalogIdOf } from "../formats/generate";
import { modelEntry } from "../formats/model-card";
import { agentModelInfo, isAgentDiscovery, isPickerDiscovery, pickerId, unaliased } from "../formats/agent-catalog";
import { authenticate } from "../access/authenticate";
import { newContext } from "../request/context";
import { modelNotFound } from "../dispatch/resolve";
import { errorResponse, toGatewayError } from "../request/respond";
import type { Route } from "../http/route";
import { errors, idParam, INFERENCE_KEYS, ok, ref } from "../openapi/operations";

/** `GET /v1/models` and `GET /v1/models/{id}`: the models the calling key may call. */
export function modelRoutes(deps: GatewayDeps): Route[] {
  return [
    {
      method: "GET",
      path: "/v1/models",
      doc: {
        tags: ["Models"],
        summary: "List the models the key may call",
        security: INFERENCE_KEYS,
        responses: { ...ok("Newest first.", ref("ModelList")), ...errors("ChatErrorBody") },
      },
      handle: async ({ request, server }) => {
        const ctx = newContext(request, formatOfHeaders(request.headers), server, deps.config.trustedProxies);
        try {
          const key = await authenticate(deps, ctx);
          // Newest first, as the messages format lists them.
          // A coding agent offers every listed model to chat with: it is not shown embedding models.
          const agent = isAgentDiscovery(request);
          const allowed = deps.catalog
            .all()
            .filter((e) => deps.keys.allows(key, e.id) && !(agent && e.embedding_dimensions !== undefined));
          // A format whose clients read their own shape (the GenAI SDK calls `/v1/models` by default).
          if (ctx.format.models)
            return Response.json(ctx.format.models.list(allowed), { headers: ctx.format.idHeaders(ctx.id) });
          const entries = allowed.sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id));
          // The messages-format agent's picker is shown each model under an id it keeps (formats/agent-catalog.ts).
          const picker = isPickerDiscovery(request);
          const data = entries.map((e) => (picker ? { ...modelEntry(e), id: pickerId(e.id) } : modelEntry(e)));
          // `models`: the same models as the Responses-format agent's own metadata (additive; `data` is what the client libraries read).
          const models = entries
            .filter((e) => e.embedding_dimensions === undefined)
            .map((e, i) => agentModelInfo(e, i + 1));
          // The agent's decoder requires a catalog version beside `models`: it changes when the list does.
          const etag = `"${createHash("sha256").update(JSON.stringify(models)).digest("hex").slice(0, 16)}"`;
          const body = {
            object: "list",
            data,
            has_more: false,
            first_id: data[0]?.id ?? null,
            last_id: data.at(-1)?.id ?? null,
            models,
            etag,
          };
          return Response.json(body, { headers: ctx.format.idHeaders(ctx.id) });
        } catch (e) {
          return errorResponse(ctx.format, toGatewayError(e, deps.logger, ctx.id), {
            logger: deps.logger,
            request,
            requestId: ctx.id,
          });
        }
      },
    },
    {
      method: "GET",
      path: "/v1/models/{id}",
      // A model id may hold a slash.
      rest: true,
      doc: {
        tags: ["Models"],
        summary: "Get one model",
        security: INFERENCE_KEYS,
        parameters: [{ ...idParam("A catalog model id."), schema: ref("ModelId") }],
        responses: { ...ok("The model.", ref("Model")), ...errors("ChatErrorBody") },
      },
      handle: async ({ request, params, server }) => {
        const ctx = newContext(request, formatOfHeaders(request.headers), server, deps.config.trustedProxies);
        try {
          const key = await authenticate(deps, ctx);
          // The generateContent format names a model `models/{id}`.
          const id = catalogIdOf(unaliased(decodeURIComponent(params.id ?? "")));
          const entry = deps.catalog.get(id);
          if (!entry || !deps.keys.allows(key, id)) throw modelNotFound(id);
          return Response.json(ctx.format.models ? ctx.format.models.one(entry) : modelEntry(entry), {
            headers: ctx.format.idHeaders(ctx.id),
          });
        } catch (e) {
          return errorResponse(ctx.format, toGatewayError(e, deps.logger, ctx.id), {
            logger: deps.logger,
            request,
            requestId: ctx.id,
          });
        }
      },
    },
  ];
}
