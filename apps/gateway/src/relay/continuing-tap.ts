import type { MessagesStreamEvent } from "@turnpike/schema";
import { SSEParser } from "@turnpike/schema/sse";
import type { ClientFormat, ClientRequest } from "../formats";
import type { UpstreamProtocol } from "../protocols";
import type { ReadBack, ReplyContext } from "../protocols/upstream-protocol";
import type { Continued, StreamContinuer } from "../dispatch/continuation";
import type { Watch } from "../dispatch/execute";
import type { UsageTally } from "../metering/usage-tally";
import type { Logger } from "../log/logger";
import { find } from "./bytes";
import { ContinuationRebase } from "./continuation-rebase";
import type { InlineTap } from "./passthrough-tap";
import { StreamSpan } from "./stream-span";
import { type ClientSide, clientSide, type TranslatedTap, translatedTap } from "./translated-tap";

/** A passthrough's read-back (its protocol's), with its error marks as bytes for the search of each relayed piece. */
interface ReadBackOf {
  protocol: UpstreamProtocol;
  back: ReadBack;
  marks: Uint8Array[];
}

/** Each protocol's read-back, its marks encoded once (not per stream). */
const READ_BACKS = new Map<UpstreamProtocol, ReadBackOf | undefined>();

function readBackOf(protocol: UpstreamProtocol): ReadBackOf | undefined {
  if (READ_BACKS.has(protocol)) return READ_BACKS.get(protocol);
  const back = protocol.readBack;
  const encoder = new TextEncoder();
  const of = back && { protocol, back, marks: back.errorMarks.map((m) => encoder.encode(m)) };
  READ_BACKS.set(protocol, of);
  return of;
}

/** A passthrough stream of this protocol can be continued (its adapter says how it is read back). */
export function continuesPassthrough(protocol: UpstreamProtocol): boolean {
  return protocol.readBack !== undefined;
}

/** Where the first of `marks` starts in a piece, or -1. */
function firstMark(piece: Uint8Array | string, texts: readonly string[], marks: readonly Uint8Array[]): number {
  let at = -1;
  for (let i = 0; i < marks.length; i++) {
    const found = typeof piece === "string" ? piece.indexOf(texts[i]!) : find(piece, marks[i]!);
    if (found !== -1 && (at === -1 || found < at)) at = found;
  }
  return at;
}

