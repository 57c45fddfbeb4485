import { Elysia } from "elysia";
import type { GatewayDeps } from "./deps";
import { adminModule } from "./modules/admin";
import { chatModule } from "./modules/chat";
import { dashboardModule } from "./modules/dashboard";
import { directRoutes } from "./modules/direct-routes";
import { healthModule } from "./modules/health";
import { docsModule } from "./modules/docs";
import { generateModule } from "./modules/generate";
import { messagesModule } from "./modules/messages";
import { metricsModule } from "./modules/metrics";
import { modelsModule } from "./modules/models";
import { openapiModule } from "./modules/openapi";
import { responsesModule } from "./modules/responses";
import { errorsPlugin } from "./plugins/errors";

/**
 * The whole route map on one screen. The server's idle timeout is raised to Bun's maximum
 * (255 s; Bun's default of 10 s, Elysia's of 30 s, cut a quiet stream; decisions/0002), and
 * streams send keep-alives well inside it.
 */
export const createApp = (deps: GatewayDeps) =>
  new Elysia({
    name: "turnpike",
    // Bun's own body cap (128 MiB by default) answers a bare 413 with no body before any route
    // runs; lifted, so that every route reads the body itself against TURNPIKE_MAX_BODY_MB and
    // answers in the caller's format (pipeline/read-body.ts).
    // The inference routes are served from Bun's router directly (modules/direct-routes.ts).
    serve: { idleTimeout: deps.config.idleTimeoutSeconds, maxRequestBodySize: Number.MAX_SAFE_INTEGER, routes: directRoutes(deps) },
  })
    .use(errorsPlugin(deps.logger))
    .use(healthModule(deps))
    .use(modelsModule(deps))
    .use(messagesModule(deps))
    .use(chatModule(deps))
    .use(responsesModule(deps))
    .use(generateModule(deps))
    .use(adminModule(deps))
    .use(metricsModule(deps))
    .use(openapiModule(deps))
    .use(docsModule())
    .use(dashboardModule());

export type App = ReturnType<typeof createApp>;
