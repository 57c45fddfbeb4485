import type { ClientFormat } from "../formats";
import type { Logger } from "../log/logger";
import type { Watch } from "../dispatch/execute";
import { BLANK_LINE, find } from "./bytes";
import type { InlineTap } from "./passthrough-tap";

const encoder = new TextEncoder();

/** How a relayed stream ended. */
export type StreamEnd = "complete" | "aborted" | "failed";

export interface RelayOptions {
  /** Runs on each upstream chunk in place: what the client is sent. */
  tap: InlineTap;
  /** The client's format: its keep-alive, terminal frames and in-band error. */
  format: ClientFormat;
  logger: Logger;
  requestId: string;
  /** A quiet stream gets a keep-alive after this long (proxies and clients cut idle streams). */
  keepAliveMs: number;
  /** Called once, when the first piece goes to the client (time to first token). */
  onFirstPiece?: () => void;
  /** The upstream's deadlines after its head: first chunk, then silence between chunks (in-band error when passed). */
  watch?: Watch | undefined;
  /** Aborted when the gateway's drain is over: the stream ends with the in-band error. */
  shutdown?: AbortSignal | undefined;
  /**
   * The client's request signal. The upstream call listens to it, so a client that goes away can
   * make the upstream's read fail before this stream is cancelled: such an end is the client's
   * abort, not the upstream's failure.
   */
  client?: AbortSignal | undefined;
  /** Called once; a stream is closed for the client only after its promise settles (the usage commit). */
  onEnd: (how: StreamEnd) => Promise<void> | void;
}

/** Per client format, the first line of its terminal frame with its line end, as text and as bytes (null: none). */
const terminalMarks = new WeakMap<ClientFormat, { text: string; bytes: Buffer } | null>();

function terminalMark(format: ClientFormat): { text: string; bytes: Buffer } | null {
  let mark = terminalMarks.get(format);
  if (mark === undefined) {
    const first = format.terminalFrame.split("\n")[0];
    mark = first ? { text: `${first}\n`, bytes: Buffer.from(`${first}\n`) } : null;
    terminalMarks.set(format, mark);
  }
  return mark;
}

/**
 * A relayed piece that holds the stream's terminal frame (`message_stop`, `[DONE]`), cut just
 * after it: whatever an upstream sends after its terminal frame in the same chunk is not relayed.
 * Undefined when the piece does not hold it.
 */
export function cutAfterTerminal(piece: Uint8Array | string, format: ClientFormat): Uint8Array | string | undefined {
  const mark = terminalMark(format);
  if (!mark) return undefined;
  if (typeof piece === "string") {
    const at = piece.indexOf(mark.text);
    const end = at === -1 ? -1 : piece.indexOf("\n\n", at);
    return end === -1 ? undefined : piece.slice(0, end + 2);
  }
  const at = find(piece, mark.bytes);
  const end = at === -1 ? -1 : find(piece, BLANK_LINE, at);
  return end === -1 ? undefined : piece.subarray(0, end + 2);
}

/** The streams each shutdown signal cuts, behind one listener per signal. */
const cutters = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Runs `cut` when `signal` aborts; returns the function that takes it back. Every open stream
 * shares the gateway's one shutdown signal: a listener each made every stream's end search all
 * the others' listeners (the more streams open, the longer each end took).
 */
function whenAborted(signal: AbortSignal, cut: () => void): () => void {
  let set = cutters.get(signal);
  if (!set) {
    const all = new Set<() => void>();
    set = all;
    cutters.set(signal, all);
    signal.addEventListener(
      "abort",
      () => {
        for (const f of all) f();
        all.clear();
      },
      { once: true },
    );
  }
  const mine = set;
  mine.add(cut);
  return () => void mine.delete(cut);
}

/**
 * The client-facing body of a stream: every chunk is written the moment it arrives (no
 * buffering), keep-alives fill quiet stretches, a client that goes away aborts the upstream at
 * once, and a broken upstream ends the stream with an in-band error rather than a clean finish.
 * A stream ends for the client as soon as its terminal frame (or in-band error) is written, and
 * nothing — not a keep-alive, not a second error — follows it while the upstream winds down.
 */
