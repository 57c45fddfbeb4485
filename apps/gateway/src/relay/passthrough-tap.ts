import { SSEParser, formatSSE, type SSEMessage } from "@turnpike/schema/sse";
import type { ClientFormat } from "../formats";
import type { PassthroughOptions } from "../protocols";
import { ModelLabel } from "../protocols/model-label";
import { BLANK_LINE, find, findLast, utf8Of } from "./bytes";
import { indexOfQuoted } from "../protocols/sse-scan";
import type { PassthroughReader, PassthroughState } from "../protocols/upstream-protocol";
import type { UsageSink } from "../vocabulary/usage-sink";

/** A step the relay runs inline on each upstream chunk (no stream of its own, so no extra hop). */
export interface InlineTap {
  /**
   * One upstream chunk; `plain` when the line gate in front saw it as whole lines of the plain
   * shape (LF line ends, a space after each `data`/`event` field).
   */
  push(chunk: Uint8Array, out: (piece: Uint8Array | string) => void, plain?: boolean): void;
  end(out: (piece: Uint8Array | string) => void): void;
  /** The stream did not end as a complete reply (cut off, an upstream error, garbage). */
  failed?(): boolean;
  /** The stream's terminal frame has gone out inside relayed bytes: nothing more is read. */
  terminated?(): boolean;
  /** The whole reply, where the upstream's terminal frame carried it (a Responses stream's). */
  reply?(): Record<string, unknown> | undefined;
}

/** An {@link InlineTap} as a TransformStream (tests, and callers that compose streams). */
export function tapStream(tap: InlineTap): TransformStream<Uint8Array, Uint8Array | string> {
  return new TransformStream<Uint8Array, Uint8Array | string>({
    transform(chunk, controller) {
      tap.push(chunk, (piece) => controller.enqueue(piece));
    },
    flush(controller) {
      tap.end((piece) => controller.enqueue(piece));
    },
  });
}

const STREAM = { stream: true };

