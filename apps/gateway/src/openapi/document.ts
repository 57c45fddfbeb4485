import { Type } from "@sinclair/typebox";
import { ADMIN_SCHEMAS } from "./admin-schemas";
import { componentSchemas } from "./components";
import { paths } from "./paths";

/** The version of the API this gateway serves, as its own specification names it. */
export const API_VERSION = "1.0.0";

/**
 * The OpenAPI 3.1 description of the gateway: every route, both ways to present a key, the admin
 * key, error bodies and stream events, with schemas taken from the validators' own TypeBox values
 * and the `model` field's values from the live catalog.
 */
export function openApiDocument(modelIds: readonly string[]): Record<string, unknown> {
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
    tags: ["Chat completions", "Messages", "Responses", "Models", "Admin", "Operations"].map((name) => ({ name })),
    security: [{ apiKey: [] }, { bearer: [] }],
    paths: paths(),
    components: {
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "x-api-key", description: "A Turnpike key (`sk-tp-…`), as the messages format's clients send it." },
        bearer: { type: "http", scheme: "bearer", description: "A Turnpike key (`sk-tp-…`) as `Authorization: Bearer`, as the chat and responses clients send it." },
        googApiKey: { type: "apiKey", in: "header", name: "x-goog-api-key", description: "A Turnpike key (`sk-tp-…`), as the generateContent format's clients send it." },
        keyQuery: { type: "apiKey", in: "query", name: "key", description: "A Turnpike key (`sk-tp-…`) in the query, which the generateContent format allows." },
        admin: { type: "http", scheme: "bearer", description: "The admin key (`TURNPIKE_ADMIN_KEY`)." },
        metrics: { type: "http", scheme: "bearer", description: "The metrics key (`TURNPIKE_METRICS_KEY`), when set." },
      },
      schemas: componentSchemas({ ...ADMIN_SCHEMAS, ModelId }),
    },
  };
}
