import type { GatewayDeps } from "../deps";
import { FORMATS, type ClientFormat } from "../formats";
import { errorResponse, toGatewayError } from "../http/respond";
import { newRequestId } from "../http/request-id";
import type { Handler, Route } from "../http/route";
import { count, inference } from "../openapi/operations";
import { handleCountTokens, RESPONSES_COUNT } from "../pipeline/count-tokens";
import { handleInference } from "../pipeline/inference";

/**
 * An inference route of one client format: the format is named here, once, and travels from
 * here in the request's context. Anything that escapes the pipeline gets its 500 in that format.
 */
function inferenceHandler(deps: GatewayDeps, format: ClientFormat): Handler {
  return ({ request, server }) =>
    handleInference(deps, request, format, server).catch((e: unknown) => {
      const requestId = newRequestId();
      return errorResponse(format, toGatewayError(e, deps.logger, requestId), { logger: deps.logger, request, requestId });
    });
}

/**
 * The inference and token-count routes of the three client formats, and `HEAD /`: the
 * connectivity check that coding agents of the messages format make against their base URL
 * before the first call (answered without a key: it tells only that something is listening).
 * The inference POSTs are served from Bun's router directly (`direct`).
 */
export function inferenceRoutes(deps: GatewayDeps): Route[] {
  return [
    {
      method: "POST",
      path: "/v1/chat/completions",
      direct: true,
      doc: inference({ tag: "Chat completions", summary: "Create a chat completion", request: "ChatRequest", reply: "ChatResponse", event: "ChatChunk", streamEnd: "the stream ends with `data: [DONE]`.", errorBody: "ChatErrorBody" }),
      handle: inferenceHandler(deps, FORMATS.chat),
    },
    {
      method: "POST",
      path: "/v1/messages",
      direct: true,
      doc: inference({ tag: "Messages", summary: "Create a message", request: "MessagesRequest", reply: "MessagesResponse", event: "MessagesStreamEvent", streamEnd: "the `event:` line names the event's `type`; the stream ends with `message_stop`.", errorBody: "MessagesErrorBody" }),
      handle: inferenceHandler(deps, FORMATS.messages),
    },
    {
      method: "POST",
      path: "/v1/messages/count_tokens",
      doc: count("Count a messages request's input tokens", "CountTokensRequest", "CountTokensResponse", "MessagesErrorBody", "Messages"),
      handle: ({ request, server }) => handleCountTokens(deps, request, server),
    },
    {
      method: "POST",
      path: "/v1/responses",
      direct: true,
      doc: inference({ tag: "Responses", summary: "Create a response", request: "ResponsesRequest", reply: "ResponsesResponse", event: "ResponsesStreamEvent", streamEnd: "the `event:` line names the event's `type`; the stream ends with `response.completed`, `response.incomplete` or `response.failed`.", errorBody: "ChatErrorBody" }),
      handle: inferenceHandler(deps, FORMATS.responses),
    },
    {
      method: "POST",
      path: "/v1/responses/input_tokens",
      doc: count("Count a Responses request's input tokens", "ResponsesRequest", "ResponsesInputTokens", "ChatErrorBody", "Responses"),
      handle: ({ request, server }) => handleCountTokens(deps, request, server, RESPONSES_COUNT),
    },
    { method: "HEAD", path: "/", handle: () => new Response(null, { status: 200 }) },
  ];
}
