/**
 * A translated stream's tap alone, in process: a chat upstream's stream (the simulator's own reply
 * to the benchmark's request, 50 text chunks) through the gateway's translated tap — SSE parser,
 * the chat machine, the pivot read for usage, the client format's encoder — and each piece it
 * hands on encoded and checked for the stream's end as the relay does, for one or more gateway
 * directories at once, rotated each round. CPU per stream from `process.cpuUsage()`.
 *
 *   bun src/translated-micro.ts [--rounds N] [--streams N] [--clients responses,messages] DIR_A DIR_B …
 *
 * Clients: `responses` (the `stream responses→chat` scenario's tap) and `messages` (`stream
 * messages→chat`). Shapes: `whole` (the reply in one read, as the benchmark's instant simulator
 * gives it) and `chunked` (one read per frame). Each stream's request is validated by the client
 * format as the gateway does (its encoder needs it), so that is in the figures too; the upstream
 * call, the relayed `ReadableStream` and the record are not.
 */
import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { createSimulatorFetch } from "@turnpike/simulator";

const { values: args, positionals: dirs } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: "string", default: "20" },
    streams: { type: "string", default: "300" },
    clients: { type: "string", default: "responses,messages" },
  },
});
if (dirs.length === 0) throw new Error("give one or more apps/gateway directories");
const rounds = Number(args.rounds);
const streams = Number(args.streams);

const sim = createSimulatorFetch({ chunks: 50 });
const res = await sim("http://sim/v1/chat/completions", {
  method: "POST",
  headers: { "content-type": "application/json", authorization: "Bearer k" },
  body: JSON.stringify({
    model: "beta-5",
    max_tokens: 64,
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: "user", content: "hi" }],
  }),
});
const whole = new Uint8Array(await res.arrayBuffer());
const shapes: Record<string, Uint8Array[]> = {
  whole: [whole],
  chunked: new TextDecoder()
    .decode(whole)
    .split(/(?<=\n\n)/)
    .filter(Boolean)
    .map((f) => new TextEncoder().encode(f)),
};

/** The benchmark's client bodies (bench/src/scenarios.ts), by client format. */
const BODIES: Record<string, Record<string, unknown>> = {
  responses: { model: "beta-5", input: "hi", max_output_tokens: 64, stream: true, store: false },
  messages: { model: "beta-5", max_tokens: 64, stream: true, messages: [{ role: "user", content: "hi" }] },
};

type Piece = Uint8Array | string;
interface Tap {
  push(chunk: Uint8Array, enqueue: (piece: Piece) => void): void;
  end(enqueue: (piece: Piece) => void): void;
}
interface Build {
  name: string;
  /** One stream of this client format through the tap; returns the bytes the client would get. */
  run: (client: string, chunks: Uint8Array[]) => number;
}

async function load(dir: string): Promise<Build> {
  const src = resolve(dir, "src");
  const { translatedTap } = await import(`${src}/relay/translated-tap.ts`);
  const { UsageTally } = await import(`${src}/metering/usage-tally.ts`);
  const { FORMATS } = await import(`${src}/formats/index.ts`);
  const { PROTOCOLS } = await import(`${src}/protocols/index.ts`);
  const { MemorySignatureStore } = await import(resolve(dir, "../../packages/providers/src/index.ts"));
  const signatures = new MemorySignatureStore();
  const encoder = new TextEncoder();
  const run = (client: string, chunks: Uint8Array[]): number => {
    const format = FORMATS[client];
    const request = format.validate(structuredClone(BODIES[client]));
    const reply = { model: "beta-5", stopSequences: undefined, toolNames: undefined, signatures, inputTokens: 4 };
    const tap: Tap = translatedTap(PROTOCOLS.chat, request, reply, new UsageTally());
    let bytes = 0;
    let ended = false;
    // As the relay's `put`: the piece encoded, then the format's check for the stream's end.
    const put = (piece: Piece) => {
      bytes += (typeof piece === "string" ? encoder.encode(piece) : piece).byteLength;
      if (typeof piece === "string" && format.isTerminal(piece)) ended = true;
    };
    for (const c of chunks) tap.push(c, put);
    tap.end(put);
    if (!ended) throw new Error(`${client}: the stream did not end`);
    return bytes;
  };
  return { name: dir, run };
}

const builds = await Promise.all(dirs.map(load));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
for (const client of (args.clients ?? "").split(",")) {
  if (!BODIES[client]) throw new Error(`no client "${client}"; one of: ${Object.keys(BODIES).join(", ")}`);
  for (const [shape, chunks] of Object.entries(shapes)) {
    const sizes = builds.map((b) => b.run(client, chunks));
    if (new Set(sizes).size !== 1)
      throw new Error(`${client} ${shape}: the builds wrote different byte counts: ${sizes}`);
    for (const b of builds) for (let s = 0; s < 1000; s++) b.run(client, chunks); // warm-up
    const per: number[][] = builds.map(() => []);
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < builds.length; k++) {
        const i = (k + r) % builds.length; // rotated each round, as `ab` does
        const before = process.cpuUsage();
        for (let s = 0; s < streams; s++) (builds[i] as Build).run(client, chunks);
        const used = process.cpuUsage(before);
        (per[i] as number[]).push((used.user + used.system) / streams);
      }
    }
    const first = per[0] as number[];
    console.log(
      `${client} ${shape} (${chunks.length} reads, ${sizes[0]} bytes out), CPU µs per stream, median of ${rounds} rounds:`,
    );
    for (const [k, b] of builds.entries()) {
      const mine = per[k] as number[];
      const ratio = median(mine.map((x, r) => x / (first[r] as number)));
      console.log(
        `  ${k}:${b.name}  ${median(mine).toFixed(1)}  (median of per-round ratios to build 0: ${ratio.toFixed(3)})`,
      );
    }
  }
}
