/**
 * Messages-format events → chat-completions SSE frames (docs/protocols.md §4.6). Each output string is
 * one ready-to-write frame (`data: {…}\n\n`); the stream ends with `data: [DONE]\n\n`.
 * - tool calls get 0-based ordinals counted over tool_use blocks only, never the block index
 *   (§4.9 trap 9);
 * - thinking streams as `delta.reasoning_content` (the de-facto extension);
 * - the role chunk waits for the first block: `content: ""` when the reply opens with text,
 *   `content: null` otherwise (as the chat protocol streams a tool-only reply), so that the
 *   official client's accumulator ends with the `content` the JSON reply has — null without
 *   text (convert-messages-response-to-chat.ts);
 * - `ping` becomes an SSE comment (`: ping`), a keep-alive every client ignores;
 * - the usage chunk (`choices: []`) is sent only when the client asked for `include_usage`,
 *   but usage is always followed for billing (`onUsage`);
 * - an `error` event becomes `data: {"error":{…}}` then `[DONE]` (the OpenAI client throws on it);
 * - a second `message_start` with the same id is ignored; with another id it is an error (trap 8);
 * - EOF after `message_delta` completes the reply; EOF before it is an interrupted stream and
 *   ends with an in-band error.
 */
import type { ChatChunk, ChatChunkDelta, FinishReason, MessagesStreamEvent } from "@turnpike/schema";
import type { CancellableTransformer } from "../stream-transformer.js";
import { formatSSE, formatSSEComment } from "@turnpike/schema/sse";
import { GatewayError, gatewayErrorFromMessagesError, renderChatError } from "../errors.js";
import { randomId } from "../ids.js";
import { MessagesUsageAccumulator } from "../messages/messages-sse-to-events.js";
import { totalsToChatUsage, type OnUsage, type UsageTotals } from "../usage.js";
import { mapStopReasonToChat } from "./map-stop-reason-to-chat.js";

export interface ChatChunksContext {
  /** The model id the client asked for. */
  model: string;
  /** The client sent `stream_options.include_usage: true`. */
  includeUsage: boolean;
  /** Chunk id; default `chatcmpl-` + the message id. */
  id?: string;
  /** Unix seconds; default: when the stream starts. */
  created?: number;
  /** Called once at the end (or on cancel) with the final usage. */
  onUsage?: OnUsage;
}

const DONE = formatSSE({ data: "[DONE]" });

export class MessagesToChatChunkStream extends TransformStream<MessagesStreamEvent, string> {
  readonly #machine: MessagesToChatMachine;

  constructor(ctx: ChatChunksContext) {
    let machine!: MessagesToChatMachine;
    const transformer: CancellableTransformer<MessagesStreamEvent, string> = {
      start(controller) {
        machine = new MessagesToChatMachine(ctx, (frame) => controller.enqueue(frame));
      },
      transform(ev) {
        machine.push(ev);
      },
      flush() {
        machine.end();
      },
      cancel() {
        machine.reportUsage();
      },
    };
    super(transformer);
    this.#machine = machine;
  }

  get usage(): UsageTotals {
    return this.#machine.usage.usage;
  }
}

/**
 * @example
 * ```ts
 * events.pipeThrough(messagesEventsToChatChunks({ model: "alpha-haiku-4-5", includeUsage: true }));
 * // "data: {\"id\":\"chatcmpl-…\",…,\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},…}]}\n\n", …, "data: [DONE]\n\n"
 * ```
 */
export function messagesEventsToChatChunks(ctx: ChatChunksContext): MessagesToChatChunkStream {
  return new MessagesToChatChunkStream(ctx);
}

export class MessagesToChatMachine {
  readonly usage = new MessagesUsageAccumulator();
  private id: string | undefined;
  private created: number;
  private messageId: string | undefined;
  private readonly blockToTool = new Map<number, number>();
  /** Tool blocks (by block index) whose arguments have not had a non-empty fragment yet. */
  private readonly noArgsYet = new Set<number>();
  private toolOrdinal = 0;
  private finishSent = false;
  private ended = false;
  private reported = false;

  constructor(
    private readonly ctx: ChatChunksContext,
    private readonly write: (frame: string) => void,
  ) {
    this.id = ctx.id;
    this.created = ctx.created ?? Math.floor(Date.now() / 1000);
  }

