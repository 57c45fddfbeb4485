import { Elysia } from "elysia";
import type { GatewayDeps } from "../deps";
import { EmbeddedBackends } from "../storage/backends";

/**
 * For load balancers: `GET /health` says the process is up and serving; `GET /ready` says it
 * should get traffic — its store and Redis answer and it is not shutting down — with a 503 and the
 * same JSON when not, naming what is missing.
 */
export const healthModule = (deps: GatewayDeps) => {
  const backends = deps.backends ?? new EmbeddedBackends();
  return new Elysia({ name: "module.health" })
    .get("/health", () => ({ status: "ok" }))
    .get("/ready", async () => {
      const report = await backends.report();
      return Response.json({ status: report.ready ? "ready" : "not_ready", ...report }, { status: report.ready ? 200 : 503 });
    });
};
