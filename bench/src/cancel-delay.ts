/**
 * How soon a client's leaving reaches the upstream (issue 43: within 100 ms): the gateway runs as
 * deployed (`bun src/main.ts`, its own process and core), every vendor pointed at a closing
 * upstream of this process — a real socket that records when each call's connection closed
 * (apps/gateway/test/support/closing-upstream.ts). For every client format (the Responses one
 * over HTTP and over its WebSocket) × every upstream protocol × the moment the client leaves
 * (before the upstream's head, before its first byte, mid-stream), `--rounds` streams are left
 * and the time from the client's leaving to the upstream connection's close is read; so are JSON
 * replies over HTTP (before the head, and after a head whose body is late).
 *
 *   bun src/cancel-delay.ts [--rounds N] [--only TEXT] [--gateway-dir DIR]   (from bench/)
 *
 * Prints one line per cell (median and max, ms) and the whole run's p50, p99 and max; a cell
 * whose max passes 100 ms is marked. Exits 1 if a call was never closed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { GATEWAY_DIR } from "./processes";
import { createGatewayKey, startGatewayProcess } from "./services";
import { percentile } from "./stats";

const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    only: { type: "string" },
    "gateway-dir": { type: "string" },
  },
});
const rounds = Number(args.rounds);
const dir = resolve(args["gateway-dir"] ?? GATEWAY_DIR);
/** The issue's bound: the upstream sees its connection closed within this long. */
const BOUND_MS = 100;

type UpstreamModule = typeof import("../../apps/gateway/test/support/closing-upstream");
type ClientModule = typeof import("../../apps/gateway/test/support/leaving-client");
const { startClosingUpstream, closingUpstreamEnv } = (await import(
  `${dir}/test/support/closing-upstream.ts`
)) as UpstreamModule;
const { LEAVING_FORMATS, MODEL_OF, PHASES, leaveAndTime } = (await import(
  `${dir}/test/support/leaving-client.ts`
)) as ClientModule;

const up = await startClosingUpstream();
const work = mkdtempSync(join(tmpdir(), "turnpike-cancel-"));
const { TURNPIKE_CONFIG: _, ...vendors } = closingUpstreamEnv(up.url, "");
const gw = await startGatewayProcess(
  up.url,
  join(work, "gateway.db"),
  0,
  [],
  { ...vendors, TURNPIKE_CONFIG: `${dir}/test/conformance/responses-vendor.json`, TURNPIKE_LOG_LEVEL: "error" },
  dir,
  undefined,
  process.execPath,
);
const at = { url: gw.url, key: await createGatewayKey(gw) };
const all: number[] = [];
let unclosed = 0;
try {
  const protocols = Object.keys(MODEL_OF) as (keyof typeof MODEL_OF)[];
  console.log(`cancel delay: client leaves → upstream connection closed, ms (${rounds} rounds a cell)`);
  // Streams in every format; JSON replies over HTTP (before the head, and after it with the body late).
  const cells = LEAVING_FORMATS.flatMap((format) =>
    protocols.flatMap((upstream) => [
      ...PHASES.map((phase) => ({ format, upstream, phase, stream: true })),
      ...(format === "responses-ws"
        ? []
        : PHASES.filter((p) => p !== "mid-stream").map((phase) => ({ format, upstream, phase, stream: false }))),
    ]),
  );
  for (const { format, upstream, phase, stream } of cells) {
    const kind = format.replace("-ws", "") === upstream ? "passthrough" : "translated";
    const name = `${format} ← ${upstream} (${kind}${stream ? "" : ", JSON"}), ${phase}`;
    if (args.only && !name.includes(args.only)) continue;
    const ms: number[] = [];
    for (let i = 0; i < rounds; i++) {
      try {
        ms.push((await leaveAndTime(at, up, format, upstream, phase, stream)).delayMs);
      } catch (e) {
        unclosed++;
        console.log(`  ${name}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    all.push(...ms);
    const max = Math.max(...ms);
    console.log(
      `${name.padEnd(68)} median ${percentile(ms, 50).toFixed(1).padStart(6)}  max ${max.toFixed(1).padStart(6)}${max > BOUND_MS ? `  over ${BOUND_MS} ms` : ""}`,
    );
  }
  console.log(
    `all ${all.length}: p50 ${percentile(all, 50).toFixed(1)} ms, p99 ${percentile(all, 99).toFixed(1)} ms, max ${Math.max(...all).toFixed(1)} ms; over ${BOUND_MS} ms: ${all.filter((x) => x > BOUND_MS).length}; never closed: ${unclosed}`,
  );
} finally {
  await gw.stop();
  await up.stop();
  rmSync(work, { recursive: true, force: true });
}
process.exit(unclosed ? 1 : 0);
