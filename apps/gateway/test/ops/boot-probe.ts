/**
 * Boots a gateway in a process of its own and prints which OpenTelemetry packages the process
 * loaded (tracing.test.ts runs it with and without an OTLP endpoint).
 */
import { bootGateway } from "../../src/boot";
import { loadConfig } from "../../src/config/config";

const env: Record<string, string> = {
  PORT: "0",
  HOST: "127.0.0.1",
  TURNPIKE_DB: ":memory:",
  TURNPIKE_LOG_LEVEL: "silent",
};
if (process.argv[2]) env.OTEL_EXPORTER_OTLP_ENDPOINT = process.argv[2];
const gw = await bootGateway(loadConfig(env), { firstKey: false });
gw.app.listen({ port: 0, hostname: "127.0.0.1" });
// Every module the process loaded, ESM or CommonJS, is a key of the module cache.
const packages = new Set(
  Object.keys(require.cache).flatMap((path) => /node_modules\/(@opentelemetry\/[^/]+)\//.exec(path)?.[1] ?? []),
);
console.log(JSON.stringify([...packages].sort()));
await gw.close();
