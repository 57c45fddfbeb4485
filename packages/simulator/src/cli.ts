#!/usr/bin/env bun
/**
 * `bun src/cli.ts [--port 4010] [--host 127.0.0.1] [--latency 5] [--first-byte 0] [--chunks 50]`
 * Starts the simulator and prints its URL on stdout (the benchmark reads that line).
 */
import { parseArgs } from "node:util";
import { startSimulator } from "./start-simulator";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "4010" },
    host: { type: "string", default: "127.0.0.1" },
    latency: { type: "string", default: "0" },
    "first-byte": { type: "string", default: "0" },
    chunks: { type: "string", default: "12" },
    capture: { type: "string", default: "0" },
  },
});

function whole(name: string, v: string | undefined): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--${name} must be a whole number, got ${v}`);
    process.exit(2);
  }
  return n;
}

const sim = await startSimulator({
  port: whole("port", values.port),
  hostname: values.host,
  latencyMs: whole("latency", values.latency),
  firstByteMs: whole("first-byte", values["first-byte"]),
  chunks: Math.max(1, whole("chunks", values.chunks)),
  captureLimit: whole("capture", values.capture),
});
console.log(sim.url);
const stop = () => void sim.stop().then(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
