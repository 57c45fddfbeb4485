import { GatewayError } from "@turnpike/providers";
import type { GatewayDeps } from "../wiring/deps";
import { modelNotFound } from "../dispatch/resolve";
import { FORMATS } from "../formats";
import { catalogIdOf, generateFormatFor, generateModels, type GenerateMode } from "../formats/generate";
import type { Connection } from "../http/client-address";
import { errorResponse, toGatewayError } from "../request/respond";
import type { Route } from "../http/route";
import { authenticate } from "../access/authenticate";
import { errors, idParam, json, ok, query, ref, REQUEST_ID, type Json } from "../openapi/operations";
import { newContext } from "../request/context";
import { type CountRoute, handleCountTokens } from "../pipeline/count-tokens";
import { handleInference } from "../pipeline/inference";
import { handleEmbeddings } from "../embeddings/handle-embeddings";
import { readJsonBody } from "../request/read-body";
import { invalid, isRecord } from "../vocabulary/client-errors";

const format = FORMATS.generate;

/**
 * The request with a `?key=` query key moved into the header the pipeline reads (the format lets
 * a key ride in the query; a header given too wins).
 */
function withQueryKey(request: Request, url: URL): Request {
  const key = url.searchParams.get("key");
  if (
    !key ||
    request.headers.has("x-goog-api-key") ||
    request.headers.has("authorization") ||
    request.headers.has("x-api-key")
  )
    return request;
  const headers = new Headers(request.headers);
  headers.set("x-goog-api-key", key);
  return new Request(request, { headers });
}

/** `:countTokens` for one model: `{contents}` or `{generateContentRequest}` in, `{totalTokens}` out. */
function countRoute(model: string): CountRoute {
  return {
    format,
    read(body) {
      const inner =
        typeof body.generateContentRequest === "object" && body.generateContentRequest !== null
          ? (body.generateContentRequest as Record<string, unknown>)
          : body; // an object: checked on the left
      const { generateContentRequest: _inner, ...request } = inner;
      const client = generateFormatFor(model, "json").validate(request);
      return { model, body: request, toPivot: (target) => client.toPivot(target).request };
    },
    reply: (totalTokens) => ({ totalTokens }),
  };
}

/** The text of one `content` of an embed request: its text parts, joined by line breaks. */
function embedText(content: unknown, where: string): string {
  const parts = isRecord(content) && Array.isArray(content.parts) ? content.parts : undefined;
  if (!parts || parts.length === 0) throw invalid(`\`${where}.parts\` must be a non-empty list of text parts.`, where);
  return parts
    .map((p, i) => {
      if (isRecord(p) && typeof p.text === "string") return p.text;
      throw invalid(`\`${where}.parts[${i}]\` is not a text part: embeddings take text only.`, `${where}.parts`);
    })
    .join("\n");
}

/**
 * An `:embedContent` (`{content, taskType?, outputDimensionality?}`) or `:batchEmbedContents`
 * (`{requests: [{model, content, taskType?, outputDimensionality?}]}`) body as the `/v1/embeddings`
 * call it is: one input per content. A batch's requests must name the path's model and share
 * their task type and size (one upstream call carries one of each).
 */
function asEmbeddingsBody(model: string, body: Record<string, unknown>, batch: boolean): Record<string, unknown> {
  const requests: unknown[] = batch
    ? Array.isArray(body.requests) && body.requests.length > 0
      ? body.requests
      : (() => {
          throw invalid("`requests` must be a non-empty list of embed requests.", "requests");
        })()
    : [body];
  const inputs: string[] = [];
  let taskType: unknown;
  let dimensions: unknown;
  requests.forEach((r, i) => {
    const at = batch ? `requests[${i}]` : "";
    if (!isRecord(r)) throw invalid(`\`${at || "body"}\` must be an object.`, at || "body");
    if (batch && r.model !== undefined && (typeof r.model !== "string" || catalogIdOf(r.model) !== model))
      throw invalid(`\`${at}.model\` must be the path's model, models/${model}.`, `${at}.model`);
    inputs.push(embedText(r.content, at ? `${at}.content` : "content"));
    if (i > 0 && (r.taskType !== taskType || r.outputDimensionality !== dimensions))
      throw invalid("Every request of one batch must have the same `taskType` and `outputDimensionality`.", at);
    taskType = r.taskType;
    dimensions = r.outputDimensionality;
  });
  return {
    model,
    input: batch ? inputs : inputs[0],
    ...(taskType !== undefined ? { task_type: taskType } : {}),
    ...(dimensions !== undefined ? { dimensions } : {}),
  };
}

/**
 * `:embedContent` and `:batchEmbedContents`: the body read as the `/v1/embeddings` call it is and
 * sent through the same embeddings path (authentication, admission, dispatch, ledger), the reply
 * given back in this format's shape (`{embedding: {values}}`, `{embeddings: [{values}]}`), an
 * error in this format's envelope.
 */
