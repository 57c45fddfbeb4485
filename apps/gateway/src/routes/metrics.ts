import { GatewayError } from "@turnpike/providers";
import type { GatewayDeps } from "../wiring/deps";
import { FORMATS } from "../formats";
import { newRequestId } from "../http/request-id";
import { errorResponse } from "../request/respond";
import type { Route } from "../http/route";
import { isAdminKey } from "../keys/admin-key";
import { json, ref } from "../openapi/operations";

/**
 * `GET /metrics`: the Prometheus text format. Open unless `TURNPIKE_METRICS_KEY` is set, then
 * behind `Authorization: Bearer <key>` (compared as the admin key is: in constant time).
 */
export function metricsRoutes(deps: GatewayDeps): Route[] {
  const key = deps.config.ops.metricsKey;
  return [
    {
      method: "GET",
      path: "/metrics",
      doc: {
        tags: ["Operations"],
        summary: "Prometheus metrics (behind a bearer key when `TURNPIKE_METRICS_KEY` is set)",
        security: [{}, { metrics: [] }],
        responses: {
          200: {
            description: "The Prometheus text format.",
            content: { "text/plain": { schema: { type: "string" } } },
          },
          401: { description: "The metrics key was not sent.", content: json(ref("ChatErrorBody")) },
        },
      },
      handle: async ({ request }) => {
        if (
          key !== undefined &&
          !isAdminKey((request.headers.get("authorization") ?? "").replace(/^bearer\s+/i, ""), key)
        ) {
          const err = new GatewayError({
            status: 401,
            type: "authentication_error",
            message: "Metrics: send `Authorization: Bearer $TURNPIKE_METRICS_KEY`.",
          });
          return errorResponse(FORMATS.chat, err, { logger: deps.logger, request, requestId: newRequestId() });
        }
        return new Response(await deps.metrics.text(), { headers: { "content-type": deps.metrics.contentType } });
      },
    },
  ];
}