/** A decoder of whole texts (no state kept between calls), shared by every stream. */
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * A stream's UTF-8 decoder, as one `TextDecoder` in stream mode would decode it, cheaper: a chunk
 * that starts and ends on whole characters (a vendor's chunk ends on a line end) is decoded
 * without the stream mode, which in Bun 1.4.4 costs about 0.15–0.25 µs more per call, per read
 * of a flowing stream (bench/README.md). The first chunk goes through the stream decoder, which
 * drops a leading byte-order mark once, as the single decoder did.
 */
export function chunkDecoder(): (chunk: Uint8Array, last?: boolean) => string {
  // Made at the first chunk that is decoded (a stream read as bytes may never need one).
  let stream: TextDecoder | undefined;
  // No part of a character is carried over (the last chunk ended on an ASCII byte); false at
  // first, so that the first chunk's byte-order mark is dropped by the stream decoder.
  let clean = false;
  return (chunk, last = false) => {
    // The stream's end: whatever part of a character is left comes out as a replacement character.
    stream ??= new TextDecoder();
    if (last) return stream.decode(chunk);
    const ascii = (chunk[chunk.length - 1] ?? 0) < 0x80;
    // Each call a whole text of its own (the shared `utf8`): no byte-order mark dropped mid-stream.
    if (clean && ascii) return utf8.decode(chunk);
    clean = ascii;
    return stream.decode(chunk, STREAM);
  };
}

/**
 * A copy of a string that shares no storage with the string it was cut from (a slice, or a rope
 * of slices, keeps its whole source alive; flattening a rope by slicing it did not let go of it).
 */
function own(s: string): string {
  return Buffer.from(s, "utf8").toString("utf8");
}

/** How many raw regions in a row a stream keeps before it reads them out (or joins them). */
const RUN_OF_REGIONS = 32;

/** How many characters of relayed frames a stream keeps raw before it reads them out into their text. */
export const MAX_HELD_FRAMES = 64 * 1024;

/**
 * Frames the scanner may read: LF line ends, and a space after each field's colon (both legal
 * SSE to omit, and then the full parser reads the stream).
 */
function scannable(region: string): boolean {
  return (
    !region.includes("\r") && !region.includes("data:{") && !region.includes("event:m") && !region.includes("event:e")
  );
}

/**
 * The frames a passthrough relayed, kept raw and read only if they must be counted (the upstream
 * never reported its usage). A long reply's frames are read out into their text once they hold
 * more than MAX_HELD_FRAMES characters, so that what a stream keeps grows with the text it
 * relayed, not with its frames' JSON (several times the text); a short reply is never read.
 */
class KeptFrames {
  /** Relayed frames (one event's JSON, or a raw region of frames) not read yet. */
  private frames: string[] = [];
  private held = 0;
  /** What frames already read out hold: their text, and the last word on how the reply ended. */
  private readText = "";
  private readFinish: string | undefined;

  constructor(private readonly reader: PassthroughReader) {}

  /**
   * Raw regions kept in a row (a flowing stream keeps one per read), closed every RUN_OF_REGIONS:
   * read out into their text where the reader can do it by search (a frame's JSON is many times
   * its text; reading it by the full parser would cost about what the whole relay spends on the
   * stream), else joined into one text (each string of its own costs a header).
   */
  private run: string[] = [];

  /** Keeps one event's JSON, or (`region`) a raw region of whole frames. */
  keep(frame: string, region = false): void {
    if (!region) {
      this.closeRun();
      this.frames.push(frame);
    } else if (this.run.push(frame) >= RUN_OF_REGIONS) this.closeRun();
    this.held += frame.length;
    if (this.held <= MAX_HELD_FRAMES) return;
    this.closeRun();
    this.readText += this.frames.map((f) => this.relayedText(f)).join("");
    this.readFinish = lastFinishReason(this.frames) ?? this.readFinish;
    this.frames = [];
    this.held = 0;
  }

  private closeRun(): void {
    const run = this.run;
    if (run.length === 0) return;
    this.run = [];
    // With nothing unread before them, the regions the reader can read by search are kept as
    // their text; from the first it cannot, the rest are kept as one text, in order.
    let read = 0;
    let text = "";
    if (this.frames.length === 0 && this.reader.quickText)
      for (; read < run.length; read++) {
        const region = run[read]!;
        const t = this.reader.quickText(region);
        if (t === undefined) break;
        text += t;
        this.held -= run[read]!.length;
        const finish = lastFinishReason([region]);
        if (finish !== undefined) this.readFinish = own(finish);
      }
    // Copied into a string of its own: slices of the regions would keep them all alive.
    if (read > 0) this.readText = own(this.readText + text);
    if (read < run.length) this.frames.push(run.slice(read).join(""));
  }

  /** The text of every frame kept. */
  text(): string {
    this.closeRun();
    return this.readText + this.frames.map((f) => this.relayedText(f)).join("");
  }

  /** How the reply ended, by the last frame that said so. */
  finish(): string | undefined {
    // Read where they are: a run is not closed (nor read out) just to be asked this.
    return lastFinishReason(this.run) ?? lastFinishReason(this.frames) ?? this.readFinish;
  }

  /** A frame that does not parse counts as no text: the record must still be written. */
  private relayedText(frame: string): string {
    try {
      return this.reader.text(frame);
    } catch {
      return "";
    }
  }
}

/** The raw usage of a region's frames that carry one, shown to `audit` before any reader rounds it. */
function auditUsage(region: string, audit: (json: string) => void): void {
  for (let at = indexOfQuoted(region, "usage"); at !== -1; ) {
    // A `"usage":null` (every chat chunk but the last says it) has nothing to audit.
    const colon = region.indexOf(":", at);
    if (colon !== -1 && region.startsWith("null", region.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1)) {
      at = indexOfQuoted(region, "usage", colon);
      continue;
    }
    const start = region.lastIndexOf("\n", at) + 1;
    const end = region.indexOf("\n", at);
    const line = region.slice(start, end === -1 ? undefined : end);
    if (line.startsWith("data:")) audit(line.slice(5).trimStart());
    if (end === -1) break;
    at = indexOfQuoted(region, "usage", end);
  }
}

const USAGE = Buffer.from("usage");

/** The frame of a region of whole frames that holds the byte at `at`: its start and end (past its blank line). */
function frameAround(bytes: Uint8Array, at: number): [number, number] {
  // A needle never starts with a line end, so the blank line before it ends before `at`.
  const before = at < 2 ? -1 : findLast(bytes, BLANK_LINE, at - 2);
  const after = find(bytes, BLANK_LINE, at);
  return [before === -1 ? 0 : before + 2, after === -1 ? bytes.length : after + 2];
}

/** Whether the usage named at `at` (the word's first byte) has the value null: its frame has nothing to audit. */
function nullUsage(bytes: Uint8Array, at: number): boolean {
  let i = at + 5;
  if (bytes[i] !== 34 /* " */) return false;
  i++;
  if (bytes[i] === 32) i++;
  if (bytes[i] !== 58 /* : */) return false;
  i++;
  if (bytes[i] === 32) i++;
  return bytes[i] === 110 && bytes[i + 1] === 117 && bytes[i + 2] === 108 && bytes[i + 3] === 108; // null
}

/**
 * The frames of a region of whole plain frames that hold one of `needles`, or a usage that is not
 * null, decoded and joined in their order; "" when none does. What a reader's scan and the usage
 * audit find in the region they find in these, without the rest being decoded.
 */
export function framesHolding(bytes: Uint8Array, needles: readonly Uint8Array[]): string {
  // The frames found, as [start, end) pairs kept in order of their start (a region holds a few).
  const spans: number[] = [];
  const add = (start: number, end: number) => {
    let i = spans.length;
    while (i > 0 && spans[i - 2]! > start) i -= 2;
    if (spans[i - 2] !== start) spans.splice(i, 0, start, end);
  };
  const search = (needle: Uint8Array, skip?: (at: number) => boolean) => {
    for (let at = find(bytes, needle); at !== -1; ) {
      // A frame is decoded once, whatever else it holds; a null usage does not rule out another in its frame.
      if (skip?.(at)) {
        at = find(bytes, needle, at + 1);
        continue;
      }
      const [start, end] = frameAround(bytes, at);
      add(start, end);
      at = find(bytes, needle, end);
    }
  };
  for (const needle of needles) search(needle);
  search(USAGE, (at) => nullUsage(bytes, at));
  let out = "";
  for (let i = 0; i < spans.length; i += 2) out += utf8Of(bytes, spans[i]!, spans[i + 1]!);
  return out;
}

/** A reader's markers as bytes, and the text that names its model (`"model":`, past the quote). */
interface Needles {
  markers: Buffer[];
  model: Buffer;
}

/** Each reader's needles, made once. */
const readerNeedles = new WeakMap<PassthroughReader, Needles>();

function needlesOf(reader: PassthroughReader): Needles | undefined {
  if (!reader.markers) return undefined;
  let needles = readerNeedles.get(reader);
  if (!needles) {
    needles = {
      markers: reader.markers.map((m) => Buffer.from(m)),
      model: Buffer.from(`${reader.modelKey ?? "model"}":`),
    };
    readerNeedles.set(reader, needles);
  }
  return needles;
}

/**
 * The light tap on a same-protocol stream: the protocol's reader finds usage (and the relayed
 * text is kept, in case the client leaves before the upstream reports usage) while the bytes go
 * through untouched. It re-frames events only when it must change one (a usage chunk the client
 * did not ask for, a renamed model id). See decisions/0005-inline-stream-taps.md.
 */
export function passthroughTap(
  reader: PassthroughReader,
  format: ClientFormat,
  sink: UsageSink,
  opts: PassthroughOptions,
  audit: (json: string) => void = () => {},
): InlineTap {
  // The full parser, made only for a stream the scanner cannot read (most never need one).
  let full: SSEParser | undefined;
  const parser = (): SSEParser => {
    full ??= new SSEParser();
    return full;
  };
  const decode = chunkDecoder();
  let raw = reader.raw(opts);
  // Every frame names the catalog id (the vendor may answer with its own snapshot name): while
  // the model is unknown or differs, raw bytes are held and relayed frame by frame, relabelled.
  const label = opts.renameModel === undefined ? undefined : new ModelLabel(opts.renameModel, reader.modelKey);
  let hold = raw && label !== undefined;
  const state: PassthroughState = { finished: false, terminated: false };
  const kept = new KeptFrames(reader);
  const needles = needlesOf(reader);
  sink.relayedLater(() => kept.text());
  sink.finished?.(() => kept.finish());
  const see = (msg: SSEMessage): SSEMessage | undefined => {
    audit(msg.data); // a frame without usage is ruled out by the audit's own first search
    if (msg.data !== "[DONE]") kept.keep(msg.data);
    return reader.inspect(msg, sink, opts, state);
  };
  /** Parsed events relayed: each seen by the reader, re-framed (and relabelled) unless the bytes go raw. */
  const relayParsed = (messages: SSEMessage[]): string => {
    let out = "";
    for (const msg of messages) {
      if (label?.learn(msg.data) && label.upstream !== undefined) sink.answeredBy?.(label.upstream);
      const seen = see(msg);
      if (!raw && seen) out += label ? label.apply(formatSSE(seen)) : formatSSE(seen);
    }
    return out;
  };
  // The scanner: while bytes pass untouched and every line ends in a bare LF (as the vendors'
  // streams do), complete frames are only searched (indexOf) for the few that matter — usage,
  // finish, terminator — and kept as raw text, parsed later only if they must be counted. The
  // first CR (or a field written without its space) sends the stream to the full parser.
  // A reader that can take a frame out of a plain region (a usage chunk the client did not ask
  // for) keeps the scanner where the bytes cannot go raw: each region is relayed as its text.
  const trimming = !raw && reader.trim !== undefined;
  let scanning = raw || trimming;
  let pending = "";
  let named = false;
  let vouched = true;
  /** A trimmed region, relabelled where the vendor names its model differently. */
  const relayText = (text: string, region: string, enqueue: (piece: string) => void) => {
    if (label) {
      if (!named && label.learn(region) && label.upstream !== undefined) {
        named = true;
        sink.answeredBy?.(label.upstream);
      }
      if (label.upstream === undefined || label.changes) text = label.apply(text);
    }
    if (text) enqueue(text);
  };
  // A line cut at a chunk's end, held back while relabelling (the line gate in front of the tap
  // passes whole lines only, so in the relay this stays empty).
  let cutLine = "";
  /**
   * A chunk of a stream whose vendor names its model differently, once the name is known: relayed
   * as the same bytes unless it names the model (a messages stream does so once, in its first
   * frame), so that the rest of the stream is not re-encoded chunk by chunk.
   */
  const relabelled = (chunk: Uint8Array, text: string, enqueue: (piece: Uint8Array | string) => void) => {
    if (!label) return;
    if (cutLine === "" && text.charCodeAt(text.length - 1) === 10 && !label.names(text)) return enqueue(chunk);
    const lines = cutLine + text;
    const lf = lines.lastIndexOf("\n");
    cutLine = lines.slice(lf + 1);
    if (lf !== -1) enqueue(label.apply(lines.slice(0, lf + 1)));
  };
  /**
   * A chunk of whole plain frames on a raw stream, read as bytes: relayed and kept as it came,
   * with only the frames that hold the reader's markers (or a usage) decoded, audited and scanned
   * — and, while the model's name is not known yet, the frame that names it. False where the
   * chunk must be read as text (a frame cut at its end, a name to relabel, none named yet).
   */
  const bytesRegion = (chunk: Uint8Array, enqueue: (piece: Uint8Array | string) => void): boolean => {
    const n = chunk.length;
    if (n < 2 || chunk[n - 1] !== 10 || chunk[n - 2] !== 10 || chunk[0]! >= 0x80 || label?.changes) return false;
    if (hold && label) {
      const model = needles!.model;
      let at = find(chunk, model);
      while (at > 0 && chunk[at - 1] !== 34 /* " */) at = find(chunk, model, at + 1);
      if (at <= 0) return false;
      const [start, end] = frameAround(chunk, at);
      // Learnt here, a name that differs is relabelled by the text path (which finds it known).
      if (!label.learn(utf8Of(chunk, start, end)) || label.changes) return false;
      if (label.upstream !== undefined) sink.answeredBy?.(label.upstream);
      hold = false;
    }
    enqueue(chunk);
    // Kept as its text (whole characters: it starts below 0x80 and ends on a blank line): a flowing
    // stream's reads kept as bytes held ~12 KiB more per stream (1,000 streams of 150 reads; bench/README.md).
    kept.keep(utf8.decode(chunk), true);
    const frames = framesHolding(chunk, needles!.markers);
    if (frames) {
      auditUsage(frames, audit);
      reader.scan(frames, sink, state);
    }
    return true;
  };
  return {
    // A reply that never said how it ended (cut off, or ended by an upstream error) failed.
    failed: () => !state.finished,
    terminated: () => state.terminated,
    reply: () => state.reply,
    push(chunk, enqueue, plain) {
      // Every chunk so far vouched for by the line gate: its regions need no search of their shape.
      if (!plain) vouched = false;
      // Whole plain frames of a raw stream with nothing held before them: searched as bytes.
      if (plain && raw && needles && scanning && pending === "" && bytesRegion(chunk, enqueue)) return;
      let text = decode(chunk);
      if (raw && !hold) {
        if (label?.changes) relabelled(chunk, text, enqueue);
        else enqueue(chunk);
      }
      if (scanning) {
        // Whether this chunk's bytes are all the text held (nothing before it, no character
        // begun in the chunk before): then they can go out as they came.
        const alone = pending === "" && (chunk[0] ?? 0) < 0x80;
        pending += text;
        text = "";
        const cut = pending.lastIndexOf("\n\n");
        if (cut === -1 && !pending.includes("\r")) return;
        const region = cut === -1 ? pending : pending.slice(0, cut + 2);
        const trimmed =
          cut !== -1 && (vouched || scannable(region)) ? (trimming ? reader.trim?.(region, opts) : region) : undefined;
        if (trimmed !== undefined) {
          pending = pending.slice(cut + 2);
          kept.keep(region, true);
          auditUsage(region, audit);
          reader.scan(region, sink, state);
          if (trimming) relayText(trimmed, region, enqueue);
          else if (hold && label) {
            if (label.learn(region) && label.upstream !== undefined) sink.answeredBy?.(label.upstream);
            if (label.upstream === undefined) enqueue(region);
            else {
              // The vendor's model string is known: what is held goes out relabelled, and from
              // here on chunks are relayed as the same bytes, relabelled only where they name it
              // (a messages stream names it once, in its first frame; bench/README.md).
              if (label.changes) {
                // A line cut at the chunk's end waits for its rest (its model pair may be cut too).
                const held = region + pending;
                const lf = held.lastIndexOf("\n");
                cutLine = held.slice(lf + 1);
                enqueue(label.apply(held.slice(0, lf + 1)));
              } else enqueue(alone ? chunk : region + pending);
              hold = false;
            }
          }
          return;
        }
        // Not the plain shape the markers match: the full parser takes it from here.
        scanning = false;
        text = pending;
        pending = "";
        if (hold) raw = false; // the held text is re-framed (and relabelled) below
      }
      const out = relayParsed(parser().push(text));
      if (out) enqueue(out);
    },
    end(enqueue) {
      if (cutLine) enqueue(label ? label.apply(cutLine) : cutLine);
      cutLine = "";
      // A last frame without its blank line: scanned, or parsed if it is not the plain shape.
      let tail: SSEMessage[] = [];
      if (scanning && pending) {
        const trimmed = scannable(pending) ? (trimming ? reader.trim?.(`${pending}\n\n`, opts) : pending) : undefined;
        if (trimmed !== undefined) {
          kept.keep(pending, true);
          auditUsage(pending, audit);
          reader.scan(`${pending}\n\n`, sink, state);
          if (trimming) relayText(trimmed, pending, enqueue);
          else if (hold && label) enqueue(label.learn(pending) ? label.apply(pending) : pending);
        } else {
          tail = parser().push(pending);
          if (hold) raw = false;
        }
        pending = "";
      }
      let out = relayParsed(full ? [...tail, ...full.end()] : tail);
      // An upstream that hung up after saying how the reply ended only skipped its terminator
      // (some vendors never send `[DONE]`): complete it. One that hung up before that was cut
      // off: say so in-band rather than let the end look like a clean finish.
      if (!state.terminated && state.finished) out += format.terminalFrame;
      else if (!state.terminated) out += format.inBandError("The upstream ended the stream without finishing it.");
      if (out) enqueue(out);
    },
  };
}

/** The field each protocol names a reply's end with (messages, chat, generateContent), or a Responses stream's last event. */
const FINISH =
  /"(?:stop_reason|finish_reason|finishReason)":"([A-Za-z_]+)"|"type":"response\.(completed|incomplete|failed)"/g;

/** Why a passed-through stream ended, read from its frames only when asked (telemetry): the last word it said. */
export function lastFinishReason(frames: readonly string[]): string | undefined {
  for (let i = frames.length - 1; i >= 0; i--) {
    const frame = frames[i]!;
    // Most frames say nothing of it: two searches rule them out before the expression runs.
    if (!frame.includes("eason") && !frame.includes('"response.')) continue;
    let found: string | undefined;
    for (const m of frame.matchAll(FINISH)) found = m[1] ?? m[2];
    if (found) return found;
  }
  return undefined;
}
