import type { GatewayDeps } from "../wiring/deps";
import type { Route } from "../http/route";
import { json, ok, ref } from "../openapi/operations";
import { EmbeddedBackends } from "../storage/backends";
import { VERSION } from "../vocabulary/version";

/**
 * For load balancers: `GET /health` says the process is up and serving (and which release it runs); `GET /ready` says it
 * should get traffic — its store and Redis answer and it is not shutting down — with a 503 and the
 * same JSON when not, naming what is missing.
 */
export function healthRoutes(deps: GatewayDeps): Route[] {
  const backends = deps.backends ?? new EmbeddedBackends();
  return [
    {
      method: "GET",
      path: "/health",
      doc: {
        tags: ["Operations"],
        summary: "The process is up",
        security: [],
        responses: ok("Up.", ref("HealthStatus")),
      },
      handle: () => Response.json({ status: "ok", version: VERSION }),
    },
    {
      method: "GET",
      path: "/ready",
      doc: {
        tags: ["Operations"],
        summary: "The instance should get traffic (its back ends answer, it is not draining)",
        security: [],
        responses: {
          ...ok("Ready.", ref("HealthStatus")),
          503: { description: "Not ready; the body names what is missing.", content: json(ref("HealthStatus")) },
        },
      },
      handle: async () => {
        const report = await backends.report();
        return Response.json(
          { status: report.ready ? "ready" : "not_ready", ...report },
          { status: report.ready ? 200 : 503 },
        );
      },
    },
  ];
}
