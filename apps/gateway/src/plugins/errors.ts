import { GatewayError } from "@turnpike/providers";
import { Elysia } from "elysia";
import { formatOfPath } from "../formats";
import { newRequestId } from "../pipeline/request-id";
import { errorResponse, toGatewayError } from "../pipeline/respond";
import type { Logger } from "../telemetry/logger";

/**
 * Whatever escapes a route (an unknown path, a wrong method, a thrown error) is answered in the
 * caller's own format — never Elysia's default bodies.
 */
export const errorsPlugin = (logger: Logger) =>
  new Elysia({ name: "plugin.errors" }).onError({ as: "global" }, ({ code, request, error }) => {
    const path = new URL(request.url).pathname;
    const format = formatOfPath(path, request.headers);
    const requestId = newRequestId();
    const err =
      code === "NOT_FOUND"
        ? new GatewayError({ status: 404, type: "not_found_error", message: `No route for ${request.method} ${path}.` })
        : toGatewayError(error, logger, requestId);
    return errorResponse(format, err, requestId);
  });
