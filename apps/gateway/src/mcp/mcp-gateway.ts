import type { GatewayDeps } from "../wiring/deps";
import { admitUnpriced } from "../limits/admit-read";
import type { KeyRecord } from "../storage/store";
import { API_VERSION } from "../vocabulary/api-version";
import { CallMeter } from "./call-meter";
import { SessionHosts } from "./session-hosts";
import { sessionServer } from "./session-server";
import { MemoryMcpSessions, type McpSessionStore } from "../tools/session-store";
import { ToolAllowList } from "../tools/tool-allow-list";
import { UpstreamPool } from "./upstream-pool";

/** The MCP gateway's parts, built once per app: the upstreams, the sessions, the meter. */
export interface McpGateway {
  pool: UpstreamPool;
  hosts: SessionHosts;
  close(): Promise<void>;
}

/**
 * Wires the MCP pipeline (authenticate → check the name → authorise → admit → forward → meter)
 * onto the gateway's shared keys, limiter, budgets, ledger, hooks, metrics and logger.
 */
export function buildMcpGateway(
  deps: GatewayDeps,
  sessions: McpSessionStore = deps.mcpSessions ?? new MemoryMcpSessions(deps.now),
): McpGateway {
  const { config, logger } = deps;
  const pool = new UpstreamPool(config.mcp.servers, {
    fetch: deps.fetch,
    logger,
    version: API_VERSION,
    // Called only once an upstream is connected, long after `hosts` below exists.
    onListChanged: (_server, kind) => hosts.listChanged(kind),
  });
  const services = {
    pool,
    allow: new ToolAllowList(),
    admit: (key: KeyRecord) => admitUnpriced(deps, key),
    meter: new CallMeter(deps.ledger, logger, deps.metrics.registry, deps.now, deps.hooks),
    config: config.mcp,
    guardrails: config.guardrails,
    logger,
    version: API_VERSION,
  };
  const hosts = new SessionHosts(sessions, (key) => sessionServer(services, key), logger);
  // A drain's grace is over: the sessions' notification streams end here (clients reopen them elsewhere).
  deps.shutdown?.addEventListener("abort", () => void hosts.close(), { once: true });
  return {
    pool,
    hosts,
    async close() {
      await hosts.close();
      await pool.close();
    },
  };
}
