/**
 * An SSE `Response` written frame by frame (or in fixed-size byte pieces, which split events and
 * multi-byte characters, to test a client's decoder), with an optional pause between pieces.
 */
import { delay } from "msw";

export interface SSEWriteOptions {
  chunkSize?: number | undefined;
  chunkDelayMs?: number | undefined;
  headers?: Record<string, string> | undefined;
}

const encoder = new TextEncoder();

export function sseResponse(frames: string[], options: SSEWriteOptions): Response {
  const pieces = cut(frames, options.chunkSize);
  let next = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (next > 0 && options.chunkDelayMs) await delay(options.chunkDelayMs);
      const piece = pieces[next++];
      if (piece === undefined) controller.close();
      else controller.enqueue(piece);
    },
  });
  return new Response(body, {
    status: 200,
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", ...options.headers },
  });
}

function cut(frames: string[], size: number | undefined): Uint8Array[] {
  if (!size || size < 1) return frames.map((f) => encoder.encode(f));
  const all = encoder.encode(frames.join(""));
  const out: Uint8Array[] = [];
  for (let i = 0; i < all.length; i += size) out.push(all.slice(i, i + size));
  return out;
}
