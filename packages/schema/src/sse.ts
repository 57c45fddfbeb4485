/**
 * Server-sent events, the one decoder and the one encoder of the whole repo (gateway, providers,
 * simulator, SDKs and mocks all use these). Plain web streams: runs on Node ≥ 20, Bun, Deno and
 * browsers.
 *
 * Decoding follows the HTML living standard's event-stream rules: lines end in LF, CRLF or a lone
 * CR (generateContent servers use CRLF); `data:` lines of one event are joined with "\n"; lines
 * that start with ":" are comments (keep-alives such as `: ping`); an event is dispatched at a blank
 * line. Bytes are decoded as UTF-8 in streaming mode, so a character split across two network
 * reads survives.
 *
 * @example
 * ```ts
 * import { SSEDecoderStream } from "@turnpike/schema/sse";
 * for await (const ev of response.body!.pipeThrough(new SSEDecoderStream())) {
 *   if (ev.data === "[DONE]") break;
 *   console.log(ev.event, JSON.parse(ev.data));
 * }
 * ```
 */

/** One decoded event. `event` is absent when the stream sent no `event:` line. */
export interface SSEMessage {
  event?: string;
  data: string;
  id?: string;
  retry?: number;
}

/** Incremental decoder; feed it text, get complete events back. Exposed for non-stream callers. */
export class SSEParser {
  private buffer = "";
  /** The event's data so far; undefined until a `data:` line came. */
  private data: string | undefined;
  private event: string | undefined;
  private id: string | undefined;
  private retry: number | undefined;
  private sawCR = false;

  /** Feeds a piece of text; returns the events it completed. */
  push(text: string): SSEMessage[] {
    const out: SSEMessage[] = [];
    let s = text;
    // A CRLF split across two reads: the LF belongs to the CR already seen.
    if (this.sawCR && s.charCodeAt(0) === 10) s = s.slice(1);
    this.sawCR = false;
    // Line ends are found with indexOf (native, fast) rather than a loop over every character;
    // the next CR and LF positions are each searched again only once passed.
    let start = 0;
    let lf = s.indexOf("\n");
    let cr = s.indexOf("\r");
    while (lf !== -1 || cr !== -1) {
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      const line = this.buffer.length ? this.buffer + s.slice(start, end) : s.slice(start, end);
      this.buffer = "";
      this.line(line, out);
      let next = end + 1;
      if (end === cr) {
        if (next < s.length) {
          if (s.charCodeAt(next) === 10) next++;
        } else {
          this.sawCR = true;
        }
      }
      start = next;
      if (lf !== -1 && lf < start) lf = s.indexOf("\n", start);
      if (cr !== -1 && cr < start) cr = s.indexOf("\r", start);
    }
    if (start < s.length) this.buffer += s.slice(start);
    return out;
  }

  /** Ends the input: a final event without its blank line is still dispatched. */
  end(): SSEMessage[] {
    const out: SSEMessage[] = [];
    if (this.buffer.length > 0) {
      const line = this.buffer;
      this.buffer = "";
      this.line(line, out);
    }
    this.dispatch(out);
    return out;
  }

  private line(line: string, out: SSEMessage[]): void {
    if (line === "") {
      this.dispatch(out);
      return;
    }
    const c0 = line.charCodeAt(0);
    if (c0 === 58 /* ":" */) return; // comment / keep-alive
    // Fast paths for the two fields nearly every line is (`data: …`, `event: …`).
    if (c0 === 100 /* d */ && line.startsWith("data:")) {
      this.addData(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
      return;
    }
    if (c0 === 101 /* e */ && line.startsWith("event:")) {
      this.event = line.charCodeAt(6) === 32 ? line.slice(7) : line.slice(6);
      return;
    }
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    switch (field) {
      case "data":
        this.addData(value);
        break;
      case "event":
        this.event = value;
        break;
      case "id":
        if (!value.includes("\0")) this.id = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
        break; // unknown fields are ignored, per the standard
    }
  }

  /** Lines of one event's data are joined with "\n". */
  private addData(value: string): void {
    this.data = this.data === undefined ? value : this.data + "\n" + value;
  }

  private dispatch(out: SSEMessage[]): void {
    if (this.data === undefined) {
      this.event = undefined;
      return;
    }
    const msg: SSEMessage = { data: this.data };
    if (this.event !== undefined) msg.event = this.event;
    if (this.id !== undefined) msg.id = this.id;
    if (this.retry !== undefined) msg.retry = this.retry;
    out.push(msg);
    this.data = undefined;
    this.event = undefined;
  }
}

/** Bytes (or text) in, {@link SSEMessage}s out. */
export class SSEDecoderStream extends TransformStream<Uint8Array | string, SSEMessage> {
  constructor() {
    const parser = new SSEParser();
    const decoder = new TextDecoder("utf-8");
    super({
      transform(chunk, controller) {
        const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
        for (const m of parser.push(text)) controller.enqueue(m);
      },
      flush(controller) {
        const rest = decoder.decode();
        if (rest) for (const m of parser.push(rest)) controller.enqueue(m);
        for (const m of parser.end()) controller.enqueue(m);
      },
    });
  }
}

/**
 * Formats one event. `data` that holds newlines is split over several `data:` lines, so the
 * decoder above (and any conforming one) gets the same text back.
 */
export function formatSSE(msg: SSEMessage): string {
  let out = "";
  if (msg.event !== undefined) out += `event: ${msg.event}\n`;
  if (msg.id !== undefined) out += `id: ${msg.id}\n`;
  if (msg.retry !== undefined) out += `retry: ${msg.retry}\n`;
  const data = msg.data;
  if (data.indexOf("\n") === -1 && data.indexOf("\r") === -1) {
    out += `data: ${data}\n\n`;
  } else {
    for (const line of data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
    out += "\n";
  }
  return out;
}

/** A comment line, used as a keep-alive that every client ignores. */
export function formatSSEComment(text: string): string {
  return `: ${text}\n\n`;
}

const sharedEncoder = new TextEncoder();

/** {@link SSEMessage}s (or ready-made frames as strings) in, UTF-8 bytes out. */
export class SSEEncoderStream extends TransformStream<SSEMessage | string, Uint8Array> {
  constructor() {
    super({
      transform(msg, controller) {
        controller.enqueue(sharedEncoder.encode(typeof msg === "string" ? msg : formatSSE(msg)));
      },
    });
  }
}
