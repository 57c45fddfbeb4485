/**
 * Emits a well-formed messages-format event stream (docs/protocols.md §1.7) for the translating
 * state machines: `message_start` once, blocks with contiguous 0-based indexes, one open block at
 * a time, `message_delta` then `message_stop`, or an `error` that ends the stream without
 * `message_stop`. Also keeps the usage accumulator every stream exposes.
 */
import type { MessageDeltaEvent, MessagesStreamEvent, StopReason } from "@turnpike/schema";
import { renderMessagesError, type GatewayError } from "../errors.js";
import { randomId } from "../ids.js";
import { countTextTokens } from "../tokenize.js";
import type { OnUsage, UsageTotals } from "../usage.js";

export interface MessagesStreamContext {
  /** The model id the client asked for (shown in `message_start`). */
  model: string;
  /** The gateway's local count of the prompt, reported in `message_start` (§4.4). */
  inputTokens?: number | undefined;
  /** Called once, when the stream ends or is cancelled, with the final usage. */
  onUsage?: OnUsage | undefined;
}

type BlockKind = "text" | "thinking" | "tool";

export class MessagesEventBuilder {
  private started = false;
  private nextIndex = 0;
  private open: { kind: BlockKind; index: number; signature?: string } | null = null;
  private ended = false;
  private usageReported = false;
  private upstreamUsage: UsageTotals | undefined;
  /** Output text relayed so far, for the usage estimate when the upstream reports none. */
  private readonly relayed: string[] = [];
  toolUsed = false;

  constructor(
    private readonly emit: (ev: MessagesStreamEvent) => void,
    private readonly ctx: MessagesStreamContext,
  ) {}

  get isStarted(): boolean {
    return this.started;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  get openKind(): BlockKind | undefined {
    return this.open?.kind;
  }

  get openIndex(): number | undefined {
    return this.open?.index;
  }

  /** The latest upstream-reported usage (cumulative: overwrite, never add). */
  setUsage(u: UsageTotals): void {
    this.upstreamUsage = u;
  }

  /** Best-known usage now: the upstream's, or a local estimate. */
  usage(): UsageTotals {
    if (this.upstreamUsage) return this.upstreamUsage;
    return {
      input_tokens: this.ctx.inputTokens ?? 0,
      output_tokens: countTextTokens(this.relayed.join("")),
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
      estimated: true,
    };
  }

  start(upstreamId?: unknown): void {
    if (this.started || this.ended) return;
    this.started = true;
    const id =
      typeof upstreamId === "string" && /^[A-Za-z0-9_-]+$/.test(upstreamId) ? `msg_${upstreamId}` : randomId("msg_");
    this.emit({
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model: this.ctx.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // Chat and generateContent upstreams report usage only at the end: the input side is the
        // gateway's own count, the real numbers follow in message_delta (§4.4).
        usage: {
          input_tokens: this.ctx.inputTokens ?? 0,
          output_tokens: 0,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    });
  }

  /** Closes the open block, if any (a thinking block gets its signature first). */
  closeOpen(): void {
    if (!this.open) return;
    const { index, signature } = this.open;
    if (this.open.kind === "thinking" && signature) {
      this.emit({ type: "content_block_delta", index, delta: { type: "signature_delta", signature } });
    }
    this.emit({ type: "content_block_stop", index });
    this.open = null;
  }

  private openBlock(
    kind: BlockKind,
    block: Extract<MessagesStreamEvent, { type: "content_block_start" }>["content_block"],
  ): number {
    this.start();
    this.closeOpen();
    const index = this.nextIndex++;
    this.open = { kind, index };
    this.emit({ type: "content_block_start", index, content_block: block });
    return index;
  }

  text(text: string): void {
    if (text.length === 0 || this.ended) return; // "" opens no block (§4.9 trap 3)
    if (this.open?.kind !== "text") this.openBlock("text", { type: "text", text: "" });
    this.relayed.push(text);
    this.emit({ type: "content_block_delta", index: this.open!.index, delta: { type: "text_delta", text } });
  }

  thinking(text: string): void {
    if (text.length === 0 || this.ended) return;
    if (this.open?.kind !== "thinking") this.openBlock("thinking", { type: "thinking", thinking: "", signature: "" });
    this.relayed.push(text);
    this.emit({
      type: "content_block_delta",
      index: this.open!.index,
      delta: { type: "thinking_delta", thinking: text },
    });
  }

  /** Remembers a signature for the open thinking block, sent just before its stop (§1.7). */
  thinkingSignature(signature: string): void {
    if (this.open?.kind === "thinking") this.open.signature = signature;
  }

  /** Opens a tool_use block; returns its index. */
  openTool(id: string, name: string): number {
    this.toolUsed = true;
    return this.openBlock("tool", { type: "tool_use", id, name, input: {} });
  }

  /** Appends to the open tool block. */
  toolArguments(json: string): void {
    if (json.length === 0 || this.open?.kind !== "tool") return;
    this.relayed.push(json);
    this.emit({
      type: "content_block_delta",
      index: this.open.index,
      delta: { type: "input_json_delta", partial_json: json },
    });
  }

  /** `message_delta` with the stop reason and the final usage (real, or the local estimate). */
  finish(stopReason: StopReason, stopSequence: string | null): void {
    if (this.ended) return;
    this.start();
    this.closeOpen();
    const u = this.usage();
    // The thinking share goes where the JSON reply puts it (usage.ts totalsToMessagesUsage), so a
    // client rebuilding the stream ends with the same usage, and a chat client downstream gets
    // its `reasoning_tokens`.
    const usage: MessageDeltaEvent["usage"] & { output_tokens_details?: { thinking_tokens: number } } = {
      input_tokens: u.input_tokens,
      output_tokens: u.output_tokens,
      cache_creation_input_tokens: u.cache_creation_input_tokens,
      cache_read_input_tokens: u.cache_read_input_tokens,
    };
    if (u.reasoning_tokens !== undefined) usage.output_tokens_details = { thinking_tokens: u.reasoning_tokens };
    const ev: MessageDeltaEvent = {
      type: "message_delta",
      delta: {
        stop_reason: this.toolUsed && stopReason !== "max_tokens" ? "tool_use" : stopReason,
        stop_sequence: stopSequence,
      },
      usage,
    };
    this.emit(ev);
  }

  /** `message_stop`: the stream is complete. */
  stop(): void {
    if (this.ended) return;
    this.ended = true;
    this.emit({ type: "message_stop" });
    this.reportUsage();
  }

  /** An in-band error: the stream ends here, without `message_stop` (§4.5 step 6). */
  error(err: GatewayError): void {
    if (this.ended) return;
    this.ended = true;
    this.emit({ type: "error", error: renderMessagesError(err).error });
    this.reportUsage();
  }

  /** Calls `onUsage` once (end, error or cancel). */
  reportUsage(): void {
    if (this.usageReported) return;
    this.usageReported = true;
    this.ctx.onUsage?.(this.usage());
  }
}