/** A relayed event's data, parsed (undefined where it is not JSON). */
function parsed(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/** The message of an in-band error that ends a stream no continuation could save. */
const FAILED = "The upstream stream failed before the reply was complete.";

export interface ContinuingOptions {
  /** The client's format (with its request's own in-band error). */
  format: ClientFormat;
  client: ClientRequest;
  /** The catalog id the client's frames name. */
  model: string;
  tally: UsageTally;
  countText: (text: string) => number;
  /** The first attempt's prompt, counted (only if its upstream never says). */
  countPrompt: () => number;
  continuer: StreamContinuer;
  /** The client's request signal: a continuation never starts for a client that is gone. */
  signal: AbortSignal;
  logger: Logger;
  requestId: string;
  /** The ledger's count of continuations (written as they are made). */
  route: { continuations?: number };
}

/** The first attempt's tap: a passthrough's (its bytes relayed) or a translation's. */
export type FirstTap =
  | { kind: "bytes"; tap: InlineTap; reply: ReplyContext; protocol: UpstreamProtocol }
  | { kind: "pivot"; tap: TranslatedTap; span: StreamSpan };

type Current = FirstTap | { kind: "continued"; tap: TranslatedTap; stopped: () => boolean };

/**
 * A stream that survives its upstream: the source the relay reads and the tap it runs, as one.
 * While the upstream flows, chunks pass as they would without it (a passthrough's pieces are
 * kept by reference, a translation's span is kept by its side). When the upstream breaks after
 * its 200 — a reset, the idle deadline, an in-band error, an end without the terminal event —
 * the tap knows what the client has received (stream-span.ts), and a continuation is asked for
 * (dispatch/continuation.ts): its events join the client's stream (continuation-rebase.ts),
 * through the same encoder, so the client reads one stream with one set of ids and indexes and
 * one end. Where it must not go on (a cut inside a tool call's arguments or a thinking block),
 * or nothing answers, the stream ends with the in-band error as it would have without it.
 */
export class ContinuingStream {
  readonly source: ReadableStream<Uint8Array>;
  readonly tap: InlineTap;
  /** The relay's deadlines, pointed at whichever upstream is being read. */
  readonly watch: Watch | undefined;

  private reader: ReadableStreamDefaultReader<Uint8Array>;
  private current: Current;
  private side: ClientSide | undefined;
  private span: StreamSpan | undefined;
  /** A passthrough's relayed pieces, read back only after a cut. */
  private readonly sent: (Uint8Array | string)[] = [];
  /** This upstream broke (in-band error seen, or its stream ended or failed short). */
  private cut = false;
  /**
   * The upstream's own in-band error, when it ended that way: a stream that could not be
   * continued ends with it, as it would have with no continuation (the latest attempt's as a
   * pivot event; the first, passthrough attempt's as the bytes the vendor wrote).
   */
  private upstreamError: MessagesStreamEvent | undefined;
  private errorPieces: (Uint8Array | string)[] | undefined;
  /** The reply was finished cleanly after a cut (no continuation needed). */
  private closedClean = false;
  /** A whole passthrough's last pieces, read when its end was checked. */
  private held: (Uint8Array | string)[] | undefined;
  private count = 0;
  private cancelled = false;
  /** The passthrough tap's end was read (its relayed text and usage are in the tally). */
  private innerEnded = false;
  private upstreamWatch: Watch | undefined;
  private promptOf: () => number;

  constructor(
    source: ReadableStream<Uint8Array>,
    first: FirstTap,
    watch: Watch | undefined,
    private readonly opts: ContinuingOptions,
  ) {
    this.reader = source.getReader();
    this.current = first;
    this.upstreamWatch = watch;
    this.promptOf = opts.countPrompt;
    this.back = first.kind === "bytes" ? readBackOf(first.protocol) : undefined;
    if (first.kind === "pivot") {
      this.side = first.tap.side;
      this.span = first.span;
    }
    this.watch = watch && {
      firstByteMs: watch.firstByteMs,
      idleMs: watch.idleMs,
      abort: (reason) => this.upstreamWatch?.abort(reason),
      followClient: () => this.upstreamWatch?.followClient(),
    };
    // The relay reads its source through `getReader().read()` and `cancel()` only: a reader of
    // our own, rather than a second ReadableStream in front of the upstream's, spares every chunk
    // a queue and a promise (bench/README.md, "Continuation on a stream that is not cut"). Each
    // read is asked for by the relay, so a chunk reaches the tap before the next one is read.
    const reader = {
      read: () => this.read(),
      // The relay let the stream go (the client left, or the gateway drains): nothing more is asked for.
      cancel: (reason?: unknown) => {
        this.cancelled = true;
        return this.reader.cancel(reason).catch(() => {});
      },
      releaseLock() {},
      closed: Promise.resolve(undefined),
    };
    // Only `getReader` is called on a relay's source (relay-stream.ts).
    this.source = { getReader: () => reader } as unknown as ReadableStream<Uint8Array>;
    this.tap = {
      push: (chunk, out, plain) => this.push(chunk, out, plain),
      end: (out) => this.end(out),
      failed: () => this.failed(),
      terminated: () => !this.cut && this.current.kind === "bytes" && (this.current.tap.terminated?.() ?? false),
      reply: () => (this.current.kind === "bytes" ? this.current.tap.reply?.() : undefined),
    };
  }

  /** A translated upstream's in-band error (its tap's hook): this upstream is over. */
  markCut(ev?: MessagesStreamEvent): void {
    this.cut = true;
    if (ev) this.upstreamError = ev;
  }

  private async read(): Promise<Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>>> {
    for (;;) {
      if (this.cancelled) return { done: true, value: undefined };
      if (this.cut) {
        if (await this.recover()) continue;
        return { done: true, value: undefined };
      }
      let r: Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>>;
      try {
        r = await this.reader.read();
      } catch (e) {
        // The client's going away (or the gateway's drain) is the relay's to handle, as before.
        if (this.opts.signal.aborted) throw e;
        this.opts.logger.warn("upstream stream cut", {
          request_id: this.opts.requestId,
          reason: e instanceof Error ? e.message : String(e),
        });
        this.cut = true;
        continue;
      }
      if (r.done) {
        if (this.whole()) return r;
        this.cut = true;
        continue;
      }
      return r;
    }
  }

  /** The upstream ended: was its reply whole? (Its end is read now; a whole passthrough's last pieces are kept for the relay.) */
  private whole(): boolean {
    const cur = this.current;
    if (cur.kind === "bytes") {
      const pieces: (Uint8Array | string)[] = [];
      this.innerEnded = true;
      cur.tap.end((p) => pieces.push(p));
      if (cur.tap.failed?.()) return false;
      this.held = pieces;
      return true;
    }
    cur.tap.drain();
    return !this.cut && !cur.tap.failed?.();
  }

  private push(chunk: Uint8Array, out: (piece: Uint8Array | string) => void, plain?: boolean): void {
    if (this.cut) return;
    const cur = this.current;
    if (cur.kind !== "bytes") return cur.tap.push(chunk, out);
    this.out = out;
    cur.tap.push(chunk, this.relayPiece, plain);
  }

  /** Where a passthrough's pieces go this chunk (one callback for the stream, not one per chunk). */
  private out: (piece: Uint8Array | string) => void = () => {};
  private readonly back: ReadBackOf | undefined;

  /** One piece a passthrough relays: kept by reference and written, unless the upstream's in-band error starts in it. */
  private readonly relayPiece = (piece: Uint8Array | string): void => {
    if (this.cut) {
      this.errorPieces?.push(piece);
      return;
    }
    const back = this.back!;
    const at = firstMark(piece, back.back.errorMarks, back.marks);
    if (at === -1) {
      this.sent.push(piece);
      return this.out(piece);
    }
    // The upstream's in-band error: what came before it is relayed, the error is not.
    this.cut = true;
    this.errorPieces = [piece.slice(at)];
    const before = piece.slice(0, at);
    if (before.length) {
      this.sent.push(before);
      this.out(before);
    }
  };

  private end(out: (piece: Uint8Array | string) => void): void {
    const cur = this.current;
    if (this.cut) {
      // Nothing continued it: the upstream's own in-band error where it sent one (as with no
      // continuation), else the client's shape of a failed stream.
      if (this.side && (this.upstreamError || !this.errorPieces)) {
        this.side.push(this.upstreamError ?? { type: "error", error: { type: "api_error", message: FAILED } });
        this.side.end();
        this.side.flush(out);
      } else if (this.errorPieces) {
        this.side?.flush(out);
        for (const p of this.errorPieces) out(p);
      } else out(this.opts.format.inBandError(FAILED));
      return;
    }
    if (this.closedClean) {
      this.side!.end();
      this.side!.flush(out);
      return;
    }
    if (cur.kind === "bytes") {
      if (this.held) for (const p of this.held) out(p);
      else cur.tap.end(out);
      return;
    }
    cur.tap.end(out);
  }

  private failed(): boolean {
    if (this.cut) return true;
    if (this.closedClean) return false;
    const cur = this.current;
    if (cur.kind === "continued") return !cur.stopped();
    return cur.tap.failed?.() ?? false;
  }

  /**
   * The span of what the client has received. A passthrough's is read back from its relayed
   * pieces now (the first cut), into a side of its own that the continuation writes through.
   */
  private spanNow(): StreamSpan | undefined {
    if (this.span) return this.span;
    const cur = this.current;
    if (cur.kind !== "bytes" || !this.back) return undefined;
    const { protocol, back } = this.back;
    const span = new StreamSpan();
    const side = clientSide(this.opts.client, this.opts.model, undefined, span);
    const machine = protocol.machine({ ...cur.reply, toolNames: undefined, stopSequences: undefined }, (ev) => {
      if (ev.type === "error") return;
      back.fix?.(ev);
      side.push(ev);
    });
    // An encoder that goes on in the upstream's own terms reads the relayed events themselves too.
    const events: unknown[] | undefined = side.resume ? [] : undefined;
    const parser = new SSEParser();
    const decoder = new TextDecoder();
    for (const p of this.sent) {
      const text = typeof p === "string" ? p : decoder.decode(p, { stream: true });
      for (const msg of parser.push(text)) {
        events?.push(parsed(msg.data));
        machine.push(msg);
      }
    }
    this.sent.length = 0;
    // What the encoder wrote while it caught up is what the client already has.
    side.flush(() => {});
    if (events) {
      const on = side.resume!(events);
      if (!on) {
        this.opts.logger.warn("cut stream not continued", {
          request_id: this.opts.requestId,
          reason: "the upstream's stream cannot be gone on with in its own terms",
        });
        return undefined;
      }
      // The client's text part was closed (its done events went out): a continuation's text starts a new one.
      const open = span.open;
      if (!on.textOpen && open?.kind === "text") open.open = false;
    }
    this.side = side;
    this.span = span;
    return span;
  }

  /**
   * After a cut: end the reply cleanly where it is whole, or ask for a continuation where it may
   * go on. False when the stream must end with the in-band error (or ended cleanly).
   */
  private async recover(): Promise<boolean> {
    const o = this.opts;
    void this.reader.cancel().catch(() => {});
    // What the cut passthrough relayed is told to the tally (its end read), its last pieces not relayed.
    if (this.current.kind === "bytes" && !this.innerEnded) {
      this.innerEnded = true;
      try {
        this.current.tap.end(() => {});
      } catch {
        // A tap that cannot end cleanly has told the tally what it could.
      }
    }
    // Never for a client that is gone, nor for a stream the relay let go.
    if (o.signal.aborted || this.cancelled) return false;
    const span = this.spanNow();
    const side = this.side;
    if (!span || !side) return false;
    const refuse = (why: string) => {
      o.logger.warn("cut stream not continued", { request_id: o.requestId, reason: why });
      return false;
    };
    // The reply said how it ended; only its last frame is missing.
    if (span.stopReason !== undefined) return this.finish([{ type: "message_stop" }]);
    const open = span.open;
    if (open?.kind === "tool") return refuse("cut inside a tool call's arguments");
    if (open?.kind === "thinking") return refuse("cut inside a thinking block");
    if (open && open.kind !== "text") return refuse("cut inside a block no upstream can go on with");
    // Whole tool calls and nothing after them: the turn is the tool calls.
    if (!open && span.blocks.at(-1)?.kind === "tool") {
      const out = o.tally.carry(o.countText, this.promptOf);
      return this.finish([
        {
          type: "message_delta",
          delta: { stop_reason: "tool_use", stop_sequence: null },
          usage: { input_tokens: out.input_tokens, output_tokens: out.output_tokens },
        } as MessagesStreamEvent,
        { type: "message_stop" },
      ]);
    }
    if (this.count >= o.continuer.max) return refuse("continuation_attempts spent");
    o.tally.carry(o.countText, this.promptOf);
    side.discard();
    let next: Continued | undefined;
    try {
      next = await o.continuer.next(span.text());
    } catch (e) {
      o.logger.error("asking for a continuation failed", { request_id: o.requestId }, e);
      next = undefined;
    }
    if (!next) return refuse("no upstream answered the continuation");
    if (o.signal.aborted) {
      void next.response.body?.cancel().catch(() => {});
      return false;
    }
    this.count++;
    o.route.continuations = this.count;
    o.tally.servedBy(next.entry, next.serviceTier);
    // The ledger row names the model that began the reply; the one that went on is told here.
    o.logger.info("stream continued", { request_id: o.requestId, model: next.entry.id, continuations: this.count });
    const rebase = new ContinuationRebase(
      span,
      () => o.tally.carriedUsage,
      () => o.tally.usage,
      next.prefilled,
    );
    const tap = translatedTap(next.protocol, o.client, next.reply, o.tally, undefined, undefined, {
      side,
      onCut: (ev) => {
        this.cut = true;
        if (ev) this.upstreamError = ev;
      },
      rebase: (ev, emit) => rebase.push(ev, emit),
    });
    this.current = { kind: "continued", tap, stopped: () => !tap.failed?.() };
    this.reader = (next.response.body ?? new ReadableStream()).getReader();
    this.upstreamWatch = next.watch;
    this.promptOf = () => next.countPrompt();
    this.cut = false;
    return true;
  }

  /** The reply ended here, cleanly: the closing events written, the stream's end next. */
  private finish(events: MessagesStreamEvent[]): false {
    for (const ev of events) this.side!.push(ev);
    this.closedClean = true;
    this.cut = false;
    return false;
  }
}
