/**
 * Memory per open stream of the gateway and of the bare proxy, each on a fresh process (one
 * that carried the load runs holds their heap): warm the stream path, read idle RSS, hold
 * `count` streams open, read RSS again.
 */
import { holdOpen, measureOpenStreams, type OpenStreamsResult } from "./open-streams";
import type { Service } from "./processes";
import { BASELINES, gatewayRequest, type HttpRequestSpec, type Scenario } from "./scenarios";
import { createGatewayKey, startBareProxyProcess, startGatewayProcess } from "./services";
import { measureTtfb } from "./ttfb";

/** Per-chunk delay of the held streams: long enough that none ends while RSS is read. */
const HOLD_CHUNK_MS = 60_000;

async function measureOn(svc: Service, req: HttpRequestSpec, count: number): Promise<OpenStreamsResult> {
  try {
    // Warm the code path first, so the idle figure already holds the compiled code.
    await measureTtfb(svc.url, req, { samples: 0, warmup: 300 });
    return await measureOpenStreams({ pid: svc.pid, url: svc.url, req: holdOpen(req, HOLD_CHUNK_MS), count, timeoutMs: 15_000 });
  } finally {
    await svc.stop();
  }
}

export async function measureMemory(opts: {
  scenario: Scenario;
  simulatorURL: string;
  dbPath: string;
  fetchCap: number;
  count: number;
  /** Told of each process started, so the caller can stop it if the run is cut short. */
  track: (s: Service) => void;
}): Promise<OpenStreamsResult & { scenario: string; bare_proxy: OpenStreamsResult }> {
  const gw = await startGatewayProcess(opts.simulatorURL, opts.dbPath, opts.fetchCap);
  opts.track(gw);
  const key = await createGatewayKey(gw);
  const viaGateway = await measureOn(gw, gatewayRequest(opts.scenario, key), opts.count);
  const bare = await startBareProxyProcess(opts.simulatorURL, opts.fetchCap);
  opts.track(bare);
  const viaBare = await measureOn(bare, BASELINES[opts.scenario.baseline], opts.count);
  return { ...viaGateway, scenario: opts.scenario.name, bare_proxy: viaBare };
}

