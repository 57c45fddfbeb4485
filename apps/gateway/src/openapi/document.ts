import { Type } from "@sinclair/typebox";
import { ADMIN_SCHEMAS } from "../admin/admin-schemas";
import { componentSchemas } from "./components";
import { TEAM_SCHEMAS } from "../teams/team-schemas";
import type { Route } from "../http/route";
import { API_VERSION } from "../vocabulary/api-version";

export { API_VERSION } from "../vocabulary/api-version";

/**
 * The OpenAPI 3.1 description of the gateway: every route of the route table, both ways to present a key, the admin
 * key, error bodies and stream events, with schemas taken from the validators' own TypeBox values
 * and the `model` field's values from the live catalog.
 */
export function openApiDocument(routes: readonly Route[], modelIds: readonly string[]): Record<string, unknown> {
  const ModelId = Type.Union(
    modelIds.map((id) => Type.Literal(id)),
    { description: "A model of this gateway's catalog (`GET /v1/models` lists those your key may call)." },
  );
  return {
    openapi: "3.1.0",
    info: {
      title: "Turnpike",
      version: API_VERSION,
      description: "A self-hosted gateway to several model vendors behind three client formats: chat completions, messages and responses. Any catalog model is callable in any format.",
    },
    tags: ["Chat completions", "Messages", "Responses", "Models", "MCP", "Admin", "Operations"].map((name) => ({ name })),
    security: [{ apiKey: [] }, { bearer: [] }],
    paths: paths(routes),
    components: {
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "x-api-key", description: "A Turnpike key (`sk-tp-…`), as the messages format's clients send it." },
        bearer: { type: "http", scheme: "bearer", description: "A Turnpike key (`sk-tp-…`) as `Authorization: Bearer`, as the chat and responses clients send it." },
        admin: { type: "http", scheme: "bearer", description: "The admin key (`TURNPIKE_ADMIN_KEY`), an owner; or a named admin token (`tp-adm-…`, `POST /admin/tokens`) with its role." },
        metrics: { type: "http", scheme: "bearer", description: "The metrics key (`TURNPIKE_METRICS_KEY`), when set." },
      },
      schemas: componentSchemas({ ...ADMIN_SCHEMAS, ...TEAM_SCHEMAS, ModelId }),
    },
  };
}

/** The `paths` object: each documented route's operation under its path, in the table's order. */
function paths(routes: readonly Route[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const r of routes) if (r.doc) (out[r.path] ??= {})[r.method.toLowerCase()] = r.doc;
  return out;
}
