import type { GatewayDeps } from "../wiring/deps";
import { FORMATS, type ClientFormat } from "../formats";
import { errorResponse, toGatewayError } from "../request/respond";
import { newRequestId } from "../http/request-id";
import type { Handler, Route } from "../http/route";
import { count, errors, inference, INFERENCE_KEYS, json, ref } from "../openapi/operations";
import { handleCountTokens, RESPONSES_COUNT } from "../pipeline/count-tokens";
import { handleInference } from "../pipeline/inference";
import { responsesWebsocketRoute } from "./responses-websocket";

/**
 * An inference route of one client format: the format is named here, once, and travels from
 * here in the request's context. Anything that escapes the pipeline gets its 500 in that format.
 */
function inferenceHandler(deps: GatewayDeps, format: ClientFormat): Handler {
  return ({ request, server }) =>
    handleInference(deps, request, format, server).catch((e: unknown) => {
      const requestId = newRequestId();
      return errorResponse(format, toGatewayError(e, deps.logger, requestId), {
        logger: deps.logger,
        request,
        requestId,
      });
    });
}

/** A connectivity check: it tells only that something is listening, so it needs no key. */
const listening = () => new Response(null, { status: 200 });

/**
 * The inference and token-count routes of the three client formats, and `HEAD /` and `HEAD /api/hello`: the
 * connectivity checks that coding agents of the messages format make against their base URL
 * before the first call (answered without a key: it tells only that something is listening).
 * The inference POSTs are served from Bun's router directly (`direct`).
 */
export function inferenceRoutes(deps: GatewayDeps): Route[] {
  const websocket = responsesWebsocketRoute(deps);
  return [
    {
      method: "POST",
      path: "/v1/chat/completions",
      direct: true,
      doc: inference({
        tag: "Chat completions",
        summary: "Create a chat completion",
        request: "ChatRequest",
        reply: "ChatResponse",
        event: "ChatChunk",
        streamEnd: "the stream ends with `data: [DONE]`.",
        errorBody: "ChatErrorBody",
      }),
      handle: inferenceHandler(deps, FORMATS.chat),
    },
    {
      method: "POST",
      path: "/v1/messages",
      direct: true,
      doc: inference({
        tag: "Messages",
        summary: "Create a message",
        request: "MessagesRequest",
        reply: "MessagesResponse",
        event: "MessagesStreamEvent",
        streamEnd: "the `event:` line names the event's `type`; the stream ends with `message_stop`.",
        errorBody: "MessagesErrorBody",
      }),
      handle: inferenceHandler(deps, FORMATS.messages),
    },
    {
      method: "POST",
      path: "/v1/messages/count_tokens",
      doc: count(
        "Count a messages request's input tokens",
        "CountTokensRequest",
        "CountTokensResponse",
        "MessagesErrorBody",
        "Messages",
      ),
      handle: ({ request, server }) => handleCountTokens(deps, request, server),
    },
    {
      method: "POST",
      path: "/v1/responses",
      direct: true,
      doc: inference({
        tag: "Responses",
        summary: "Create a response",
        request: "ResponsesRequest",
        reply: "ResponsesResponse",
        event: "ResponsesStreamEvent",
        streamEnd:
          "the `event:` line names the event's `type`; the stream ends with `response.completed`, `response.incomplete` or `response.failed`.",
        errorBody: "ChatErrorBody",
      }),
      handle: inferenceHandler(deps, FORMATS.responses),
    },
    {
      // The WebSocket transport of the same pipeline (routes/responses-websocket.ts).
      method: "GET",
      path: "/v1/responses",
      direct: true,
      doc: {
        tags: ["Responses"],
        summary: "Open the Responses WebSocket",
        description:
          'With `Upgrade: websocket`: a socket on which each `{"type": "response.create", …}` text frame (the create body; `previous_response_id` may name a reply of this socket; `generate: false` only warms) is answered with the stream\'s events, one JSON text frame each, or one `{"type": "error", "status", "error", "headers"}` frame. A frame past the socket\'s bound of frames not yet answered (the config file\'s `responses_websocket.max_queued_frames`, `max_queued_bytes`) is refused on arrival with an error frame (413 alone over the bytes, else 429); a handshake past the key\'s `max_sockets_per_key` open sockets is a 429. Without an upgrade, or with `TURNPIKE_RESPONSES_WEBSOCKET=off`: 426.',
        security: INFERENCE_KEYS,
        responses: {
          101: { description: "Switching to the WebSocket protocol." },
          426: {
            description: "Upgrade required (or the transport is off): use `POST /v1/responses`.",
            content: json(ref("ChatErrorBody")),
          },
          ...errors("ChatErrorBody"),
        },
      },
      handle: (({ request, server }) => (server ? websocket(request, server) : undefined)) satisfies Handler,
    },
    {
      method: "POST",
      path: "/v1/responses/input_tokens",
      doc: count(
        "Count a Responses request's input tokens",
        "ResponsesRequest",
        "ResponsesInputTokens",
        "ChatErrorBody",
        "Responses",
      ),
      handle: ({ request, server }) => handleCountTokens(deps, request, server, RESPONSES_COUNT),
    },
    { method: "HEAD", path: "/", handle: listening },
    // The messages-format coding agent (Claude Code 2.1.331) also asks `HEAD {base}/api/hello` at each start.
    { method: "HEAD", path: "/api/hello", handle: listening },
  ];
}
