import type { ClientFormat } from "../formats";
import type { InlineTap } from "./passthrough-tap";

const LF = 10;

/** The longest line held while waiting for its end (a whole event's JSON sits on one line). */
const MAX_LINE = 16 * 1024 * 1024;

const CR = 13;
const COLON = 58;
const SPACE = 32;

/** The first bytes of the field names: `data`, `event`, `id`, `retry`. */
const D = 100;
const E = 101;
const I = 105;
const R = 114;

/** Whether `bytes[at, end)` is `word` followed by a colon (the field names are ASCII). */
function isField(bytes: Uint8Array, at: number, end: number, word: string): boolean {
  if (end - at <= word.length || bytes[at + word.length] !== COLON) return false;
  for (let i = 1; i < word.length; i++) if (bytes[at + i] !== word.charCodeAt(i)) return false;
  return true;
}

/**
 * Whether the line `bytes[at, end)` (its line end removed) may be part of a vendor's event
 * stream: a blank line, a comment, a field, and for `data` a JSON object or array whole on its
 * line, or `[DONE]`. The vendors write each event's JSON on one `data` line; a payload that does
 * not close on its line was cut off, and HTML or any other text is not an event at all. Read as
 * bytes (the markers are ASCII), so that nothing is decoded twice; the first byte picks the one
 * field name the line can be.
 */
export function isEventLine(bytes: Uint8Array, at: number, end: number): boolean {
  if (at === end) return true;
  switch (bytes[at]) {
    case COLON:
      return true;
    case D: {
      if (!isField(bytes, at, end, "data")) return false;
      const first = bytes[at + 5] === SPACE ? at + 6 : at + 5;
      if (first >= end) return false;
      const open = bytes[first];
      const close = bytes[end - 1];
      return (open === 123 /* { */ && close === 125) /* } */ || (open === 91 /* [ */ && close === 93) /* ] */;
    }
    case E:
      return isField(bytes, at, end, "event");
    case I:
      return isField(bytes, at, end, "id");
    case R:
      return isField(bytes, at, end, "retry");
    default:
      return false;
  }
}

/** What the gate saw of the lines it passed. */
export interface LineShape {
  /**
   * Every line ends in a bare LF and every `data`/`event` field has its space after the colon:
   * the plain shape the passthrough tap's scanner reads (it then need not search for the others).
   */
  plain: boolean;
}

/** How far a line that is not `data` is walked for its end before the runtime's search takes over. */
const SHORT_LINE = 256;

/**
 * Where the line starting at `start` ends (its LF, or the end of the bytes). A `data` line (an
 * event's JSON) is searched by the runtime; the others — an event's name, a field, a comment —
 * are a few bytes, walked here: a call into the runtime's search for each of them cost the gate
 * about as much as all the rest of its work (bench/README.md).
 */
function lineEnd(bytes: Uint8Array, start: number): number {
  if (bytes[start] !== D) {
    const stop = Math.min(bytes.length, start + SHORT_LINE);
    for (let i = start; i < stop; i++) if (bytes[i] === LF) return i;
    if (stop === bytes.length) return stop;
  }
  const lf = bytes.indexOf(LF, start);
  return lf === -1 ? bytes.length : lf;
}

/**
 * Where the first line that is not part of an event stream starts, or -1 (LF, CRLF or CR ends).
 * With `shape`, its `plain` is set false where a line is not of the plain shape.
 */
export function firstBadLine(bytes: Uint8Array, shape?: LineShape): number {
  // The next CR is looked up only once passed (the vendors' streams have none).
  let cr = bytes.indexOf(CR);
  if (shape && cr !== -1) shape.plain = false;
  for (let start = 0; start < bytes.length; ) {
    // A blank line (between frames) has nothing to check.
    if (bytes[start] === LF) {
      start++;
      continue;
    }
    if (cr !== -1 && cr < start) cr = bytes.indexOf(CR, start);
    let end = lineEnd(bytes, start);
    if (cr !== -1 && cr < end) end = cr;
    if (!isEventLine(bytes, start, end)) return start;
    // A field of the plain shape has a space after its colon (a field that passed is what its first byte says).
    if (shape?.plain && end > start) {
      const c = bytes[start];
      if (c === D ? bytes[start + 5] !== SPACE : c === E && bytes[start + 6] !== SPACE) shape.plain = false;
    }
    start = bytes[end] === CR && bytes[end + 1] === LF ? end + 2 : end + 1;
  }
  return -1;
}

/**
 * The line gate of a same-protocol stream: bytes go through only as whole lines, each one seen
 * to be part of an event stream, so that garbage arriving mid-stream (after the first event the
 * first-frame guard let through) is never relayed raw: the client gets the in-band error in its
 * own format instead, naming the vendor, and the stream counts as failed. A chunk that ends on a
 * line end — what the vendors send — goes through as the same bytes; only a cut line waits for
 * the rest of itself.
 */
export function sseLineGate(inner: InlineTap, format: ClientFormat, vendor: string): InlineTap {
  let tail: Uint8Array | undefined;
  let refused = false;
  const shape: LineShape = { plain: true };
  const pass = (bytes: Uint8Array, out: (piece: Uint8Array | string) => void) => {
    shape.plain = true;
    const bad = firstBadLine(bytes, shape);
    if (bad === -1) return inner.push(bytes, out, shape.plain);
    // The lines before it go on (they may end the reply: then the rest is simply not read).
    if (bad > 0) inner.push(bytes.subarray(0, bad), out);
    refuse(out);
  };
  const refuse = (out: (piece: Uint8Array | string) => void) => {
    refused = true;
    tail = undefined;
    if (inner.terminated?.()) return;
    out(
      format.inBandError(
        `The ${vendor} upstream sent text that is not server-sent events in the middle of its stream; it was not relayed.`,
      ),
    );
  };
  return {
    push(chunk, out) {
      if (refused) return;
      const joined = tail ? concat(tail, chunk) : chunk;
      const cut = joined.lastIndexOf(LF);
      if (cut === -1) {
        tail = joined;
        if (joined.length > MAX_LINE) refuse(out);
        return;
      }
      tail = cut === joined.length - 1 ? undefined : joined.subarray(cut + 1);
      pass(cut === joined.length - 1 ? joined : joined.subarray(0, cut + 1), out);
    },
    end(out) {
      if (refused) return;
      if (tail) pass(tail, out);
      tail = undefined;
      if (!refused) inner.end(out);
    },
    failed: () => (refused && !inner.terminated?.()) || (inner.failed?.() ?? false),
    reply: () => inner.reply?.(),
    terminated: () => refused || (inner.terminated?.() ?? false),
  };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
