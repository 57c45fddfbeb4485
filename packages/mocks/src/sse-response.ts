/**
 * An SSE `Response` written frame by frame (or in fixed-size byte pieces, which split events and
 * multi-byte characters, to test a client's decoder), with an optional pause between pieces.
 */
import { delay } from "msw";
import type { MockCut } from "./mock-reply.js";

export interface SSEWriteOptions {
  chunkSize?: number | undefined;
  chunkDelayMs?: number | undefined;
  headers?: Record<string, string> | undefined;
  /** With `cut: "reset"`: only this many frames are written, then reading the body fails. */
  cutAfter?: number | undefined;
  cut?: MockCut | undefined;
}

/** What reading a reset stream's body fails with: the error a fetch reports for a connection reset mid-body. */
export function connectionReset(): Error {
  return Object.assign(new TypeError("terminated"), {
    cause: Object.assign(new Error('The connection was reset by the Turnpike mock (cut: "reset").'), {
      code: "ECONNRESET",
    }),
  });
}

const encoder = new TextEncoder();

export function sseResponse(frames: string[], options: SSEWriteOptions): Response {
  const reset = options.cut === "reset" && options.cutAfter !== undefined;
  const pieces = cut(reset ? frames.slice(0, options.cutAfter) : frames, options.chunkSize);
  let next = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (next > 0 && options.chunkDelayMs) await delay(options.chunkDelayMs);
        const piece = pieces[next++];
        if (piece !== undefined) controller.enqueue(piece);
        else if (reset) controller.error(connectionReset());
        else controller.close();
      },
      // A reset's stream reads nothing ahead: an error discards what is queued and unread, so
      // with the default of one chunk queued ahead, the last frame before the cut would be lost.
    },
    reset ? { highWaterMark: 0 } : undefined,
  );
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
