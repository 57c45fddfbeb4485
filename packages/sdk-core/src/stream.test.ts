import { describe, expect, test } from "bun:test";
import type { SSEMessage } from "@turnpike/schema/sse";
import { TurnpikeError } from "./errors.js";
import { Stream, parseEventJSON, type StreamStep } from "./stream.js";

const encoder = new TextEncoder();

/** A response whose body arrives in exactly these byte pieces. */
function bodyOf(pieces: Uint8Array[]): Response {
  let i = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(c) {
        const piece = pieces[i++];
        if (piece) c.enqueue(piece);
        else c.close();
      },
    }),
  );
}

/** Cuts `text`'s UTF-8 bytes every `size` bytes: splits events, lines and characters. */
function cut(text: string, size: number): Uint8Array[] {
  const bytes = encoder.encode(text);
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.slice(i, i + size));
  return out;
}

/** The decoder an SDK supplies; this one is chat-like. */
function decode(m: SSEMessage): StreamStep<{ t: string }> {
  if (m.data === "[DONE]") return { kind: "done" };
  const data = parseEventJSON(m) as { t: string; fail?: boolean };
  if (data.fail) return { kind: "error", error: new TurnpikeError("in-band failure") };
  return { kind: "item", value: data };
}

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of stream) out.push(x);
  return out;
}

const transcript =
  ["naïve", "日本語", "emoji 🚀🎉", "a\nb"].map((t) => `data: ${JSON.stringify({ t })}\n\n`).join("") +
  "data: [DONE]\n\n";

describe("Stream.fromSSEResponse", () => {
  test("events and multi-byte characters split at every byte boundary arrive whole", async () => {
    for (const size of [1, 2, 3, 5, 7, 64]) {
      const stream = Stream.fromSSEResponse(bodyOf(cut(transcript, size)), new AbortController(), decode);
      expect((await collect(stream)).map((x) => x.t)).toEqual(["naïve", "日本語", "emoji 🚀🎉", "a\nb"]);
    }
  });

  test("stops at the done marker and ignores anything after it", async () => {
    const stream = Stream.fromSSEResponse(
      bodyOf(cut(transcript + 'data: {"t":"late"}\n\n', 9)),
      new AbortController(),
      decode,
    );
    expect(await collect(stream)).toHaveLength(4);
  });

  test("throws an in-band error where it occurs", async () => {
    const text = 'data: {"t":"one"}\n\ndata: {"t":"x","fail":true}\n\ndata: {"t":"two"}\n\n';
    const seen: string[] = [];
    const stream = Stream.fromSSEResponse(bodyOf(cut(text, 4)), new AbortController(), decode);
    await expect(
      (async () => {
        for await (const x of stream) seen.push(x.t);
      })(),
    ).rejects.toThrow("in-band failure");
    expect(seen).toEqual(["one"]);
  });

  test("an event that is not JSON is an error naming the data", async () => {
    const stream = Stream.fromSSEResponse(bodyOf(cut("event: x\ndata: {oops\n\n", 100)), new AbortController(), decode);
    await expect(collect(stream)).rejects.toThrow("Could not parse stream event x as JSON: {oops");
  });

  test("leaving the loop early aborts the request; finishing does not", async () => {
    const early = new AbortController();
    for await (const _ of Stream.fromSSEResponse(bodyOf(cut(transcript, 10)), early, decode)) break;
    expect(early.signal.aborted).toBe(true);
    const full = new AbortController();
    await collect(Stream.fromSSEResponse(bodyOf(cut(transcript, 10)), full, decode));
    expect(full.signal.aborted).toBe(false);
  });

  test("controller.abort() ends a stalled stream quietly", async () => {
    const controller = new AbortController();
    const stalled = new Response(
      new ReadableStream({ start: (c) => c.enqueue(encoder.encode('data: {"t":"first"}\n\n')) }),
    );
    const stream = Stream.fromSSEResponse(stalled, controller, decode);
    const seen: string[] = [];
    for await (const x of stream) {
      seen.push(x.t);
      setTimeout(() => controller.abort(), 1);
    }
    expect(seen).toEqual(["first"]);
  });

  test("a stream iterates once; tee() gives two full copies", async () => {
    const stream = Stream.fromSSEResponse(bodyOf(cut(transcript, 6)), new AbortController(), decode);
    const [a, b] = stream.tee();
    const [left, right] = await Promise.all([collect(a), collect(b)]);
    expect(left).toEqual(right);
    expect(left).toHaveLength(4);
    expect(() => stream[Symbol.asyncIterator]()).toThrow("already been iterated");
  });

  test("toReadableStream() gives newline-delimited JSON", async () => {
    const stream = Stream.fromSSEResponse(bodyOf(cut(transcript, 6)), new AbortController(), decode);
    const text = await new Response(stream.toReadableStream()).text();
    expect(
      text
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { t: string }).t),
    ).toEqual(["naïve", "日本語", "emoji 🚀🎉", "a\nb"]);
  });
});
