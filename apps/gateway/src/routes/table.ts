import { adminRoutes } from "../admin/admin-routes";
import { dashboardRoutes } from "../admin/dashboard";
import { embeddingsRoutes } from "./embeddings";
import { batchRoutes } from "./batches";
import type { GatewayDeps } from "../wiring/deps";
import type { Route } from "../http/route";
import type { McpGateway } from "../mcp/mcp-gateway";
import { mcpRoutes } from "./mcp";
import { openapiRoutes } from "./openapi";
import { storedResponseRoutes } from "./stored-responses";
import { metricsRoutes } from "./metrics";
import { generateRoutes } from "./generate";
import { teamRoutes } from "./teams";
import { signOnRoutes } from "./sign-on";
import { healthRoutes } from "./health";
import { inferenceRoutes } from "./inference";
import { modelRoutes } from "./models";

/**
 * Every route of the gateway, each declared once by its concern with its handler and its
 * operation in the description document. The app serves this table (app.ts) and `/openapi.json`
 * is generated from it, in this order.
 */
export function routeTable(deps: GatewayDeps, mcp: McpGateway): readonly Route[] {
  // Dashboard sign-in, when an identity provider is configured: its session is a way into the admin API.
  const signOn = deps.config.signOn ? signOnRoutes(deps, deps.config.signOn) : undefined;
  const table: Route[] = [
    ...inferenceRoutes(deps),
    ...generateRoutes(deps),
    ...embeddingsRoutes(deps),
    ...batchRoutes(deps),
    ...storedResponseRoutes(deps),
    ...modelRoutes(deps),
    ...adminRoutes(deps, signOn?.session),
    ...teamRoutes(deps, signOn?.session),
    ...(signOn?.routes ?? []),
    ...dashboardRoutes(),
    ...healthRoutes(deps),
    ...metricsRoutes(deps),
    ...mcpRoutes(deps, mcp),
    ...openapiRoutes(deps, () => table),
  ];
  return table;
}
