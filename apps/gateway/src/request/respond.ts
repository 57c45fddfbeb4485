import { GatewayError } from "@turnpike/providers";
import type { ClientFormat } from "../formats";
import type { Logger } from "../log/logger";
import { logRefusal, type Refusal } from "./refusal-log";
import { SSE_HEADERS } from "../http/headers";

/** Any thrown value as a GatewayError; unknown failures are logged and become a 500 that names no internals. */
export function toGatewayError(e: unknown, logger: Logger, requestId: string): GatewayError {
  if (e instanceof GatewayError) return e;
  logger.error("unexpected error", { request_id: requestId }, e);
  return new GatewayError({
    status: 500,
    type: "api_error",
    message: "Internal error in Turnpike; the request was not completed.",
  });
}

/**
 * A complete JSON error in the caller's own format, never an SSE body, and its one log line
 * (request/refusal-log.ts). `reply`: the headers the reply would have carried (the request's
 * routing and limits); the error's own win over them.
 */
export function errorResponse(format: ClientFormat, err: GatewayError, refusal: Refusal, reply?: Headers): Response {
  const { requestId } = refusal;
  const { status, body } = format.renderError(err, requestId);
  logRefusal(refusal, status, err, body);
  if (!reply)
    return new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json", ...format.idHeaders(requestId), ...err.headers },
    });
  const headers = new Headers(reply);
  for (const k in SSE_HEADERS) headers.delete(k);
  headers.set("content-type", "application/json");
  for (const k in err.headers) headers.set(k, err.headers[k]!);
  return new Response(JSON.stringify(body), { status, headers });
}