async function embedAction(
  deps: GatewayDeps,
  request: Request,
  server: Connection | null | undefined,
  model: string,
  batch: boolean,
): Promise<Response> {
  const ctx = newContext(request, format, server, deps.config.trustedProxies);
  let embeddings: Record<string, unknown>;
  try {
    const { value } = await readJsonBody(request, deps.config.maxBodyBytes, deps.config.maxBodyValues);
    embeddings = asEmbeddingsBody(model, value, batch);
  } catch (e) {
    return errorResponse(format, toGatewayError(e, deps.logger, ctx.id), {
      logger: deps.logger,
      request,
      requestId: ctx.id,
    });
  }
  const headers = new Headers(request.headers);
  headers.set("content-type", "application/json");
  headers.delete("content-length");
  const res = await handleEmbeddings(
    deps,
    new Request(new URL("/v1/embeddings", request.url), { method: "POST", headers, body: JSON.stringify(embeddings) }),
    server,
  );
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const out = new Headers(res.headers);
  out.delete("content-length");
  out.set("content-type", "application/json");
  const data = isRecord(parsed) && Array.isArray(parsed.data) ? parsed.data : undefined;
  if (res.status === 200 && data) {
    const vectors = data.map((d) => ({ values: isRecord(d) ? d.embedding : undefined }));
    return new Response(JSON.stringify(batch ? { embeddings: vectors } : { embedding: vectors[0] }), { headers: out });
  }
  // The embeddings path's refusal (already logged there), in this format's envelope.
  const error = isRecord(parsed) && isRecord(parsed.error) ? parsed.error : {};
  const err = new GatewayError({
    status: res.status === 200 ? 502 : res.status,
    type: typeof error.type === "string" ? error.type : "api_error",
    message: typeof error.message === "string" ? error.message : "The embeddings call failed.",
  });
  const rendered = format.renderError(err, res.headers.get("x-request-id") ?? ctx.id);
  return new Response(JSON.stringify(rendered.body), { status: rendered.status, headers: out });
}

/** The model and action of `/{version}/models/{model}:{action}` (the model may be URL-encoded). */
function parseAction(url: URL): { model: string; action: string } {
  const rest = url.pathname.slice(url.pathname.indexOf("/models/") + "/models/".length);
  const colon = rest.lastIndexOf(":");
  if (colon <= 0)
    throw new GatewayError({
      status: 404,
      type: "not_found_error",
      message: `No route for POST ${url.pathname}: expected /models/{model}:generateContent, :streamGenerateContent or :countTokens.`,
    });
  let model: string;
  try {
    model = decodeURIComponent(rest.slice(0, colon));
  } catch {
    throw new GatewayError({
      status: 400,
      type: "invalid_request_error",
      message: `The model in ${url.pathname} is not valid URL encoding.`,
    });
  }
  return { model: catalogIdOf(model), action: rest.slice(colon + 1) };
}

/** One POST action of the format, by the path's model and verb. */
async function generateAction(
  deps: GatewayDeps,
  request: Request,
  server: Connection | null | undefined,
): Promise<Response> {
  const url = new URL(request.url);
  let asked: { model: string; action: string };
  try {
    asked = parseAction(url);
  } catch (e) {
    const ctx = newContext(request, format, server, deps.config.trustedProxies);
    const err = toGatewayError(e, deps.logger, ctx.id);
    return errorResponse(format, err, { logger: deps.logger, request, requestId: ctx.id });
  }
  const req = withQueryKey(request, url);
  switch (asked.action) {
    case "countTokens":
      return handleCountTokens(deps, req, server, countRoute(asked.model));
    case "embedContent":
    case "batchEmbedContents":
      return embedAction(deps, req, server, asked.model, asked.action === "batchEmbedContents");
    case "generateContent":
      return handleInference(deps, req, generateFormatFor(asked.model, "json"), server);
    case "streamGenerateContent": {
      const mode: GenerateMode = url.searchParams.get("alt") === "sse" ? "sse" : "array";
      const res = await handleInference(deps, req, generateFormatFor(asked.model, mode), server);
      // Without `alt=sse` the chunks are one JSON array, sent as they come.
      if (mode === "array" && res.headers.get("content-type")?.includes("event-stream"))
        res.headers.set("content-type", "application/json; charset=utf-8");
      return res;
    }
    default: {
      const ctx = newContext(request, format, server, deps.config.trustedProxies);
      const err = new GatewayError({
        status: 404,
        type: "not_found_error",
        message: `Unknown action ":${asked.action}": Turnpike serves :generateContent, :streamGenerateContent, :countTokens, :embedContent and :batchEmbedContents.`,
      });
      return errorResponse(format, err, { logger: deps.logger, request, requestId: ctx.id });
    }
  }
}

