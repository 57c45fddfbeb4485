import { bootGateway } from "./boot";
import { type Config, loadConfig } from "./config/config";
import { ConfigError } from "./vocabulary/config-error";

// Boot only: config → store → app.listen().
let config: Config;
try {
  config = loadConfig();
} catch (e) {
  // A mistake of the configuration is the operator's to fix: every one of them, no stack trace.
  if (!(e instanceof ConfigError)) throw e;
  console.error(`Turnpike cannot start: ${e.problems.length === 1 ? "a mistake" : `${e.problems.length} mistakes`} in the configuration:\n  ${e.problems.join("\n  ")}`);
  process.exit(1);
}
const gw = await bootGateway(config);
gw.app.listen({ port: config.port, hostname: config.host });
const server = gw.app.server!;
const url = `http://${config.host === "0.0.0.0" ? "localhost" : config.host}:${server.port}`;

if (gw.simulated.length) {
  console.log(`Simulator: ${gw.simulated.join(", ")} served by the built-in simulator at ${gw.simulator?.url} (no API key set for them).`);
}
if (gw.generatedAdminKey) {
  console.log(`Admin key for this run (set TURNPIKE_ADMIN_KEY to choose your own): ${gw.generatedAdminKey}`);
}
if (gw.firstKey) {
  console.log(`First start: created API key "${gw.firstKey.id}" — it is shown only now:\n  ${gw.firstKey.secret}`);
}
if (config.mcp.servers.length) console.log(`MCP: ${config.mcp.servers.map((s) => s.name).join(", ")} at ${url}/mcp (README "MCP").`);
console.log(gw.deps.backends?.summary ?? "Back ends: store SQLite (embedded), limits in process memory.");
const ready = await gw.deps.backends?.report();
if (ready && !ready.ready) console.log(`Not ready yet: ${JSON.stringify(ready)} (GET /ready reports it until then).`);
console.log(`Turnpike listening on ${url}`);

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  console.log(`Draining: /ready answers 503; open requests have up to ${config.drainSeconds} s to finish.`);
  await gw.drain(config.drainSeconds * 1000);
  process.exit(0);
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
