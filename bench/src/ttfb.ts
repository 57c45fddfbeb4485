/**
 * Time to first byte of streams: N sequential streaming requests (one keep-alive connection),
 * each timed from the call to the first body chunk, then read to the end. wrk only sees whole
 * responses, so this small loop measures what a streaming client waits for before text appears.
 */
import type { HttpRequestSpec } from "./scenarios";
import { percentile } from "./stats";

export interface TtfbResult {
  p50_ms: number;
  p99_ms: number;
  samples: number;
}

async function once(url: string, req: HttpRequestSpec): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url + req.path, { method: req.method, headers: req.headers, body: req.body });
  if (!res.ok || !res.body)
    throw new Error(`${url}${req.path} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  const reader = res.body.getReader();
  let first = Number.NaN;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (Number.isNaN(first) && value.byteLength > 0) first = performance.now() - t0;
  }
  if (Number.isNaN(first)) throw new Error(`${url}${req.path} sent an empty stream`);
  return first;
}

export async function measureTtfb(
  url: string,
  req: HttpRequestSpec,
  opts: { samples: number; warmup: number },
): Promise<TtfbResult> {
  for (let i = 0; i < opts.warmup; i++) await once(url, req);
  const times: number[] = [];
  for (let i = 0; i < opts.samples; i++) times.push(await once(url, req));
  return { p50_ms: percentile(times, 50), p99_ms: percentile(times, 99), samples: times.length };
}
