import type { MessagesStreamEvent } from "@turnpike/schema";
import type { TokenCounts } from "../vocabulary/usage-sink";
import type { StreamSpan } from "./stream-span";

/** An overlap shorter than this is taken for a coincidence, not a repeat (unless it is the whole partial). */
const MIN_OVERLAP = 8;
/** How much of the partial's end a repeated start is looked for in. */
const OVERLAP_WINDOW = 4000;

/**
 * The length of the continuation's start that repeats the end of what was received: the longest
 * prefix of `next` that `received` ends with, if long enough to be a repeat (undefined: `next`
 * may still grow into one, so wait for more).
 */
export function overlapOf(received: string, next: string, final: boolean): number | undefined {
  const tail = received.length > OVERLAP_WINDOW ? received.slice(-OVERLAP_WINDOW) : received;
  // Still a possible repeat of something longer: wait, unless the block or reply ended.
  if (!final && next.length < tail.length && tail.includes(next)) return undefined;
  for (let k = Math.min(tail.length, next.length); k > 0; k--) {
    if (k < MIN_OVERLAP && k !== received.length) break;
    if (tail.endsWith(next.slice(0, k))) return k;
  }
  return 0;
}

/**
 * A continuation's pivot events made part of the stream the client is already reading: its
 * `message_start` dropped (the client has one), its first text block joined to the text block
 * the cut left open (or numbered after the blocks received), any repeat of the received text at
 * its start taken off, every later block numbered on from the client's last index, thinking
 * blocks dropped (a continuation asks for none), and its closing usage the sum of every attempt.
 */
export class ContinuationRebase {
  /** Continuation block index → the client's index (-1: dropped). */
  private readonly map = new Map<number, number>();
  private nextIndex: number;
  /** The text block the cut left open, until the continuation writes to it or closes it. */
  private open: number | undefined;
  /** The continuation's first text block, while its start is held to see whether it repeats. */
  private held: { index: number; client: number; text: string; started: boolean } | undefined;
  private firstText = true;
  private readonly received: string;
  /** The received text ended in whitespace a prefill had to leave out: the continuation's leading whitespace repeats it. */
  private readonly trimmed: boolean;

  constructor(
    span: StreamSpan,
    private readonly carried: () => Readonly<TokenCounts>,
    /** This attempt's own counts so far (its tally). */
    private readonly own: () => Readonly<TokenCounts>,
    prefilled: boolean,
  ) {
    this.nextIndex = span.nextIndex;
    const open = span.open;
    this.open = open?.kind === "text" ? open.index : undefined;
    this.received = span.text();
    this.trimmed = prefilled && /\s$/.test(this.received);
  }

  push(ev: MessagesStreamEvent, emit: (ev: MessagesStreamEvent) => void): void {
    switch (ev.type) {
      case "message_start":
        return;
      case "content_block_start": {
        const type = ev.content_block.type;
        if (type === "thinking" || type === "redacted_thinking") {
          this.map.set(ev.index, -1);
          return;
        }
        if (type === "text" && this.firstText) {
          this.firstText = false;
          const joined = this.open !== undefined;
          const client = joined ? this.open! : this.nextIndex++;
          if (joined) this.open = undefined;
          this.map.set(ev.index, client);
          const text = (ev.content_block as { text?: string }).text ?? "";
          this.held = { index: ev.index, client, text, started: joined };
          return;
        }
        this.closeOpen(emit);
        const client = this.nextIndex++;
        this.map.set(ev.index, client);
        emit({ ...ev, index: client });
        return;
      }
      case "content_block_delta": {
        const client = this.map.get(ev.index);
        if (client === undefined || client === -1) return;
        const d = ev.delta as { type: string; text?: string };
        if (this.held?.index === ev.index && d.type === "text_delta") {
          this.held.text += d.text ?? "";
          this.release(false, emit);
          return;
        }
        emit({ ...ev, index: client });
        return;
      }
      case "content_block_stop": {
        const client = this.map.get(ev.index);
        if (client === undefined || client === -1) return;
        if (this.held?.index === ev.index) {
          const started = this.release(true, emit);
          if (!started) return; // nothing new in it: the block never was
        }
        emit({ ...ev, index: client });
        return;
      }
      case "message_delta": {
        this.closeOpen(emit);
        const before = this.carried();
        const own = this.own();
        const usage = { ...(ev.usage ?? {}) } as Record<string, unknown>;
        usage.output_tokens = before.output_tokens + Math.max(own.output_tokens, Number(usage.output_tokens ?? 0));
        usage.input_tokens = before.input_tokens + Math.max(own.input_tokens, Number(usage.input_tokens ?? 0));
        emit({ ...ev, usage } as MessagesStreamEvent);
        return;
      }
      default:
        emit(ev);
        return;
    }
  }

  /** The text block the cut left open is closed before anything else is written. */
  private closeOpen(emit: (ev: MessagesStreamEvent) => void): void {
    if (this.open === undefined) return;
    emit({ type: "content_block_stop", index: this.open });
    this.open = undefined;
  }

  /**
   * The held start of the first text block, once it is known whether it repeats the received
   * text: the repeat taken off, the rest written (with the block's start, for a new block).
   * Returns whether the block has started for the client.
   */
  private release(final: boolean, emit: (ev: MessagesStreamEvent) => void): boolean {
    const h = this.held!;
    const cut = overlapOf(this.received, h.text, final);
    if (cut === undefined) return h.started;
    this.held = undefined;
    let text = h.text.slice(cut);
    if (this.trimmed && cut === 0) text = text.replace(/^\s+/, "");
    if (text === "" && !h.started) return false;
    if (!h.started) emit({ type: "content_block_start", index: h.client, content_block: { type: "text", text: "" } });
    if (text !== "") emit({ type: "content_block_delta", index: h.client, delta: { type: "text_delta", text } });
    return true;
  }
}