export function relayStream(source: ReadableStream<Uint8Array>, opts: RelayOptions): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let last = Date.now();
  // When the upstream last sent a chunk (keep-alives do not count), and whether it sent one yet.
  let heard = last;
  let first = false;
  const watch = opts.watch;
  // Set when the drain cut the stream: its end is a failure, not a completion.
  let cut = false;
  const onShutdown = () => {
    cut = true;
    void reader.cancel().catch(() => {});
  };
  let stopWatchingShutdown = () => {};
  let timer: ReturnType<typeof setInterval> | undefined;
  let ended = false;
  // Set once the terminal frame is out: nothing is written after it.
  let closed = false;
  let sentAny = false;
  const end = async (how: StreamEnd): Promise<void> => {
    if (ended) return;
    ended = true;
    if (timer) clearInterval(timer);
    stopWatchingShutdown();
    try {
      await opts.onEnd(how);
    } catch (e) {
      // The stream must still end for the client; the failure is logged, not relayed.
      opts.logger.error("metering a stream failed", { request_id: opts.requestId }, e);
    }
  };
  /** How the stream ended, as its tap saw it (an upstream that broke off or sent garbage failed). */
  const outcome = (): StreamEnd => (opts.tap.failed?.() ? "failed" : "complete");
  /** What the tap writes in one call (it writes synchronously). */
  const collect = (run: (out: (piece: Uint8Array | string) => void) => void): (Uint8Array | string)[] => {
    const pieces: (Uint8Array | string)[] = [];
    run((piece) => pieces.push(piece));
    return pieces;
  };
  const put = (controller: ReadableStreamDefaultController<Uint8Array>, piece: Uint8Array | string) => {
    if (closed) return;
    controller.enqueue(typeof piece === "string" ? encoder.encode(piece) : piece);
    if (typeof piece === "string" && opts.format.isTerminal(piece)) closed = true;
  };
  const finish = async (controller: ReadableStreamDefaultController<Uint8Array>, how: StreamEnd) => {
    closed = true;
    void reader.cancel().catch(() => {});
    // The usage record is durable before the client sees the stream end.
    await end(how);
    controller.close();
  };
  /** One tick of the interval: the upstream's deadlines first, then a keep-alive if the stream was quiet. */
  const tick = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    if (closed) return;
    if (watch) {
      const limit = first ? watch.idleMs : watch.firstByteMs;
      if (Date.now() - heard >= limit) {
        watch.abort(first ? `no chunk for ${limit} ms` : `no first byte within ${limit} ms`);
        return;
      }
    }
    if (opts.keepAliveMs <= 0 || Date.now() - last < opts.keepAliveMs) return;
    last = Date.now();
    try {
      controller.enqueue(opts.format.keepAlive);
    } catch {
      // The stream already closed; the interval is cleared by end().
    }
  };
  /**
   * The upstream's stream broke: the tap ends the stream as its upstream ending early deserves —
   * in the client's own shape, with whatever it was still holding (a translated chat stream's
   * first chunk); only if that holds no terminal frame does the generic in-band error go out. A
   * stream whose terminal frame is already out gets nothing more.
   */
  const broke = async (controller: ReadableStreamDefaultController<Uint8Array>, e: unknown) => {
    if (ended) return;
    if (opts.client?.aborted && !cut) {
      closed = true;
      await end("aborted");
      try {
        controller.close();
      } catch {
        // Already cancelled by the client.
      }
      return;
    }
    // The runtime's or a parser's own wording is no use to the client; it is logged here.
    opts.logger.warn("upstream stream failed", {
      request_id: opts.requestId,
      reason: e instanceof Error ? e.message : String(e),
    });
    if (!closed) {
      let tail: (Uint8Array | string)[];
      try {
        tail = collect((out) => opts.tap.end(out));
      } catch {
        tail = [];
      }
      for (const piece of tail) put(controller, piece);
      if (!closed)
        put(controller, opts.format.inBandError("The upstream stream failed before the reply was complete."));
    }
    await finish(controller, "failed");
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // The one shutdown signal is shared by every stream: the stream leaves its set when it ends.
        if (opts.shutdown && !opts.shutdown.aborted) stopWatchingShutdown = whenAborted(opts.shutdown, onShutdown);
        if (opts.keepAliveMs > 0 || watch) {
          const every = Math.min(
            opts.keepAliveMs || Number.POSITIVE_INFINITY,
            watch ? Math.min(watch.firstByteMs, watch.idleMs) : Number.POSITIVE_INFINITY,
          );
          // One interval serves keep-alives and the upstream's deadlines.
          timer = setInterval(() => tick(controller), Math.max(50, Math.floor(every / 2)));
        }
      },
      async pull(controller) {
        try {
          // Until something is written (a tap may drop a whole chunk) or the stream ends.
          for (let written = false; !written; ) {
            const { done, value } = await reader.read();
            if (done) {
              if (cut) throw new Error("the gateway is shutting down");
              for (const piece of collect((out) => opts.tap.end(out))) put(controller, piece);
              await finish(controller, outcome());
              return;
            }
            last = heard = Date.now();
            first = true;
            const pieces = collect((out) => opts.tap.push(value, out));
            const terminated = opts.tap.terminated?.() ?? false;
            if (pieces.length && !sentAny) {
              sentAny = true;
              opts.onFirstPiece?.();
            }
            for (const piece of pieces) {
              written = true;
              // The chunk that carried the terminal frame: relayed up to its end, nothing after.
              const cut = terminated ? cutAfterTerminal(piece, opts.format) : undefined;
              put(controller, cut ?? piece);
              if (cut !== undefined) closed = true;
            }
            // The terminal frame went out, as a frame of the tap's own or inside relayed bytes.
            if (closed || terminated) {
              await finish(controller, outcome());
              return;
            }
          }
        } catch (e) {
          await broke(controller, e);
        }
      },
      cancel(reason) {
        // Cancelling the pipeline cancels the upstream body and its request: the upstream is let
        // go at once.
        closed = true;
        void reader.cancel(reason).catch(() => {});
        watch?.abort("the client went away");
        void end("aborted");
      },
    },
    // Read ahead of the client by a few chunks: the upstream's socket is drained as data arrives
    // (a reset discards unread data, and a slow client should not hold the upstream's buffers).
    { highWaterMark: 16 },
  );
}
