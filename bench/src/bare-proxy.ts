/**
 * The reference for "nothing added": a bare passthrough proxy, `Bun.serve` + `fetch`, that
 * forwards method, path, headers and body to one upstream origin and streams the reply body
 * back as it arrives. No parsing, no auth, no metering — what any gateway costs at the least.
 *
 * `bun src/bare-proxy.ts --port 0 --upstream http://127.0.0.1:4010` prints its URL on stdout.
 */
import { parseArgs } from "node:util";

/** Hop-by-hop headers (RFC 9110 §7.6.1) and the ones fetch sets itself. */
const DROP_REQUEST = ["host", "connection", "keep-alive", "content-length", "transfer-encoding"];
const DROP_RESPONSE = ["connection", "keep-alive", "content-length", "transfer-encoding"];

export function startBareProxy(opts: { port: number; hostname?: string; upstream: string }) {
  const upstream = opts.upstream.replace(/\/$/, "");
  return Bun.serve({
    port: opts.port,
    hostname: opts.hostname ?? "127.0.0.1",
    idleTimeout: 255,
    async fetch(req) {
      // The path and query of `http://host:port/path?q`, without building a URL object.
      const path = req.url.slice(req.url.indexOf("/", 8));
      const headers = new Headers(req.headers);
      for (const h of DROP_REQUEST) headers.delete(h);
      const res = await fetch(upstream + path, {
        method: req.method,
        headers,
        // The request body is read whole (a few hundred bytes here); the reply is streamed.
        body: req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer(),
        signal: req.signal,
        // Relay bytes as they are: no transparent decompression.
        decompress: false,
      });
      const out = new Headers(res.headers);
      for (const h of DROP_RESPONSE) out.delete(h);
      return new Response(res.body, { status: res.status, headers: out });
    },
  });
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "0" },
      host: { type: "string", default: "127.0.0.1" },
      upstream: { type: "string" },
    },
  });
  if (!values.upstream) {
    console.error("usage: bun src/bare-proxy.ts --upstream http://127.0.0.1:4010 [--port 0]");
    process.exit(2);
  }
  const server = startBareProxy({ port: Number(values.port), hostname: values.host, upstream: values.upstream });
  console.log(`http://${values.host}:${server.port}`);
  // Exit on SIGTERM rather than die of it, so that a `--cpu-prof` run writes its profile (`bun run cost`).
  process.on("SIGTERM", () => process.exit(0));
}
