/** The operations of the description document, route by route (docs/operations.md, "API description"). */

type Json = Record<string, unknown>;

export const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Json) => ({ "application/json": { schema } });

const INFERENCE_KEYS = [{ apiKey: [] }, { bearer: [] }];
const ADMIN = [{ admin: [] }];

/** The request id every reply carries (quote it when reporting a problem). */
const REQUEST_ID = { "x-request-id": { description: "This request's id, also in the usage record and the log line.", schema: { type: "string" } } };

/** Error replies of one wire format, by status class. */
function errors(errorBody: string): Json {
  const reply = (description: string) => ({ description, headers: REQUEST_ID, content: json(ref(errorBody)) });
  return { "4XX": reply("Refused: a bad request, a bad key, a limit reached, an unknown model."), "5XX": reply("The upstream failed or could not be reached.") };
}

/** A JSON body whose `model` is one of the live catalog's ids. */
const withModel = (schema: string): Json => ({ allOf: [ref(schema), { type: "object", properties: { model: ref("ModelId") } }] });

interface InferenceRoute {
  summary: string;
  request: string;
  reply: string;
  /** What each `data:` line of the stream holds. */
  event: string;
  /** How the stream ends. */
  streamEnd: string;
  errorBody: string;
  tag: string;
}

function inference(r: InferenceRoute): Json {
  return {
    post: {
      tags: [r.tag],
      summary: r.summary,
      security: INFERENCE_KEYS,
      requestBody: { required: true, content: json(withModel(r.request)) },
      responses: {
        200: {
          description: `A reply (JSON), or with \`stream: true\` a server-sent event stream: each event's \`data:\` line is one JSON object of the schema given; ${r.streamEnd}`,
          headers: REQUEST_ID,
          content: { ...json(ref(r.reply)), "text/event-stream": { schema: ref(r.event) } },
        },
        ...errors(r.errorBody),
      },
    },
  };
}

function count(summary: string, request: string, reply: string, errorBody: string, tag: string): Json {
  return {
    post: { tags: [tag], summary, security: INFERENCE_KEYS, requestBody: { required: true, content: json(withModel(request)) }, responses: { 200: { description: "The prompt's input tokens.", headers: REQUEST_ID, content: json(ref(reply)) }, ...errors(errorBody) } },
  };
}

const idParam = (description: string) => ({ name: "id", in: "path", required: true, description, schema: { type: "string" } });
const query = (name: string, description: string, schema: Json) => ({ name, in: "query", required: false, description, schema });

function ok(description: string, schema: Json): Json {
  return { 200: { description, content: json(schema) } };
}

/** An HTML page's replies. */
function html(description: string): Json {
  return { 200: { description, content: { "text/html": { schema: { type: "string" } } } } };
}

function admin(summary: string, replies: Json, extra: Json = {}): Json {
  return { tags: ["Admin"], summary, security: ADMIN, ...extra, responses: { ...replies, ...errors("ChatErrorBody") } };
}

/** The key schemes of the generateContent routes: its header, the `key` query, or a bearer token. */
const GENERATE_KEYS = [{ googApiKey: [] }, { keyQuery: [] }, { bearer: [] }];

/** `POST …/models/{model}:{action}`: the generateContent format's three actions (docs/protocols.md §6). */
function generateActions(version: string): Json {
  return {
    tags: ["generateContent"],
    summary: `Generate (\`{model}:generateContent\`), stream (\`:streamGenerateContent\`) or count (\`:countTokens\`), ${version}`,
    description:
      "The path's last segment is the model, URL-encoded (`alpha-sonnet-4-6%20(context-1m%20beta)`; `models/` before it is allowed), a colon and the action. `:streamGenerateContent?alt=sse` streams server-sent events, one reply chunk per `data:` line; without `alt` the chunks are the elements of one JSON array.",
    security: GENERATE_KEYS,
    parameters: [query("alt", "`sse` for a server-sent event stream (`:streamGenerateContent`).", { type: "string", enum: ["sse"] })],
    requestBody: { required: true, content: json({ anyOf: [ref("GenerateRequest"), ref("GenerateCountTokensRequest")] }) },
    responses: {
      200: {
        description: "The reply (`:generateContent`), its chunks (`:streamGenerateContent`; the last carries `finishReason` and `usageMetadata`), or `{totalTokens}` (`:countTokens`).",
        headers: REQUEST_ID,
        content: { ...json({ anyOf: [ref("GenerateResponse"), ref("GenerateCountTokensResponse"), { type: "array", items: ref("GenerateResponse") }] }), "text/event-stream": { schema: ref("GenerateResponse") } },
      },
      ...errors("GenerateErrorBody"),
    },
  };
}

