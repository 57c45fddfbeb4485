import type { MessagesStreamEvent } from "@turnpike/schema";

/** What a content block is, as far as a cut stream is concerned. */
export type SpanBlockKind = "text" | "tool" | "thinking" | "other";

/** One content block the client has received (a part of it, while it is open). */
export interface SpanBlock {
  index: number;
  kind: SpanBlockKind;
  /** The block's text so far: its text, its thinking, or its tool call's argument JSON. */
  text: string;
  open: boolean;
  /** A thinking block whose signature arrived (only then may it be sent back to its vendor). */
  signed: boolean;
  /** A tool call's id and name. */
  id?: string | undefined;
  name?: string | undefined;
}

/** The field of a content delta that carries its text, per delta type (undefined: none). */
export const DELTA_TEXT_FIELD: Readonly<Record<string, "text" | "thinking" | "partial_json" | undefined>> = {
  text_delta: "text",
  thinking_delta: "thinking",
  input_json_delta: "partial_json",
};

function kindOf(type: string): SpanBlockKind {
  if (type === "text") return "text";
  if (type === "tool_use") return "tool";
  if (type === "thinking") return "thinking";
  return "other";
}

/**
 * What the client of one stream has received, as pivot events: the message's id, each content
 * block (its kind, index, text so far, whether it is still open, a thinking block's signature,
 * a tool call's id) and whether the reply said how it ended. Kept in one place so that a
 * continuation (relay/continuing-tap.ts) knows where a cut stream stands; it exists only on the
 * streams of routes where continuation is on (DESIGN §11, "Streams are spans of text with an owner").
 * Each event costs a switch and, for a delta, one string append.
 */
export class StreamSpan {
  messageId: string | undefined;
  /** The input count the client was told in `message_start`. */
  inputTokens = 0;
  readonly blocks: SpanBlock[] = [];
  /** The stop reason, once `message_delta` went out (the reply is then whole but for its last frame). */
  stopReason: string | undefined;
  stopped = false;

  see(ev: MessagesStreamEvent): void {
    switch (ev.type) {
      case "message_start":
        this.messageId = ev.message.id;
        this.inputTokens = ev.message.usage?.input_tokens ?? 0;
        return;
      case "content_block_start": {
        const b = ev.content_block as { type: string; id?: string; name?: string; text?: string; thinking?: string };
        this.blocks.push({
          index: ev.index,
          kind: kindOf(b.type),
          text: b.text ?? b.thinking ?? "",
          open: true,
          signed: false,
          id: b.id,
          name: b.name,
        });
        return;
      }
      case "content_block_delta": {
        const block = this.at(ev.index);
        if (!block) return;
        const d = ev.delta as Record<string, unknown> & { type: string };
        if (d.type === "signature_delta") {
          block.signed = true;
          return;
        }
        const field = DELTA_TEXT_FIELD[d.type];
        const piece = field ? d[field] : undefined;
        if (typeof piece === "string") block.text += piece;
        return;
      }
      case "content_block_stop": {
        const block = this.at(ev.index);
        if (block) block.open = false;
        return;
      }
      case "message_delta":
        if (ev.delta.stop_reason) this.stopReason = ev.delta.stop_reason;
        return;
      case "message_stop":
        this.stopped = true;
        return;
      default:
        return;
    }
  }

  /** The block with this index (the last block is the one a stream writes to, so it is looked at first). */
  at(index: number): SpanBlock | undefined {
    const last = this.blocks.at(-1);
    if (last?.index === index) return last;
    return this.blocks.find((b) => b.index === index);
  }

  /** The open block, if the stream was cut inside one. */
  get open(): SpanBlock | undefined {
    const last = this.blocks.at(-1);
    return last?.open ? last : undefined;
  }

  /** The index the next new block takes. */
  get nextIndex(): number {
    const last = this.blocks.at(-1);
    return last ? last.index + 1 : 0;
  }

  /** Every text block's text, in order: what the reply has said so far. */
  text(): string {
    let out = "";
    for (const b of this.blocks) if (b.kind === "text") out += b.text;
    return out;
  }
}
