/** Test helpers: load recorded fixtures and run a TransformStream over a list of inputs. */
import type { SSEMessage } from "@turnpike/schema/sse";

const dir = new URL("./__fixtures__/", import.meta.url);

export async function fixtureJson<T = unknown>(name: string): Promise<T> {
  return (await Bun.file(new URL(name, dir)).json()) as T; // the test names the shape of its own fixture
}

/**
 * A `<case>.chunks.txt` file (one SSE `data:` payload per line) as decoded SSE messages. For the
 * messages protocol the `event:` line equals the payload's `type` (fixtures README), so it is
 * added back.
 */
export async function fixtureChunks(name: string, opts: { withEventLines?: boolean } = {}): Promise<SSEMessage[]> {
  const text = await Bun.file(new URL(name, dir)).text();
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((data) => {
      if (!opts.withEventLines) return { data };
      const type = (JSON.parse(data) as { type: string }).type; // every recorded messages payload has its `type`
      return { event: type, data };
    });
}

/** Feeds `inputs` through `ts` and collects every output. */
export async function run<I, O>(ts: TransformStream<I, O>, inputs: I[]): Promise<O[]> {
  const out: O[] = [];
  const readable = new ReadableStream<I>({
    start(c) {
      for (const i of inputs) c.enqueue(i);
      c.close();
    },
  }).pipeThrough(ts);
  return drain(readable, out);
}

/** Reads a stream to its end. */
export async function drain<O>(readable: ReadableStream<O>, out: O[] = []): Promise<O[]> {
  const reader = readable.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out;
    out.push(value);
  }
}

/** `data:` messages from chunk objects (a chat or generate upstream). */
export function sse(...chunks: unknown[]): SSEMessage[] {
  return chunks.map((c) => ({ data: typeof c === "string" ? c : JSON.stringify(c) }));
}