  push(ev: MessagesStreamEvent): void {
    if (this.ended) return;
    switch (ev.type) {
      case "message_start": {
        if (this.messageId !== undefined) {
          if (ev.message.id === this.messageId) return; // a duplicate: ignore
          this.fail(
            new GatewayError({
              status: 502,
              type: "api_error",
              message: "The upstream started a second message in the same stream",
            }),
          );
          return;
        }
        this.messageId = ev.message.id;
        this.usage.push(ev);
        return;
      }
      case "content_block_start": {
        const b = ev.content_block;
        this.startChunk(b.type === "text" ? "" : null);
        if (b.type === "text") {
          if (b.text) this.delta({ content: b.text });
        } else if (b.type === "tool_use") {
          const ordinal = this.toolOrdinal++;
          this.blockToTool.set(ev.index, ordinal);
          const input = b.input && Object.keys(b.input).length > 0 ? JSON.stringify(b.input) : "";
          if (!input) this.noArgsYet.add(ev.index);
          this.delta({
            tool_calls: [{ index: ordinal, id: b.id, type: "function", function: { name: b.name, arguments: input } }],
          });
        } else if (b.type === "thinking") {
          if (b.thinking) this.delta({ reasoning_content: b.thinking });
        }
        return;
      }
      case "content_block_delta": {
        const d = ev.delta;
        switch (d.type) {
          case "text_delta":
            if (d.text) this.delta({ content: d.text });
            return;
          case "input_json_delta": {
            const ordinal = this.blockToTool.get(ev.index);
            if (ordinal !== undefined && d.partial_json) {
              this.noArgsYet.delete(ev.index);
              this.delta({ tool_calls: [{ index: ordinal, function: { arguments: d.partial_json } }] });
            }
            return;
          }
          case "thinking_delta":
            if (d.thinking) this.delta({ reasoning_content: d.thinking });
            return;
          case "signature_delta":
          case "citations_delta":
            return;
          default: {
            const never: never = d;
            return never;
          }
        }
      }
      case "content_block_stop": {
        // A call without arguments streams only `partial_json: ""` (§1.7): its arguments are
        // "{}", as in the JSON reply and as chat upstreams send them — never "", which no
        // client can JSON.parse.
        const ordinal = this.blockToTool.get(ev.index);
        if (ordinal !== undefined && this.noArgsYet.delete(ev.index))
          this.delta({ tool_calls: [{ index: ordinal, function: { arguments: "{}" } }] });
        return;
      }
      case "message_delta": {
        this.usage.push(ev);
        if (this.finishSent) return;
        this.finishSent = true;
        this.startChunk(null);
        const reason = ev.delta.stop_reason;
        const finish: FinishReason =
          this.toolOrdinal > 0 && reason !== "max_tokens" ? "tool_calls" : mapStopReasonToChat(reason);
        this.chunk({ choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: finish }] });
        return;
      }
      case "message_stop":
        this.complete();
        return;
      case "ping":
        this.write(formatSSEComment("ping"));
        return;
      case "error":
        this.fail(gatewayErrorFromMessagesError(ev.error));
        return;
      default: {
        const never: never = ev;
        return never;
      }
    }
  }

  end(): void {
    if (this.ended) return;
    if (this.finishSent) {
      this.complete();
      return;
    }
    this.fail(
      new GatewayError({
        status: 502,
        type: "api_error",
        message: "The upstream stream ended before the reply was complete",
      }),
    );
  }

  reportUsage(): void {
    if (this.reported) return;
    this.reported = true;
    this.ctx.onUsage?.(this.usage.usage);
  }

  private complete(): void {
    if (!this.finishSent) {
      this.finishSent = true;
      this.startChunk(null);
      this.chunk({
        choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: this.toolOrdinal > 0 ? "tool_calls" : "stop" }],
      });
    }
    if (this.ctx.includeUsage) this.chunk({ choices: [], usage: totalsToChatUsage(this.usage.usage) });
    this.write(DONE);
    this.ended = true;
    this.reportUsage();
  }

  private fail(err: GatewayError): void {
    if (this.messageId !== undefined) this.startChunk(null);
    this.write(formatSSE({ data: JSON.stringify(renderChatError(err)) }));
    this.write(DONE);
    this.ended = true;
    this.reportUsage();
  }

  private started = false;

  /**
   * The first chunk: the assistant role (§4.6 `message_start` row), sent with the first block so
   * that its `content` can say whether text follows (`""`) or not (`null`).
   */
  private startChunk(content: "" | null): void {
    if (this.started) return;
    this.started = true;
    this.chunk({ choices: [{ index: 0, delta: { role: "assistant", content }, logprobs: null, finish_reason: null }] });
  }

  private delta(delta: ChatChunkDelta): void {
    this.chunk({ choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] });
  }

  private chunk(part: Pick<ChatChunk, "choices"> & Partial<ChatChunk>): void {
    if (this.id === undefined)
      this.id = this.messageId ? `chatcmpl-${this.messageId.replace(/^msg_/, "")}` : randomId("chatcmpl-");
    const chunk: ChatChunk = {
      id: this.id,
      object: "chat.completion.chunk",
      created: this.created,
      model: this.ctx.model,
      ...part,
    };
    this.write(formatSSE({ data: JSON.stringify(chunk) }));
  }
}