/** The key schemes of the generateContent routes: its header, the `key` query, or a bearer token. */
const GENERATE_KEYS = [{ googApiKey: [] }, { keyQuery: [] }, { bearer: [] }];

/** `POST …/models/{model}:{action}`: the generateContent format's three actions (docs/protocols.md §6). */
function generateActions(version: string): Json {
  return {
    tags: ["generateContent"],
    summary: `Generate (\`{model}:generateContent\`), stream (\`:streamGenerateContent\`), count (\`:countTokens\`) or embed (\`:embedContent\`, \`:batchEmbedContents\`), ${version}`,
    description:
      "The path's last segment is the model, URL-encoded (`alpha-sonnet-4-6%20(context-1m%20beta)`; `models/` before it is allowed), a colon and the action. `:streamGenerateContent?alt=sse` streams server-sent events, one reply chunk per `data:` line; without `alt` the chunks are the elements of one JSON array.",
    security: GENERATE_KEYS,
    parameters: [
      idParam("`{model}:{action}`: the model URL-encoded, a colon, and the action."),
      query("alt", "`sse` for a server-sent event stream (`:streamGenerateContent`).", {
        type: "string",
        enum: ["sse"],
      }),
    ],
    requestBody: {
      required: true,
      content: json({ anyOf: [ref("GenerateRequest"), ref("GenerateCountTokensRequest")] }),
    },
    responses: {
      200: {
        description:
          "The reply (`:generateContent`), its chunks (`:streamGenerateContent`; the last carries `finishReason` and `usageMetadata`), or `{totalTokens}` (`:countTokens`).",
        headers: REQUEST_ID,
        content: {
          ...json({
            anyOf: [
              ref("GenerateResponse"),
              ref("GenerateCountTokensResponse"),
              { type: "array", items: ref("GenerateResponse") },
            ],
          }),
          "text/event-stream": { schema: ref("GenerateResponse") },
        },
      },
      ...errors("GenerateErrorBody"),
    },
  };
}

/**
 * The generateContent format's routes (docs/protocols.md §6): the key's models in the format's
 * list shape, and the three POST actions under `/v1beta/models/` and `/v1/models/` (the version
 * the GenAI SDK calls by default; `GET /v1/models` stays the other formats' list). The key comes
 * in `x-goog-api-key`, `?key=` or a bearer token.
 */
export function generateRoutes(deps: GatewayDeps): Route[] {
  const listed = async (request: Request, server: Connection | null | undefined, one: string | undefined) => {
    const url = new URL(request.url);
    const ctx = newContext(withQueryKey(request, url), format, server, deps.config.trustedProxies);
    try {
      const key = await authenticate(deps, ctx);
      const headers = format.idHeaders(ctx.id);
      if (one !== undefined) {
        const id = catalogIdOf(decodeURIComponent(one));
        const entry = deps.catalog.get(id);
        if (!entry || !deps.keys.allows(key, id)) throw modelNotFound(id);
        return Response.json(generateModels.one(entry), { headers });
      }
      const entries = deps.catalog.all().filter((e) => deps.keys.allows(key, e.id));
      return Response.json(generateModels.list(entries), { headers });
    } catch (e) {
      return errorResponse(format, toGatewayError(e, deps.logger, ctx.id), {
        logger: deps.logger,
        request,
        requestId: ctx.id,
      });
    }
  };
  const action = ({ request, server }: { request: Request; server: Connection | null }) =>
    generateAction(deps, request, server);
  return [
    {
      method: "GET",
      path: "/v1beta/models",
      doc: {
        tags: ["generateContent"],
        summary: "List the models the key may call, in the generateContent format's shape",
        security: GENERATE_KEYS,
        responses: { ...ok("Catalog order.", ref("GenerateModelList")), ...errors("GenerateErrorBody") },
      },
      handle: ({ request, server }) => listed(request, server, undefined),
    },
    {
      method: "GET",
      path: "/v1beta/models/{id}",
      rest: true,
      doc: {
        tags: ["generateContent"],
        summary: "Get one model, in the generateContent format's shape",
        security: GENERATE_KEYS,
        parameters: [idParam("A catalog model id, URL-encoded (`models/` before it is allowed).")],
        responses: { ...ok("The model.", ref("GenerateModel")), ...errors("GenerateErrorBody") },
      },
      // The raw path, so that an encoded model id is decoded exactly once.
      handle: ({ request, server }) =>
        listed(request, server, new URL(request.url).pathname.slice("/v1beta/models/".length)),
    },
    { method: "POST", path: "/v1beta/models/{id}", rest: true, doc: generateActions("v1beta"), handle: action },
    {
      method: "POST",
      path: "/v1/models/{id}",
      rest: true,
      doc: generateActions("v1 (the GenAI SDK's default version)"),
      handle: action,
    },
  ];
}