/** Every public route of the gateway. */
export function paths(): Json {
  const keyId = idParam("The key's id (`key_…`).");
  return {
    "/v1/chat/completions": inference({ tag: "Chat completions", summary: "Create a chat completion", request: "ChatRequest", reply: "ChatResponse", event: "ChatChunk", streamEnd: "the stream ends with `data: [DONE]`.", errorBody: "ChatErrorBody" }),
    "/v1/messages": inference({ tag: "Messages", summary: "Create a message", request: "MessagesRequest", reply: "MessagesResponse", event: "MessagesStreamEvent", streamEnd: "the `event:` line names the event's `type`; the stream ends with `message_stop`.", errorBody: "MessagesErrorBody" }),
    "/v1/messages/count_tokens": count("Count a messages request's input tokens", "CountTokensRequest", "CountTokensResponse", "MessagesErrorBody", "Messages"),
    "/v1/responses": inference({ tag: "Responses", summary: "Create a response", request: "ResponsesRequest", reply: "ResponsesResponse", event: "ResponsesStreamEvent", streamEnd: "the `event:` line names the event's `type`; the stream ends with `response.completed`, `response.incomplete` or `response.failed`.", errorBody: "ChatErrorBody" }),
    "/v1/responses/input_tokens": count("Count a Responses request's input tokens", "ResponsesRequest", "ResponsesInputTokens", "ChatErrorBody", "Responses"),
    "/v1/responses/{id}": {
      parameters: [idParam("A stored response's id (`resp_…`), of the calling key.")],
      get: { tags: ["Responses"], summary: "Get a stored response", security: INFERENCE_KEYS, responses: { ...ok("The stored response.", ref("ResponsesResponse")), ...errors("ChatErrorBody") } },
      delete: { tags: ["Responses"], summary: "Delete a stored response", security: INFERENCE_KEYS, responses: { ...ok("Deleted.", ref("ResponsesDeleted")), ...errors("ChatErrorBody") } },
    },
    "/v1/responses/{id}/input_items": {
      parameters: [idParam("A stored response's id (`resp_…`), of the calling key.")],
      get: {
        tags: ["Responses"],
        summary: "List a stored response's input items",
        security: INFERENCE_KEYS,
        parameters: [
          query("order", "`desc` (newest first, the default) or `asc`.", { type: "string", enum: ["asc", "desc"] }),
          query("limit", "Items per page, 1 to 100 (default 20).", { type: "integer", minimum: 1, maximum: 100 }),
          query("after", "The id of the item the page starts after.", { type: "string" }),
        ],
        responses: { ...ok("A page of input items.", ref("ResponsesInputItemList")), ...errors("ChatErrorBody") },
      },
    },
    "/v1/models": {
      get: { tags: ["Models"], summary: "List the models the key may call", security: INFERENCE_KEYS, responses: { ...ok("Newest first.", ref("ModelList")), ...errors("ChatErrorBody") } },
    },
    "/v1/models/{id}": {
      parameters: [{ ...idParam("A catalog model id (GET), or `{model}:{action}` of the generateContent format (POST).") }],
      get: { tags: ["Models"], summary: "Get one model", security: INFERENCE_KEYS, responses: { ...ok("The model.", ref("Model")), ...errors("ChatErrorBody") } },
      post: generateActions("v1 (the GenAI SDK's default version)"),
    },
    "/v1beta/models": {
      get: { tags: ["generateContent"], summary: "List the models the key may call, in the generateContent format's shape", security: GENERATE_KEYS, responses: { ...ok("Catalog order.", ref("GenerateModelList")), ...errors("GenerateErrorBody") } },
    },
    "/v1beta/models/{id}": {
      parameters: [{ ...idParam("A catalog model id, URL-encoded (GET), or `{model}:{action}` (POST).") }],
      get: { tags: ["generateContent"], summary: "Get one model, in the generateContent format's shape", security: GENERATE_KEYS, responses: { ...ok("The model.", ref("GenerateModel")), ...errors("GenerateErrorBody") } },
      post: generateActions("v1beta"),
    },
    "/admin/keys": {
      post: admin("Create a key (its secret is in this reply only)", { 201: { description: "Created.", content: json(ref("AdminKeyWithSecret")) } }, { requestBody: { required: true, content: json({ allOf: [ref("AdminKeyFields"), { required: ["name"] }] }) } }),
      get: admin("List keys", ok("Every key, with this month's spend.", ref("AdminKeyList"))),
    },
    "/admin/keys/{id}": {
      parameters: [keyId],
      get: admin("Get a key", ok("The key, with this month's spend.", ref("AdminKey"))),
      patch: admin("Change a key's limits (null clears one)", ok("The changed key.", ref("AdminKey")), { requestBody: { required: true, content: json(ref("AdminKeyFields")) } }),
      delete: admin("Revoke a key", ok("The revoked key.", ref("AdminRevokedKey"))),
    },
    "/admin/keys/{id}/rotate": {
      parameters: [keyId],
      post: admin("Rotate a key's secret (the old one works for `grace_seconds`, default 3600)", ok("The key with its new secret, shown this once.", ref("AdminKeyWithSecret")), { requestBody: { required: false, content: json(ref("AdminRotate")) } }),
    },
    "/admin/usage": {
      get: admin("Usage records, newest first, or totals grouped", ok("A page of records, or with `group_by` the totals per group.", { anyOf: [ref("AdminUsagePage"), ref("AdminUsageGroups")] }), {
        parameters: [
          query("key_id", "Only this key's records.", { type: "string" }),
          query("model", "Only this model's records.", { type: "string" }),
          query("since", "From this instant (ISO 8601).", { type: "string" }),
          query("until", "Before this instant (ISO 8601).", { type: "string" }),
          query("group_by", "Totals per group: any of `key`, `model`, `day`, comma-separated.", { type: "string" }),
          query("limit", "Records per page, 1 to 10000 (default 1000).", { type: "integer", minimum: 1, maximum: 10000 }),
          query("cursor", "`next_cursor` of the previous page.", { type: "string" }),
        ],
      }),
    },
    "/admin/deployments": {
      get: admin("Every model's deployments: circuit state, failures, latency (this instance's view)", ok("One row per deployment.", ref("AdminDeployments"))),
    },
    "/admin/usage/daily": {
      get: admin("Requests, tokens and cost per UTC day, one zero-filled series per model or key", ok("The days of the range and a series per model or key, biggest spender first.", ref("AdminUsageDaily")), {
        parameters: [
          query("by", "`model` (default) or `key`.", { type: "string", enum: ["model", "key"] }),
          query("since", "First day, `YYYY-MM-DD` (default: 13 days before `until`).", { type: "string", format: "date" }),
          query("until", "Last day, `YYYY-MM-DD`, included (default: today, UTC); at most 366 days in all.", { type: "string", format: "date" }),
        ],
      }),
    },
    "/admin/requests": {
      get: admin("The request log, newest first (no prompt or reply text)", ok("The newest requests.", ref("AdminRequestLog")), {
        parameters: [
          query("since", "Only requests finished at or after this instant (ISO 8601).", { type: "string" }),
          query("limit", "At most this many, 1 to 1000 (default 100).", { type: "integer", minimum: 1, maximum: 1000 }),
        ],
      }),
    },
    "/admin/models": {
      get: admin(
        "The whole catalog with prices, vendors and protocols",
        ok("Every catalog model.", {
          type: "object",
          required: ["data"],
          properties: { data: { type: "array", items: { allOf: [ref("Model"), { type: "object", required: ["vendor", "protocol"], properties: { vendor: { type: "string" }, protocol: { type: "string" } } }] } } },
        }),
      ),
    },
    "/dashboard": { get: { tags: ["Operations"], summary: "The dashboard (signed in with the admin key in the browser)", security: [], responses: html("The page; 503 with a page saying how to build it when its build is missing.") } },
    "/dashboard/{path}": {
      parameters: [{ name: "path", in: "path", required: true, description: "A file of the dashboard's build (its assets).", schema: { type: "string" } }],
      get: { tags: ["Operations"], summary: "The dashboard's assets", security: [], responses: { 200: { description: "The file." }, 404: { description: "No such file." } } },
    },
    "/health": { get: { tags: ["Operations"], summary: "The process is up", security: [], responses: ok("Up.", ref("HealthStatus")) } },
    "/ready": {
      get: {
        tags: ["Operations"],
        summary: "The instance should get traffic (its back ends answer, it is not draining)",
        security: [],
        responses: { ...ok("Ready.", ref("HealthStatus")), 503: { description: "Not ready; the body names what is missing.", content: json(ref("HealthStatus")) } },
      },
    },
    "/metrics": {
      get: {
        tags: ["Operations"],
        summary: "Prometheus metrics (behind a bearer key when `TURNPIKE_METRICS_KEY` is set)",
        security: [{}, { metrics: [] }],
        responses: { 200: { description: "The Prometheus text format.", content: { "text/plain": { schema: { type: "string" } } } }, 401: { description: "The metrics key was not sent.", content: json(ref("ChatErrorBody")) } },
      },
    },
    "/openapi.json": { get: { tags: ["Operations"], summary: "This document", security: [], responses: ok("OpenAPI 3.1.", { type: "object" }) } },
    "/docs": { get: { tags: ["Operations"], summary: "This document as a page", security: [], responses: { 200: { description: "HTML.", content: { "text/html": { schema: { type: "string" } } } } } } },
  };
}
