import { dashboardRoutes } from "../../src/admin/dashboard";
import type { GatewayDeps } from "../../src/wiring/deps";
import { mount } from "../../src/http/route";
import { healthRoutes } from "../../src/routes/health";

/** One concern's routes on an Elysia instance of their own, for tests that call them without a whole gateway. */
export const healthModule = (deps: GatewayDeps) => mount(healthRoutes(deps), "module.health");
export const dashboardModule = (dir?: string) => mount(dashboardRoutes(dir), "module.dashboard");
