/**
 * Memory per open stream: opens N streaming requests that the simulator keeps open (a long
 * per-chunk latency), reads the process's RSS once every stream has its response started, and
 * subtracts the RSS it had idle. Raw sockets (Bun.connect) rather than fetch, so the client has
 * no connection cap of its own and costs little.
 */
import type { Socket } from "bun";
import { rssKib } from "./proc-stat";
import type { HttpRequestSpec } from "./scenarios";

export interface OpenStreamsResult {
  /** Streams asked for. */
  requested: number;
  /** Streams whose 200 response had started when RSS was read. */
  open: number;
  /** Streams answered with another status (e.g. 429). */
  refused: number;
  idle_rss_kib: number;
  loaded_rss_kib: number;
  per_stream_kib: number;
}

/**
 * The same request with a simulator directive that paces its stream, e.g. `latency=60000` (the
 * first chunk at once, the next a minute later) or `chunks=150 latency=100` (15 s of chunks).
 */
export function holdOpen(req: HttpRequestSpec, directive: string): HttpRequestSpec {
  const body = req.body.replace(/"hi"/g, JSON.stringify(`hi [sim ${directive}]`));
  if (body === req.body) throw new Error(`cannot place a directive in ${req.body}`);
  return { ...req, body };
}

function rawRequest(host: string, req: HttpRequestSpec): string {
  const body = Buffer.from(req.body);
  const lines = [`${req.method} ${req.path} HTTP/1.1`, `host: ${host}`];
  for (const [k, v] of Object.entries(req.headers)) lines.push(`${k}: ${v}`);
  lines.push(`content-length: ${body.byteLength}`, "", "");
  return lines.join("\r\n") + req.body;
}

export async function measureOpenStreams(opts: {
  pid: number;
  url: string;
  req: HttpRequestSpec;
  count: number;
  /** How long to wait for every stream to start (it stops sooner when no stream started for 2 s). */
  timeoutMs: number;
  /** How long after the last stream started RSS is read (streams still flowing meanwhile). */
  settleMs?: number;
}): Promise<OpenStreamsResult> {
  const { hostname, port } = new URL(opts.url);
  // Let whatever the warm-up left behind settle before reading the idle figure.
  await Bun.sleep(1000);
  const idle = rssKib(opts.pid);
  const payload = rawRequest(`${hostname}:${port}`, opts.req);
  const sockets: Socket[] = [];
  let open = 0;
  let refused = 0;
  const started = new Set<Socket>();
  let allOpen: () => void = () => {};
  const opened = new Promise<void>((r) => (allOpen = r));
  for (let i = 0; i < opts.count; i++) {
    const s = await Bun.connect({
      hostname,
      port: Number(port),
      socket: {
        data(socket, chunk) {
          if (started.has(socket)) return;
          started.add(socket);
          if (chunk.toString("latin1", 0, 12) === "HTTP/1.1 200") open++;
          else if (refused++ === 0)
            console.error(`  open streams: a stream was refused: ${chunk.toString("utf8", 0, 300)}`);
          if (open + refused === opts.count) allOpen();
        },
        error() {},
      },
    });
    s.write(payload);
    sockets.push(s);
  }
  // Wait for every stream, or until none has started for 2 s (a cap is queueing the rest).
  const deadline = Date.now() + opts.timeoutMs;
  let seen = -1;
  let stalledSince = Date.now();
  while (open + refused < opts.count && Date.now() < deadline) {
    if (open + refused !== seen) {
      seen = open + refused;
      stalledSince = Date.now();
    } else if (Date.now() - stalledSince > 2000) break;
    await Promise.race([opened, Bun.sleep(100)]);
  }
  // Give buffers and lazily made state a moment, then read.
  await Bun.sleep(opts.settleMs ?? 500);
  const loaded = rssKib(opts.pid);
  for (const s of sockets) s.end();
  const per = open > 0 ? (loaded - idle) / open : Number.NaN;
  return { requested: opts.count, open, refused, idle_rss_kib: idle, loaded_rss_kib: loaded, per_stream_kib: per };
}
