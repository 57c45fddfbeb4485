import { GatewayError } from "@turnpike/providers";
import { Elysia } from "elysia";
import { formatOfPath } from "../formats";
import { newRequestId } from "../http/request-id";
import { errorResponse, toGatewayError } from "./respond";
import type { Logger } from "../log/logger";

/**
 * The most header bytes (names and values) a request may carry. The start command lets Bun's
 * parser take up to 1 MiB (its own default of 16 KiB answers a bare 431 before any route runs),
 * so that this limit is the one a client meets, answered in its own format.
 */
export const MAX_HEADER_BYTES = 64 * 1024;

/** By `forEach`: the iterator makes a pair per header, which cost about 2 % of a JSON request's CPU (bench/README.md). */
function headerBytes(headers: Headers): number {
  let n = 0;
  headers.forEach((v, k) => {
    n += k.length + v.length + 4;
  });
  return n;
}

/** The 431 for a request whose headers pass MAX_HEADER_BYTES, in the caller's format; undefined for any other. */
export function oversizedHeaders(request: Request, logger: Logger): Response | undefined {
  const size = headerBytes(request.headers);
  if (size <= MAX_HEADER_BYTES) return undefined;
  const path = new URL(request.url).pathname;
  const err = new GatewayError({
    status: 431,
    type: "invalid_request_error",
    code: "request_header_fields_too_large",
    message: `Request headers are ${size} bytes, more than this gateway's limit of ${MAX_HEADER_BYTES}.`,
  });
  return errorResponse(formatOfPath(path, request.headers), err, { logger, request, requestId: newRequestId() });
}

/**
 * Whatever escapes a route (an unknown path, a wrong method, a thrown error) is answered in the
 * caller's own format — never Elysia's default bodies — and so are oversized headers.
 */
export const errorsPlugin = (logger: Logger) =>
  new Elysia({ name: "plugin.errors" })
    .onRequest(({ request }) => oversizedHeaders(request, logger))
    .onError({ as: "global" }, ({ code, request, error }) => {
      const path = new URL(request.url).pathname;
      const format = formatOfPath(path, request.headers);
      const requestId = newRequestId();
      // Only a model lookup says `model_not_found`; an unknown route says what it is.
      const err =
        code === "NOT_FOUND"
          ? new GatewayError({
              status: 404,
              type: "not_found_error",
              code: "unknown_route",
              message: `No route for ${request.method} ${path}.`,
            })
          : toGatewayError(error, logger, requestId);
      return errorResponse(format, err, { logger, request, requestId });
    });
