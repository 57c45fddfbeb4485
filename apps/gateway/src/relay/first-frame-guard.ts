import type { ClientFormat } from "../formats";
import type { InlineTap } from "./passthrough-tap";

/** How much of a stream's start is held while waiting for its first event. */
const MAX_HELD = 64 * 1024;
/**
 * How much of a held chunk is decoded at a time while looking for the first frame's end: the
 * vendors' first frames are 150–500 bytes, and a first read may hold the whole reply.
 */
const DECODE_STEP = 512;

/** A line of an SSE frame: a field (`event`, `data`, `id`, `retry`) or a comment. */
const FIELD = /^(?:event|data|id|retry)(?::|$)|^:/;

/** Any line end SSE allows. */
const LINE_END = /\r\n|\r|\n/g;

/**
 * The first frame's verdict: an event worth relaying, nothing yet (comments), or garbage. Read
 * line by line in one loop (no arrays or callbacks: this runs once per stream).
 */
function judge(frame: string): "event" | "comment" | "garbage" {
  const text = frame.includes("\r") ? frame.replace(LINE_END, "\n") : frame;
  let data: string | undefined;
  let fields = false;
  for (let at = 0; at < text.length; ) {
    let end = text.indexOf("\n", at);
    if (end < 0) end = text.length;
    if (end > at) {
      const line = text.slice(at, end);
      if (!FIELD.test(line)) return "garbage";
      if (line.charCodeAt(0) !== 58 /* : */) fields = true;
      if (line.startsWith("data")) {
        // `data`, then an optional colon, then an optional space.
        let i = 4;
        if (line.charCodeAt(i) === 58) i++;
        if (line.charCodeAt(i) === 32) i++;
        const value = line.slice(i);
        data = data === undefined ? value : `${data}\n${value}`;
      }
    }
    at = end + 1;
  }
  if (data === undefined) return fields ? "garbage" : "comment";
  if (data === "[DONE]") return "event";
  try {
    JSON.parse(data);
    return "event";
  } catch {
    return "garbage";
  }
}

/**
 * Holds the start of an upstream stream until its first event has been seen to be SSE with a
 * JSON payload. A vendor that answers 200 with HTML, an empty body, truncated JSON or any other
 * non-SSE text has none of it relayed: the client gets only the in-band error in its own format,
 * naming the vendor, and the stream counts as failed. Past the first event the bytes flow
 * untouched (the inner tap's own checks take over), so this costs one parse per stream.
 */
export function firstFrameGuard(inner: InlineTap, format: ClientFormat, vendor: string): InlineTap {
  // Dropped once the stream is judged: an open stream holds nothing of the guard's.
  let decoder: TextDecoder | undefined = new TextDecoder();
  let held: Uint8Array[] = [];
  let text = "";
  let state: "holding" | "open" | "refused" = "holding";
  const refuse = (out: (piece: string) => void, what: string) => {
    state = "refused";
    held = [];
    text = "";
    decoder = undefined;
    out(
      format.inBandError(
        `The ${vendor} upstream answered 200 with ${what}, not a stream of events; nothing of it was relayed.`,
      ),
    );
  };
  const release = (out: (piece: Uint8Array | string) => void) => {
    state = "open";
    // What was decoded to judge the start is not needed again: an open stream holds none of it.
    text = "";
    decoder = undefined;
    for (const c of held) inner.push(c, out);
    held = [];
  };
  /**
   * Where the frame starting at `from` ends (its blank line: LF LF, CR CR or CRLF CRLF), and the
   * blank line's length. A plain loop: it stops at the first frame's end, where a search for each
   * kind of blank line would run through all of a large first read.
   */
  const frameEnd = (from: number): [number, number] | undefined => {
    // Without a CR in what is held (the vendors' streams), the runtime's own search finds it.
    if (!text.includes("\r")) {
      const at = text.indexOf("\n\n", from);
      return at === -1 ? undefined : [at, 2];
    }
    for (let i = from; i < text.length - 1; i++) {
      const c = text.charCodeAt(i);
      if (c === 10 && text.charCodeAt(i + 1) === 10) return [i, 2];
      if (c !== 13) continue;
      if (text.charCodeAt(i + 1) === 13) return [i, 2];
      if (text.charCodeAt(i + 1) === 10 && text.charCodeAt(i + 2) === 13 && text.charCodeAt(i + 3) === 10)
        return [i, 4];
    }
    return undefined;
  };
  /**
   * Looks at the complete frames held so far, from the first, only as far as the first that is
   * not a comment (a first read may hold many frames); true once the stream's fate is decided.
   */
  const decide = (out: (piece: Uint8Array | string) => void, atEnd: boolean): boolean => {
    for (let from = 0; from < text.length; ) {
      const end = frameEnd(from);
      if (end === undefined && !atEnd) break;
      const verdict = judge(text.slice(from, end?.[0]));
      if (verdict === "comment") {
        if (end === undefined) break;
        from = end[0] + end[1];
        continue;
      }
      if (verdict === "garbage") {
        refuse(out, /^\s*</.test(text) ? "an HTML or XML page" : "text that is not server-sent events");
        return true;
      }
      release(out);
      return true;
    }
    if (atEnd) {
      refuse(out, text.trim() === "" ? "an empty body" : "no event");
      return true;
    }
    if (text.length > MAX_HELD) {
      refuse(out, "text that is not server-sent events");
      return true;
    }
    return false;
  };
  return {
    push(chunk, out) {
      if (state === "open") return inner.push(chunk, out);
      if (state === "refused") return;
      held.push(chunk);
      // Only the start is read, a slice at a time, until the first event is judged: a first read
      // may hold the whole reply, and its first frame is a few hundred bytes. Past MAX_HELD
      // without an event the stream is refused anyway.
      for (let at = 0; at < chunk.length && text.length <= MAX_HELD; at += DECODE_STEP) {
        text += decoder!.decode(
          chunk.subarray(at, Math.min(chunk.length, at + DECODE_STEP, at + MAX_HELD + 1 - text.length)),
          { stream: true },
        );
        if (decide(out, false)) return;
      }
    },
    end(out) {
      if (state === "holding") {
        text += decoder!.decode();
        decide(out, true);
      }
      if (state === "open") inner.end(out);
    },
    failed: () => state === "refused" || (inner.failed?.() ?? false),
    terminated: () => state === "refused" || (inner.terminated?.() ?? false),
  };
}
