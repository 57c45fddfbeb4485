/**
 * The stream relay's own work, in process: a passthrough stream's taps (first-frame guard, line
 * gate, passthrough tap) and the relayed `ReadableStream`, over the simulator's own reply bytes,
 * for one or more gateway directories at once, interleaved. CPU per stream from
 * `process.cpuUsage()`, so other work on a shared machine weighs on it far less than on `bun run
 * ab` (which loads whole gateways); what it leaves out (the request, the upstream call, the
 * record) is in `ab`'s figures only.
 *
 *   bun src/relay-micro.ts [--rounds N] [--streams N] [--format F] DIR_A DIR_B …   (each an apps/gateway)
 *
 * `--format` picks the passthrough: `messages` (default), `responses` or `generate`, each a client
 * of that format on an upstream of the same protocol.
 *
 * A directory written `DIR@continuation` is that build with its stream read through
 * `ContinuingStream` (relay/continuing-tap.ts), as a route with `routing.continuation` on reads
 * it: the cost of continuation on a stream that is never cut.
 *
 * Shapes: `whole` (the reply in one read, as the benchmark's instant simulator gives it),
 * `chunked` (one read per frame, as a vendor's stream flows), each with the vendor answering the
 * catalog id or its own snapshot name (`-snap`).
 */
import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { createSimulatorFetch } from "@turnpike/simulator";

const { values: args, positionals: dirs } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: "string", default: "15" },
    streams: { type: "string", default: "300" },
    serve: { type: "boolean", default: false },
    c: { type: "string", default: "8" },
    format: { type: "string", default: "messages" },
  },
});
if (dirs.length === 0) throw new Error("give one or more apps/gateway directories");
/** The passthrough measured: a client of this format on an upstream of the same protocol. */
const FORMAT = args.format as "messages" | "responses" | "generate";
/** Each passthrough's catalog model and the simulator request that streams its reply. */
const CALLS: Record<typeof FORMAT, { model: string; request(model: string): [string, RequestInit] }> = {
  messages: {
    model: "alpha-haiku-4-5",
    request: (model) => [
      "http://sim/v1/messages",
      {
        headers: { "x-api-key": "k", "anthropic-version": "2023-06-01" },
        body: JSON.stringify({ model, max_tokens: 64, stream: true, messages: [{ role: "user", content: "hi" }] }),
      },
    ],
  },
  responses: {
    model: "epsilon-5",
    request: (model) => [
      "http://sim/v1/responses",
      { headers: { authorization: "Bearer k" }, body: JSON.stringify({ model, stream: true, input: "hi" }) },
    ],
  },
  generate: {
    model: "gamma-3-flash",
    request: (model) => [
      `http://sim/v1beta/models/${model}:streamGenerateContent?alt=sse`,
      {
        headers: { "x-goog-api-key": "k" },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
      },
    ],
  },
};
if (!(FORMAT in CALLS)) throw new Error("--format: messages, responses or generate");
const rounds = Number(args.rounds);
const streams = Number(args.streams);

/** The simulator's reply to the benchmark's streaming messages request, as the chunks it writes. */
async function reply(model: string, answer: string): Promise<Uint8Array[]> {
  const sim = createSimulatorFetch({ chunks: 50, answerModel: () => answer });
  const [url, init] = CALLS[FORMAT].request(model);
  const res = await sim(url, {
    ...init,
    method: "POST",
    headers: { "content-type": "application/json", ...(init.headers as Record<string, string>) },
  });
  const chunks: Uint8Array[] = [];
  for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) chunks.push(c);
  // One read per frame, cut at the blank lines, whatever the simulator's own writes were.
  const text = new TextDecoder().decode(Buffer.concat(chunks));
  return text
    .split(/(?<=\r?\n\r?\n)/)
    .filter(Boolean)
    .map((f) => new TextEncoder().encode(f));
}

const id = CALLS[FORMAT].model;
const frames = { plain: await reply(id, id), snap: await reply(id, `${id}-20251001`) };
const shapes: Record<string, Uint8Array[]> = {
  whole: [Buffer.concat(frames.plain)],
  chunked: frames.plain,
  "whole-snap": [Buffer.concat(frames.snap)],
  "chunked-snap": frames.snap,
};

interface Build {
  name: string;
  run: (chunks: Uint8Array[]) => Promise<number>;
}

/**
 * `--serve`: each stream goes through real sockets, as in the gateway: the upstream is a server
 * of this process answering the shape's chunks (each written as it comes), the build's relay
 * reads `fetch`'s body and is the body of its own server's `Response`, and a client reads it to
 * its end, `--c` streams at a time. The server's own way of pulling the relayed stream (and the
 * upstream body's native reader) is then in the figures, which the in-memory mode leaves out.
 */
let shapeNow: Uint8Array[] = [];
const upstream = args.serve
  ? Bun.serve({
      port: 0,
      fetch: () =>
        new Response(
          new ReadableStream({
            type: "direct",
            async pull(out: { write(c: Uint8Array): void; flush(): unknown; close(): void }) {
              for (const c of shapeNow) {
                out.write(c);
                await out.flush();
              }
              out.close();
            },
          } as unknown as UnderlyingDefaultSource<Uint8Array>),
          { headers: { "content-type": "text/event-stream" } },
        ),
    })
  : undefined;

