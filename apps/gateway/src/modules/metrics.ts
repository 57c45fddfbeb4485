import { GatewayError } from "@turnpike/providers";
import { Elysia } from "elysia";
import type { GatewayDeps } from "../deps";
import { FORMATS } from "../formats";
import { isAdminKey } from "../keys/admin-key";
import { newRequestId } from "../pipeline/request-id";
import { errorResponse } from "../pipeline/respond";

/**
 * `GET /metrics`: the Prometheus text format. Open unless `TURNPIKE_METRICS_KEY` is set, then
 * behind `Authorization: Bearer <key>` (compared as the admin key is: in constant time).
 */
export const metricsModule = (deps: GatewayDeps) => {
  const key = deps.config.ops.metricsKey;
  return new Elysia({ name: "module.metrics" }).get("/metrics", async ({ request }) => {
    if (key !== undefined && !isAdminKey((request.headers.get("authorization") ?? "").replace(/^bearer\s+/i, ""), key)) {
      const err = new GatewayError({ status: 401, type: "authentication_error", message: "Metrics: send `Authorization: Bearer $TURNPIKE_METRICS_KEY`." });
      return errorResponse(FORMATS.chat, err, { logger: deps.logger, request, requestId: newRequestId() });
    }
    return new Response(await deps.metrics.text(), { headers: { "content-type": deps.metrics.contentType } });
  });
};
