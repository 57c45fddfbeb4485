import type { Server } from "bun";
import type { GatewayDeps } from "../deps";
import { FORMATS, type ClientFormat } from "../formats";
import { handleInference } from "../pipeline/inference";
import { newRequestId } from "../pipeline/request-id";
import { errorResponse, toGatewayError } from "../pipeline/respond";
import { oversizedHeaders } from "../plugins/errors";
import { responsesWebsocketRoute } from "../relay/responses-websocket";

/**
 * The three inference routes, served straight from Bun's router: Elysia merges `serve.routes`
 * over its own routes for the same path and method, so these calls skip Elysia's per-request
 * context and hook machinery (about 4 µs of CPU a request in the benchmark's profile), which they
 * do not use. What Elysia did for them is done here: oversized headers get their 431, and
 * anything that escapes the pipeline its 500, each in the caller's format. Elysia still declares
 * the routes (the description document is built from them) and answers other methods on them.
 */
export function directRoutes(deps: GatewayDeps) {
  const route = (format: ClientFormat) => (request: Request, server: Server<unknown>) =>
    oversizedHeaders(request) ??
    handleInference(deps, request, format, server).catch((e: unknown) => {
      const requestId = newRequestId();
      return errorResponse(format, toGatewayError(e, deps.logger, requestId), requestId);
    });
  return {
    "/v1/messages": { POST: route(FORMATS.messages) },
    "/v1/chat/completions": { POST: route(FORMATS.chat) },
    // GET is the WebSocket transport of the same pipeline (relay/responses-websocket.ts).
    "/v1/responses": { POST: route(FORMATS.responses), GET: responsesWebsocketRoute(deps) },
  };
}