async function load(given: string): Promise<Build> {
  const continued = given.endsWith("@continuation");
  const dir = continued ? given.slice(0, -"@continuation".length) : given;
  const src = resolve(dir, "src");
  const { ContinuingStream } = continued
    ? await import(`${src}/relay/continuing-tap.ts`)
    : { ContinuingStream: undefined };
  const { firstFrameGuard } = await import(`${src}/relay/first-frame-guard.ts`);
  const { sseLineGate } = await import(`${src}/relay/sse-line-gate.ts`);
  const { passthroughTap } = await import(`${src}/relay/passthrough-tap.ts`);
  const { relayStream } = await import(`${src}/relay/relay-stream.ts`);
  const { usageTextLooksTrue } = await import(`${src}/relay/usage-audit.ts`);
  const { UsageTally } = await import(`${src}/metering/usage-tally.ts`);
  const { FORMATS } = await import(`${src}/formats/index.ts`);
  const { PROTOCOLS } = await import(`${src}/protocols/index.ts`);
  const format = FORMATS[FORMAT];
  const protocol = PROTOCOLS[FORMAT];
  const logger = { error() {}, warn() {}, info() {}, debug() {} };
  /** The taps of one messages passthrough stream, as the gateway builds them. */
  const taps = (source?: ReadableStream<Uint8Array>) => {
    const tally = new UsageTally();
    const audit = (json: string) => {
      if (!usageTextLooksTrue(json, 1_000_000)) tally.distrust();
    };
    const inner = sseLineGate(
      passthroughTap(protocol.passthrough, format, tally, { includeUsage: false, renameModel: id }, audit),
      format,
      "alpha",
    );
    if (!ContinuingStream || !source) return { tap: firstFrameGuard(inner, format, "alpha"), source };
    // A continuer that is never asked: the stream is not cut.
    const stream = new ContinuingStream(source, { kind: "bytes", tap: inner, reply: {}, protocol }, undefined, {
      format,
      client: undefined,
      model: id,
      tally,
      countText: () => 0,
      countPrompt: () => 0,
      continuer: { max: 2, next: async () => undefined },
      signal: new AbortController().signal,
      logger,
      requestId: "req_1",
      route: {},
    });
    return { tap: firstFrameGuard(stream.tap, format, "alpha"), source: stream.source };
  };
  /** One stream through the relay, read to its end by the client; returns the bytes it got. */
  const run = async (chunks: Uint8Array[]): Promise<number> => {
    if (upstream) {
      shapeNow = chunks;
      const server = servers.get(given);
      const res = await fetch(server!.url);
      return (await res.arrayBuffer()).byteLength;
    }
    let i = 0;
    const source = new ReadableStream<Uint8Array>({
      pull(c) {
        if (i < chunks.length) c.enqueue(chunks[i++]!);
        else c.close();
      },
    });
    const t = taps(source);
    const body = relayStream(t.source!, {
      format,
      tap: t.tap,
      logger,
      requestId: "req_1",
      keepAliveMs: 15_000,
      onEnd: () => {},
    });
    let n = 0;
    const reader = body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return n;
      n += value.byteLength;
    }
  };
  if (upstream) {
    const relayed = (body: ReadableStream<Uint8Array>) => {
      const t = taps(body);
      return relayStream(t.source!, {
        format,
        tap: t.tap,
        logger,
        requestId: "req_1",
        keepAliveMs: 15_000,
        // As the gateway's usage commit does, the stream's end waits a turn of the event loop.
        onEnd: () => new Promise<void>((r) => setImmediate(r)),
      });
    };
    servers.set(
      given,
      Bun.serve({
        port: 0,
        fetch: async () => {
          const res = await fetch(upstream.url);
          return new Response(relayed(res.body!), { headers: { "content-type": "text/event-stream" } });
        },
      }),
    );
  }
  return { name: given, run };
}

const servers = new Map<string, ReturnType<typeof Bun.serve>>();
const concurrency = Number(args.c);
/** `n` streams of one build, `--c` at a time in serve mode. */
async function many(b: Build, chunks: Uint8Array[], n: number): Promise<void> {
  if (!upstream) {
    for (let s = 0; s < n; s++) await b.run(chunks);
    return;
  }
  let left = n;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await b.run(chunks);
    }),
  );
}

const builds = await Promise.all(dirs.map(load));
// Warm-up: every build over every shape, so that no shape is measured while the JIT still works.
for (const chunks of Object.values(shapes)) for (const b of builds) await many(b, chunks, upstream ? 500 : 2000);
for (const [shape, chunks] of Object.entries(shapes)) {
  const sizes = await Promise.all(builds.map((b) => b.run(chunks)));
  if (new Set(sizes).size !== 1) throw new Error(`${shape}: the builds relayed different byte counts: ${sizes}`);
  const per: number[][] = builds.map(() => []);
  for (let r = 0; r < rounds; r++) {
    // Rotated each round, as `ab` does.
    for (let k = 0; k < builds.length; k++) {
      const b = (k + r) % builds.length;
      const before = process.cpuUsage();
      await many(builds[b]!, chunks, streams);
      const used = process.cpuUsage(before);
      per[b]!.push((used.user + used.system) / streams);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const base = median(per[0]!);
  console.log(`${shape} (${chunks.length} reads, ${sizes[0]} bytes), CPU µs per stream, median of ${rounds} rounds:`);
  for (const [k, b] of builds.entries()) {
    const m = median(per[k]!);
    console.log(`  ${k}:${b.name}  ${m.toFixed(1)}  (${(m / base).toFixed(3)} of build 0)`);
  }
}
upstream?.stop(true);
for (const s of servers.values()) s.stop(true);
