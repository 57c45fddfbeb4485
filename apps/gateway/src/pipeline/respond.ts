import { GatewayError } from "@turnpike/providers";
import type { ClientFormat } from "../formats";
import type { Logger } from "../telemetry/logger";

/** Any thrown value as a GatewayError; unknown failures are logged and become a 500 that names no internals. */
export function toGatewayError(e: unknown, logger: Logger, requestId: string): GatewayError {
  if (e instanceof GatewayError) return e;
  logger.error("unexpected error", { request_id: requestId }, e);
  return new GatewayError({ status: 500, type: "api_error", message: "Internal error in Turnpike; the request was not completed." });
}

/** A complete JSON error in the caller's own format, never an SSE body. */
export function errorResponse(format: ClientFormat, err: GatewayError, requestId: string, extra: Record<string, string> = {}): Response {
  const { status, body } = format.renderError(err, requestId);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    ...format.idHeaders(requestId),
    ...(err.headers ?? {}),
    ...extra,
  };
  return new Response(JSON.stringify(body), { status, headers });
}
