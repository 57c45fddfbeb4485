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

/** How the held streams flow while RSS is read. */
export interface StreamPace {
  /** The simulator directive that paces each stream. */
  directive: string;
  /** RSS is read this long after the last stream started. */
  settleMs: number;
}

/** Streams held still: the first chunk at once, the next a minute later (none ends while RSS is read). */
export const HELD: StreamPace = { directive: "latency=60000", settleMs: 500 };
/**
 * Streams that flow, as agents' long replies do: 150 chunks 100 ms apart (15 s each). RSS is
 * read 4 s after the last one started, while every stream is between chunks and still open.
 */
export const LONG: StreamPace = { directive: "chunks=150 latency=100", settleMs: 4000 };

export async function measureOn(
  svc: Service,
  req: HttpRequestSpec,
  count: number,
  pace: StreamPace,
): Promise<OpenStreamsResult> {
  try {
    // Warm the code path first, so the idle figure already holds the compiled code.
    await measureTtfb(svc.url, req, { samples: 0, warmup: 300 });
    return await measureOpenStreams({
      pid: svc.pid,
      url: svc.url,
      req: holdOpen(req, pace.directive),
      count,
      timeoutMs: 10_000,
      settleMs: pace.settleMs,
    });
  } finally {
    await svc.stop();
  }
}

export type MemoryResult = OpenStreamsResult & {
  scenario: string;
  pace: string;
  bare_proxy: OpenStreamsResult;
  /** The peer gateway's, on a fresh process, for the scenarios it serves. */
  peer?: OpenStreamsResult;
  /** The metering floor's, on a fresh process, for the scenarios it speaks (flowing streams). */
  metering_floor?: OpenStreamsResult;
};

export async function measureMemory(opts: {
  scenario: Scenario;
  simulatorURL: string;
  dbPath: string;
  fetchCap: number;
  count: number;
  pace: StreamPace;
  /** Told of each process started, so the caller can stop it if the run is cut short. */
  track: (s: Service) => void;
}): Promise<MemoryResult> {
  const gw = await startGatewayProcess(opts.simulatorURL, opts.dbPath, opts.fetchCap);
  opts.track(gw);
  const key = await createGatewayKey(gw);
  const viaGateway = await measureOn(gw, gatewayRequest(opts.scenario, key), opts.count, opts.pace);
  const bare = await startBareProxyProcess(opts.simulatorURL, opts.fetchCap);
  opts.track(bare);
  const viaBare = await measureOn(bare, BASELINES[opts.scenario.baseline], opts.count, opts.pace);
  return { ...viaGateway, scenario: opts.scenario.name, pace: opts.pace.directive, bare_proxy: viaBare };
}
