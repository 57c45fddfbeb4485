import { chatUsageToTotals } from "@turnpike/providers";
import { SSEParser, formatSSE, type SSEMessage } from "@turnpike/schema/sse";
import type { Meter } from "../usage/meter";
import { messagesUsageToTokens } from "../usage/usage-map";
import type { Dialect } from "./dialect";
import { inBandError } from "./relay-stream";

export interface PassthroughOptions {
  /** The chat client asked for the usage chunk (Turnpike always asks the upstream for it). */
  includeUsage: boolean;
  /** The id to show the client when the upstream model id differs from it. */
  renameModel: string | undefined;
}

/** A step the relay runs inline on each upstream chunk (no stream of its own, so no extra hop). */
export interface InlineTap {
  push(chunk: Uint8Array, out: (piece: Uint8Array | string) => void): void;
  end(out: (piece: Uint8Array | string) => void): void;
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

/**
 * The light tap on a same-protocol stream: reads usage (and the relayed text, in case the
 * client leaves before the upstream reports usage) while the bytes go through untouched. It
 * re-frames events only when it must change one: the usage chunk a chat client did not ask for
 * is dropped, and a renamed model id is put back.
 */
export function passthroughTap(dialect: Dialect, meter: Meter, opts: PassthroughOptions): InlineTap {
  const parser = new SSEParser();
  const decoder = new TextDecoder();
  const raw = opts.renameModel === undefined && (dialect === "messages" || opts.includeUsage);
  const inspect = dialect === "messages" ? inspectMessagesEvent : inspectChatEvent;
  const deltaText = dialect === "messages" ? messagesDeltaText : chatDeltaText;
  // A relayed piece is either one event's JSON (parser path) or raw SSE text (scanner path).
  meter.frameText = (piece) => (piece.charCodeAt(0) === 123 /* { */ ? deltaText(piece) : regionText(dialect, piece));
  let terminated = false;
  // The upstream said how the reply ended (messages: `message_delta`; chat: a `finish_reason`).
  let finished = false;
  const see = (msg: SSEMessage): SSEMessage | undefined => {
    if (dialect === "messages") {
      if (msg.event === "message_stop" || msg.event === "error") terminated = true;
      else if (msg.event === "message_delta") finished = true;
    } else if (msg.data === "[DONE]") terminated = true;
    else if (!finished && msg.data.includes('"finish_reason":"')) finished = true;
    return inspect(msg, meter, opts);
  };
  // The scanner: while bytes pass untouched and every line ends in a bare LF (as the vendors'
  // streams do), complete frames are only searched (indexOf) for the few that matter — usage,
  // finish, terminator — and kept as raw text, parsed later only if they must be counted. The
  // first CR (or a field written without its space) sends the stream to the full parser.
  let scanning = raw;
  let pending = "";
  const state = {
    finished: () => {
      finished = true;
    },
    terminated: () => {
      terminated = true;
    },
  };
  const scan = dialect === "messages" ? scanMessages : scanChat;
  return {
    push(chunk, enqueue) {
      if (raw) enqueue(chunk);
      let text = decoder.decode(chunk, { stream: true });
      if (scanning) {
        pending += text;
        text = "";
        const cut = pending.lastIndexOf("\n\n");
        if (cut === -1 && !pending.includes("\r")) return;
        const region = cut === -1 ? pending : pending.slice(0, cut + 2);
        if (cut !== -1 && scannable(region)) {
          pending = pending.slice(cut + 2);
          meter.relayedFrames.push(region);
          scan(region, meter, state);
          return;
        }
        // Not the plain shape the markers match: the full parser takes it from here.
        scanning = false;
        text = pending;
        pending = "";
      }
      let out = "";
      for (const msg of parser.push(text)) {
        const kept = see(msg);
        if (!raw && kept) out += formatSSE(kept);
      }
      if (out) enqueue(out);
    },
    end(enqueue) {
      // A last frame without its blank line: scanned, or parsed if it is not the plain shape.
      let tail: SSEMessage[] = [];
      if (scanning && pending) {
        if (scannable(pending)) {
          meter.relayedFrames.push(pending);
          scan(`${pending}\n\n`, meter, state);
        } else {
          tail = parser.push(pending);
        }
        pending = "";
      }
      let out = "";
      for (const msg of [...tail, ...parser.end()]) {
        const kept = see(msg);
        if (!raw && kept) out += formatSSE(kept);
      }
      // An upstream that hung up after saying how the reply ended only skipped its terminator
      // (some vendors never send `[DONE]`): complete it. One that hung up before that was cut
      // off: say so in-band rather than let the end look like a clean finish.
      if (!terminated && finished) out += dialect === "messages" ? formatSSE({ event: "message_stop", data: '{"type":"message_stop"}' }) : formatSSE({ data: "[DONE]" });
      else if (!terminated) out += inBandError(dialect, "The upstream ended the stream without finishing it.");
      if (out) enqueue(out);
    },
  };
}

/**
 * Frames the scanner may read: LF line ends, and a space after each field's colon (both legal
 * SSE to omit, and then the full parser reads the stream).
 */
function scannable(region: string): boolean {
  return !region.includes("\r") && !region.includes("data:{") && !region.includes("event:m") && !region.includes("event:e");
}

interface ScanState {
  finished(): void;
  terminated(): void;
}

/** The `data:` payload of the frame whose `event:` line starts at `at`. */
function dataAfter(region: string, at: number): string | undefined {
  const start = region.indexOf("\ndata: ", at);
  if (start === -1) return undefined;
  const end = region.indexOf("\n", start + 7);
  return region.slice(start + 7, end === -1 ? undefined : end);
}

/** Each occurrence of `marker` in `region`. */
function each(region: string, marker: string, fn: (at: number) => void): void {
  for (let i = region.indexOf(marker); i !== -1; i = region.indexOf(marker, i + marker.length)) fn(i);
}

/** Complete messages-format frames: usage from start and delta, the end from stop or error. */
function scanMessages(region: string, meter: Meter, state: ScanState): void {
  each(region, "event: message_start\n", (at) => {
    const data = dataAfter(region, at);
    if (!data) return;
    const usage = messagesUsageToTokens((JSON.parse(data) as { message?: { usage?: unknown } }).message?.usage);
    delete usage.output_tokens; // a placeholder at the start
    meter.report(usage);
  });
  each(region, "event: message_delta\n", (at) => {
    state.finished();
    const data = dataAfter(region, at);
    const ev = data ? (JSON.parse(data) as { usage?: unknown }) : {};
    if (!ev.usage) return;
    const usage = messagesUsageToTokens(ev.usage);
    meter.report(usage);
    if ((usage.output_tokens ?? 0) > 0) meter.reported = true;
  });
  if (region.includes("event: message_stop\n") || region.includes("event: error\n")) state.terminated();
}

/** Complete chat frames: usage chunks, the finish, `[DONE]`. */
function scanChat(region: string, meter: Meter, state: ScanState): void {
  each(region, '"usage":{', (at) => {
    const start = region.lastIndexOf("\n", at) + 1;
    const end = region.indexOf("\n", at);
    const line = region.slice(start, end === -1 ? undefined : end);
    if (!line.startsWith("data: ")) return;
    const chunk = JSON.parse(line.slice(6)) as { usage?: unknown };
    if (!chunk.usage) return;
    meter.report(chatUsageToTotals(chunk.usage));
    meter.reported = true;
  });
  if (region.includes('"finish_reason":"')) state.finished();
  if (region.includes("data: [DONE]")) state.terminated();
}

/** The text carried by a piece of raw SSE (parsed only when relayed text must be counted). */
function regionText(dialect: Dialect, region: string): string {
  const parser = new SSEParser();
  let text = "";
  for (const msg of [...parser.push(region), ...parser.end()]) {
    if (dialect === "messages" ? msg.event === "content_block_delta" : msg.data !== "[DONE]") {
      text += dialect === "messages" ? messagesDeltaText(msg.data) : chatDeltaText(msg.data);
    }
  }
  return text;
}

/** The text of a messages-format `content_block_delta` (read only if it must be counted). */
function messagesDeltaText(data: string): string {
  const d = (JSON.parse(data) as { delta?: Record<string, unknown> }).delta ?? {};
  const text = d.text ?? d.partial_json ?? d.thinking;
  return typeof text === "string" ? text : "";
}

/** The text of a chat chunk's delta: content, reasoning and tool arguments. */
function chatDeltaText(data: string): string {
  const chunk = JSON.parse(data) as {
    choices?: { delta?: { content?: unknown; reasoning_content?: unknown; tool_calls?: { function?: { arguments?: unknown } }[] } }[];
  };
  const delta = chunk.choices?.[0]?.delta;
  if (!delta) return "";
  let text = "";
  if (typeof delta.content === "string") text += delta.content;
  if (typeof delta.reasoning_content === "string") text += delta.reasoning_content;
  for (const t of delta.tool_calls ?? []) if (typeof t.function?.arguments === "string") text += t.function.arguments;
  return text;
}

function inspectMessagesEvent(msg: SSEMessage, meter: Meter, opts: PassthroughOptions): SSEMessage | undefined {
  switch (msg.event) {
    case "content_block_delta":
      // Kept raw: parsed only if the client leaves before the upstream reports usage.
      meter.relayedFrames.push(msg.data);
      return msg;
    case "message_start": {
      const ev = JSON.parse(msg.data) as { message?: { usage?: unknown; model?: string } };
      const usage = messagesUsageToTokens(ev.message?.usage);
      // The start event's output count is a placeholder; only its input side is real.
      delete usage.output_tokens;
      meter.report(usage);
      if (opts.renameModel !== undefined && ev.message) {
        ev.message.model = opts.renameModel;
        return { ...msg, data: JSON.stringify(ev) };
      }
      return msg;
    }
    case "message_delta": {
      const ev = JSON.parse(msg.data) as { usage?: unknown };
      if (ev.usage) {
        const usage = messagesUsageToTokens(ev.usage);
        meter.report(usage);
        if ((usage.output_tokens ?? 0) > 0) meter.reported = true;
      }
      return msg;
    }
    default:
      return msg;
  }
}

function inspectChatEvent(msg: SSEMessage, meter: Meter, opts: PassthroughOptions): SSEMessage | undefined {
  if (msg.data === "[DONE]") return msg;
  // Only chunks that carry usage (or must be renamed) are parsed; the rest pass as text.
  if (opts.renameModel === undefined && !msg.data.includes('"usage":{')) {
    meter.relayedFrames.push(msg.data);
    return msg;
  }
  const chunk = JSON.parse(msg.data) as { model?: string; usage?: unknown; choices?: unknown[] };
  meter.relayedFrames.push(msg.data);
  if (chunk.usage) {
    meter.report(chatUsageToTotals(chunk.usage));
    meter.reported = true;
    // The usage chunk the client did not ask for: Turnpike asked for it, so it is not relayed.
    if (!opts.includeUsage && Array.isArray(chunk.choices) && chunk.choices.length === 0) return undefined;
    if (!opts.includeUsage) {
      delete chunk.usage;
      return { ...msg, data: JSON.stringify(renamed(chunk, opts)) };
    }
  }
  if (opts.renameModel !== undefined) return { ...msg, data: JSON.stringify(renamed(chunk, opts)) };
  return msg;
}

function renamed<T extends { model?: string }>(chunk: T, opts: PassthroughOptions): T {
  if (opts.renameModel !== undefined) chunk.model = opts.renameModel;
  return chunk;
}
