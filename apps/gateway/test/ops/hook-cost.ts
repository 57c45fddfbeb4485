/**
 * What the operations side costs a request: the pipeline's four events of one JSON request,
 * emitted with no subscriber, with the metrics alone, and with the metrics and the request log
 * (to /dev/null), per request. Run by hand: `bun test/ops/hook-cost.ts` (not a test: no timing
 * is asserted anywhere).
 */
import pino from "pino";
import { loadConfig } from "../../src/config/config";
import { FORMATS } from "../../src/formats";
import type { RequestContext } from "../../src/request/context";
import { emit, type PipelineHooks } from "../../src/request/events";
import { buildCatalog } from "../../src/dispatch/catalog";
import { buildUpstreams } from "../../src/dispatch/upstreams";
import type { UsageRecord } from "../../src/storage/store";
import { pinoLogger } from "../../src/log/logger";
import { GatewayMetrics } from "../../src/telemetry/metrics";
import { requestLog } from "../../src/telemetry/request-log";
import { RequestTrail } from "../../src/telemetry/request-trail";

const N = 200_000;
const config = loadConfig({});
const entry = buildCatalog([], config.vendors).get("beta-5.5")!;
const target = { entry, upstream: buildUpstreams(config.vendors, "http://127.0.0.1:1").get("beta")! };
const request = new Request("http://localhost/v1/chat/completions", { method: "POST" });
const contexts: RequestContext[] = Array.from({ length: N }, (_, i) => ({
  id: `req_${i}`,
  started: performance.now(),
  request,
  format: FORMATS.chat,
  server: undefined,
  address: () => "127.0.0.1",
}));
const record = (ctx: RequestContext): UsageRecord => ({
  request_id: ctx.id,
  key_id: "key_bench",
  model: "beta-5.5",
  endpoint: "chat",
  stream: false,
  input_tokens: 12,
  output_tokens: 30,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  reasoning_tokens: 0,
  cost_usd: 0.0003,
  upstream_model: "beta-5.5-2026",
  status: 200,
  upstream_status: 200,
  latency_ms: 4.2,
  aborted: false,
  estimated: false,
  created_at: "2026-11-23T00:00:00.000Z",
});
const records = contexts.map(record);

function run(label: string, hooks: PipelineHooks[]): void {
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const ctx = contexts[i]!;
    emit(hooks, "onStart", ctx);
    emit(hooks, "onAttempt", ctx, target, 1);
    emit(hooks, "onUpstreamResponse", ctx, 200, 3);
    emit(hooks, "onFinish", ctx, 200, records[i]);
  }
  console.log(`${label.padEnd(28)} ${(((performance.now() - t0) * 1000) / N).toFixed(2)} µs per request`);
}

const metrics = () => new GatewayMetrics({ ledgerPending: () => 0, processMetrics: false });
// Written as the gateway writes standard output: asynchronously.
const devNull = pino.destination({ dest: "/dev/null", sync: false });
for (let round = 0; round < 2; round++) {
  run("no subscriber", []);
  run("trail alone", [new RequestTrail([{ finished: () => {} }])]);
  run("metrics", [new RequestTrail([metrics()])]);
  run("metrics + request log", [
    new RequestTrail([
      metrics(),
      requestLog(
        pinoLogger({ level: "info", format: "json", secrets: ["sk-admin-0123456789abcdef"], destination: devNull }),
      ),
    ]),
  ]);
}
