import { Type } from "@sinclair/typebox";
import { ADMIN_SCHEMAS } from "./admin-schemas";
import { TEAM_SCHEMAS } from "../teams/team-schemas";
import type { Route } from "../http/route";
import { API_VERSION } from "../vocabulary/api-version";
import { componentSchemas } from "./components";
import { type Json, operationIdOf } from "./operations";
import { standardSchema } from "./standard-schema";

/** The document's tags, in the order a reader meets them, each saying what its operations are for. */
const TAGS: { name: string; description: string }[] = [
  {
    name: "Chat completions",
    description:
      "The chat completions format (`POST /v1/chat/completions`), as OpenAI-compatible clients speak it. Any catalog model answers, whatever its vendor.",
  },
  {
    name: "Messages",
    description:
      "The messages format (`POST /v1/messages`), as Anthropic-compatible clients and agents speak it, with token counting.",
  },
  {
    name: "Responses",
    description:
      "The Responses format (`POST /v1/responses`, its WebSocket transport and stored responses), as agents such as Codex speak it.",
  },
  { name: "Models", description: "The catalog as a key sees it: the models it may call." },
  {
    name: "MCP",
    description:
      "One Model Context Protocol endpoint (Streamable HTTP) fronting the MCP servers the operator configured, behind a Turnpike key.",
  },
  {
    name: "Admin",
    description:
      "Keys, usage, the request log and deployments, behind the admin key (`TURNPIKE_ADMIN_KEY`). Admin errors use the chat completions envelope.",
  },
  {
    name: "Operations",
    description: "Probes, metrics, the dashboard and this document: what an operator and their tools read.",
  },
];

/**
 * A request example per request schema (`model` filled in from the catalog), so a reader and a
 * generated client see a call that works as written.
 */
const REQUEST_EXAMPLES: Record<string, (model: string) => Json> = {
  ChatRequest: (model) => ({ model, messages: [{ role: "user", content: "Say hello in one word." }] }),
  MessagesRequest: (model) => ({
    model,
    max_tokens: 256,
    messages: [{ role: "user", content: "Say hello in one word." }],
  }),
  CountTokensRequest: (model) => ({ model, messages: [{ role: "user", content: "Say hello in one word." }] }),
  ResponsesRequest: (model) => ({ model, input: "Say hello in one word." }),
};

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
      description:
        "A self-hosted gateway to several model vendors behind four client formats: chat completions, messages, Responses and generateContent. Any catalog model is callable in any format; MCP tools are served at `/mcp`.\n\n" +
        "Present a Turnpike key (`sk-tp-…`) as `Authorization: Bearer`, `x-api-key` or (generateContent) `x-goog-api-key`. Each reply carries `x-request-id`; errors come in the envelope of the format called.",
      license: { name: "MIT", identifier: "MIT" },
    },
    // Relative: the gateway that serves this document is the one it describes, whatever its address.
    servers: [{ url: "/", description: "This gateway (the address this document was fetched from)." }],
    tags: TAGS,
    security: [{ apiKey: [] }, { bearer: [] }],
    paths: paths(routes, modelIds[0]),
    components: {
      securitySchemes: {
        apiKey: {
          type: "apiKey",
          in: "header",
          name: "x-api-key",
          description: "A Turnpike key (`sk-tp-…`), as the messages format's clients send it.",
        },
        bearer: {
          type: "http",
          scheme: "bearer",
          description:
            "A Turnpike key (`sk-tp-…`) as `Authorization: Bearer`, as the chat and responses clients send it.",
        },
        googApiKey: {
          type: "apiKey",
          in: "header",
          name: "x-goog-api-key",
          description: "A Turnpike key (`sk-tp-…`), as the generateContent format's clients send it.",
        },
        keyQuery: {
          type: "apiKey",
          in: "query",
          name: "key",
          description: "A Turnpike key (`sk-tp-…`) in the query, which the generateContent format allows.",
        },
        admin: {
          type: "http",
          scheme: "bearer",
          description:
            "The admin key (`TURNPIKE_ADMIN_KEY`), an owner; or a named admin token (`tp-adm-…`, `POST /admin/tokens`) with its role.",
        },
        metrics: { type: "http", scheme: "bearer", description: "The metrics key (`TURNPIKE_METRICS_KEY`), when set." },
      },
      schemas: componentSchemas({ ...ADMIN_SCHEMAS, ...TEAM_SCHEMAS, ModelId }),
    },
  };
}

/**
 * The `paths` object: each documented route's operation under its path, in the table's order,
 * with its `operationId` (declared, or derived from method and path), standard schemas only, and
 * a request example where its body has one.
 */
function paths(routes: readonly Route[], exampleModel: string | undefined): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  const ids = new Map<string, string>();
  for (const r of routes) {
    if (!r.doc) continue;
    const operationId = typeof r.doc.operationId === "string" ? r.doc.operationId : operationIdOf(r.method, r.path);
    const twin = ids.get(operationId);
    if (twin) throw new Error(`operationId ${operationId} of ${r.method} ${r.path} is also ${twin}'s`);
    ids.set(operationId, `${r.method} ${r.path}`);
    const op = withStandardSchemas({ operationId, ...r.doc }) as Json; // an operation stays an object
    (out[r.path] ??= {})[r.method.toLowerCase()] = exampleModel ? withRequestExample(op, exampleModel) : op;
  }
  return out;
}

/** Every `schema` of an operation (parameters, bodies, headers) through `standardSchema`. */
function withStandardSchemas(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withStandardSchemas);
  if (typeof node !== "object" || node === null) return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [k, k === "schema" ? standardSchema(v) : withStandardSchemas(v)]),
  );
}

/** The operation with an example of its JSON request body, when its schema has one. */
function withRequestExample(op: Json, model: string): Json {
  const body = op.requestBody as { content?: Record<string, Json> } | undefined; // an OpenAPI request body, when present
  const media = body?.content?.["application/json"];
  const schema = media?.schema as { allOf?: { $ref?: string }[]; $ref?: string } | undefined; // a schema object, when present
  const name = (schema?.allOf?.[0]?.$ref ?? schema?.$ref)?.split("/").pop();
  const example = name ? REQUEST_EXAMPLES[name] : undefined;
  if (!body || !media || !example || "example" in media || "examples" in media) return op;
  return {
    ...op,
    requestBody: { ...body, content: { ...body.content, "application/json": { ...media, example: example(model) } } },
  };
}
