import { Elysia } from "elysia";
import type { GatewayDeps } from "./wiring/deps";
import { errorsPlugin, oversizedHeaders } from "./request/errors";
import { directRoutes, mount } from "./http/route";
import { buildMcpGateway } from "./mcp/mcp-gateway";
import { routeTable } from "./routes/table";

/**
 * The server: the route table (routes/table.ts) on Elysia, and its `direct` routes (the
 * inference POSTs) also on Bun's router, which Elysia merges over its own routes for the same
 * path and method — so those calls skip Elysia's per-request context and hooks, which they do not
 * use; what Elysia's hooks do for the others (oversized headers get their 431, anything that
 * escapes its 500, in the caller's format) their handlers and `oversizedHeaders` do. The server's
 * idle timeout is raised to Bun's maximum (255 s; Bun's default of 10 s, Elysia's of 30 s, cut a
 * quiet stream; decisions/0002), and streams send keep-alives well inside it.
 */
export const createApp = (deps: GatewayDeps, mcp = buildMcpGateway(deps)) => {
  const routes = routeTable(deps, mcp);
  return (
    new Elysia({
      name: "turnpike",
      // Bun's own body cap (128 MiB by default) answers a bare 413 with no body before any route
      // runs; lifted, so that every route reads the body itself against TURNPIKE_MAX_BODY_MB and
      // answers in the caller's format (request/read-body.ts).
      serve: {
        idleTimeout: deps.config.idleTimeoutSeconds,
        maxRequestBodySize: Number.MAX_SAFE_INTEGER,
        routes: directRoutes(routes, (request) => oversizedHeaders(request, deps.logger)),
      },
      // The Responses WebSocket transport: a frame may be as large as a request body; agents offer compression.
      websocket: {
        maxPayloadLength: deps.config.maxBodyBytes,
        perMessageDeflate: true,
        idleTimeout: deps.config.idleTimeoutSeconds,
      },
    })
      .use(errorsPlugin(deps.logger))
      .use(mount(routes))
      // The MCP gateway's upstream connections and sessions end with the server.
      .onStop(() => mcp.close())
  );
};

export type App = ReturnType<typeof createApp>;
