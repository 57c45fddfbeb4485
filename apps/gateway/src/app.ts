import { Elysia } from "elysia";
import type { GatewayDeps } from "./deps";
import { adminModule } from "./modules/admin";
import { chatModule } from "./modules/chat";
import { healthModule } from "./modules/health";
import { messagesModule } from "./modules/messages";
import { modelsModule } from "./modules/models";
import { errorsPlugin } from "./plugins/errors";

/**
 * The whole route map on one screen. The server's idle timeout is raised to Bun's maximum
 * (255 s; Bun's default of 10 s, Elysia's of 30 s, cut a quiet stream — oven-sh/bun#27479), and
 * streams send keep-alives well inside it.
 */
export const createApp = (deps: GatewayDeps) =>
  new Elysia({ name: "turnpike", serve: { idleTimeout: deps.config.idleTimeoutSeconds } })
    .use(errorsPlugin(deps.logger))
    .use(healthModule)
    .use(modelsModule(deps))
    .use(messagesModule(deps))
    .use(chatModule(deps))
    .use(adminModule(deps));

export type App = ReturnType<typeof createApp>;
