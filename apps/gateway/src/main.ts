import { bootGateway } from "./boot";
import { loadConfig } from "./config/config";
import { ConfigError } from "./vocabulary/config-error";
import { showOnce, terminalOf } from "./keys/show-once";

// Boot only: config → store → app.listen(). Every line it writes is a JSON log line; a secret
// made at start goes to a terminal only (keys/show-once.ts).
/** A start that cannot go on (bad configuration, an unreachable store): one JSON line, then exit 1. */
function fatal(e: unknown): never {
  // A mistake of the configuration is the operator's to fix: every one of them, no stack trace.
  const line =
    e instanceof ConfigError
      ? {
          level: "fatal",
          time: new Date().toISOString(),
          msg: `Turnpike cannot start: ${e.problems.length === 1 ? "a mistake" : `${e.problems.length} mistakes`} in the configuration: ${e.problems.join("; ")}`,
          problems: e.problems,
        }
      : { level: "fatal", time: new Date().toISOString(), msg: e instanceof Error ? e.message : String(e) };
  process.stderr.write(`${JSON.stringify(line)}\n`);
  process.exit(1);
}

const config = (() => {
  try {
    return loadConfig();
  } catch (e) {
    return fatal(e);
  }
})();
const gw = await bootGateway(config).catch(fatal);
try {
  // Bun's server shares a port another process already listens on when both ask (SO_REUSEPORT),
  // and Elysia asks by default: a second gateway would then take part of the first one's traffic.
  // Shared only when the operator says so (TURNPIKE_SHARE_PORT=on).
  gw.app.listen({ port: config.port, hostname: config.host, reusePort: config.sharePort });
} catch (e) {
  fatal(
    (e as { code?: unknown }).code === "EADDRINUSE" // Bun.serve's error when the bind is refused
      ? new Error(
          `Turnpike cannot start: ${config.host}:${config.port} is already in use by another process. Stop it, choose another PORT, or set TURNPIKE_SHARE_PORT=on on every gateway that is to share the port (site/operations/scale-out.md "Running several instances").`,
        )
      : e,
  );
}
const server = gw.app.server!;
const url = `http://${config.host === "0.0.0.0" ? "localhost" : config.host}:${server.port}`;
const log = gw.deps.logger;

if (gw.simulated.length) {
  log.info(
    `Simulator: ${gw.simulated.join(", ")} served by the built-in simulator at ${gw.simulator?.url} (no API key set for them).`,
    {
      simulated: gw.simulated.join(","),
      simulator_url: gw.simulator?.url,
    },
  );
}
if (config.mcp.servers.length)
  log.info(`MCP: ${config.mcp.servers.map((s) => s.name).join(", ")} at ${url}/mcp (site/guide/mcp.md "MCP").`, {
    mcp_servers: config.mcp.servers.map((s) => s.name).join(","),
  });
showOnce(gw, { logger: log, terminal: terminalOf(), firstKeyFile: process.env.TURNPIKE_FIRST_KEY_FILE || undefined });
log.info(gw.deps.backends?.summary ?? "Back ends: store SQLite (embedded), limits in process memory.");
const ready = await gw.deps.backends?.report();
if (ready && !ready.ready)
  log.warn("Not ready yet (GET /ready reports it until then).", { ready: JSON.stringify(ready) });
log.info(`Turnpike listening on ${url}`, { url });

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  log.info(`Draining: /ready answers 503; open requests have up to ${config.drainSeconds} s to finish.`, {
    drain_seconds: config.drainSeconds,
  });
  await gw.drain(config.drainSeconds * 1000);
  process.exit(0);
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
