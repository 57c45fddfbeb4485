import { GatewayError } from "@turnpike/providers";
import { Elysia } from "elysia";
import { dialectOfPath, errorResponse } from "../pipeline/dialect";
import { newRequestId } from "../pipeline/request-id";

/**
 * Whatever escapes a route (an unknown path, a wrong method, a thrown error) is answered in the
 * caller's own format — never Elysia's default bodies.
 */
export const errorsPlugin = new Elysia({ name: "plugin.errors" }).onError({ as: "global" }, ({ code, request, error }) => {
  const path = new URL(request.url).pathname;
  const dialect = dialectOfPath(path, request.headers);
  const requestId = newRequestId();
  if (code === "NOT_FOUND") {
    return errorResponse(
      dialect,
      new GatewayError({ status: 404, type: dialect === "messages" ? "not_found_error" : "invalid_request_error", message: `No route for ${request.method} ${path}.` }),
      requestId,
    );
  }
  return errorResponse(dialect, error instanceof GatewayError ? error : error, requestId);
});
