/**
 * `client.messages.stream()`: a streamed reply with the conveniences of the official helper —
 * iterate the events or just the text, listen with `.on("text", …)`, or await
 * `finalMessage()`, the reply assembled from the events exactly as `messages.create` would
 * have returned it (text joined, tool inputs parsed from their JSON fragments, usage updated
 * from `message_delta`, docs/protocols.md §1.6–1.7).
 */
import type { ContentBlock, TextBlock } from "@turnpike/schema";
import { StreamHelper, TurnpikeError, type APIPromise, type Stream } from "@turnpike/sdk-core";
import type { Message, RawMessageStreamEvent } from "./types.js";

/** Listener arguments of {@link MessageStream} events (plus `connect`, `error`, `abort`, `end`). */
export type MessageStreamEvents = {
  /** Every event, with the message as assembled so far. */
  streamEvent: [event: RawMessageStreamEvent, snapshot: Message];
  /** A text delta and the block's text so far. */
  text: [delta: string, snapshot: string];
  /** A fragment of a tool call's JSON input and the JSON text so far. */
  inputJson: [partialJson: string, snapshot: string];
  /** A thinking delta and the block's thinking so far. */
  thinking: [delta: string, snapshot: string];
  /** A content block is complete (tool inputs parsed). */
  contentBlock: [block: ContentBlock];
  /** The message is complete (`message_stop`). */
  message: [message: Message];
  /** The final message, once, after the stream ended successfully. */
  finalMessage: [message: Message];
};

/**
 * @example
 * ```ts
 * const stream = client.messages.stream({
 *   model: "alpha-sonnet-4-6",
 *   max_tokens: 1024,
 *   messages: [{ role: "user", content: "Write a haiku" }],
 * });
 * for await (const text of stream.textStream) process.stdout.write(text);
 * const message = await stream.finalMessage();
 * console.log(message.usage.output_tokens);
 * ```
 */
export class MessageStream extends StreamHelper<RawMessageStreamEvent, MessageStreamEvents> {
  #snapshot: Message | undefined;
  #final: Message | undefined;
  /** JSON text of tool inputs by block index, parsed at `content_block_stop`. */
  readonly #json = new Map<number, string>();

  private constructor() {
    super();
  }

  /** Starts a stream; `open` makes the `stream: true` request with the given signal. */
  static start(
    open: (signal: AbortSignal) => APIPromise<Stream<RawMessageStreamEvent>>,
    signal?: AbortSignal,
  ): MessageStream {
    const stream = new MessageStream();
    stream.run(open, signal);
    return stream;
  }

  /** The message as assembled so far (undefined before `message_start`). */
  get currentMessage(): Message | undefined {
    return this.#snapshot;
  }

  /** The complete message; rejects if the stream failed, was aborted or ended early. */
  async finalMessage(): Promise<Message> {
    await this.done();
    // done() resolved, so finish() ran and set #final.
    return this.#final as Message;
  }

  /** The text of the final message's text blocks, joined. */
  async finalText(): Promise<string> {
    const message = await this.finalMessage();
    return message.content
      .filter((b): b is TextBlock => b.type === "text")
      .map((b) => b.text)
      .join("");
  }

  protected textOf(event: RawMessageStreamEvent): string | undefined {
    return event.type === "content_block_delta" && event.delta.type === "text_delta" ? event.delta.text : undefined;
  }

  protected accept(event: RawMessageStreamEvent): void {
    if (event.type === "message_start") {
      // A copy: the snapshot is mutated as deltas arrive.
      this.#snapshot = structuredClone(event.message);
      this.emit("streamEvent", event, this.#snapshot);
      return;
    }
    const message = this.#snapshot;
    if (!message) throw new TurnpikeError(`Stream event ${event.type} arrived before message_start`);
    switch (event.type) {
      case "content_block_start":
        message.content[event.index] = structuredClone(event.content_block);
        break;
      case "content_block_delta":
        this.#applyDelta(message, event);
        break;
      case "content_block_stop": {
        const block = this.#finishBlock(message, event.index);
        this.emit("streamEvent", event, message);
        this.emit("contentBlock", block);
        return;
      }
      case "message_delta": {
        message.stop_reason = event.delta.stop_reason;
        if (event.delta.stop_sequence !== undefined) message.stop_sequence = event.delta.stop_sequence;
        if (event.delta.stop_details !== undefined) message.stop_details = event.delta.stop_details;
        if (event.delta.container !== undefined) message.container = event.delta.container;
        // Cumulative totals: overwrite, never add; input and cache counts only when sent (§1.6–1.7).
        const usage = event.usage;
        message.usage.output_tokens = usage.output_tokens;
        if (usage.input_tokens != null) message.usage.input_tokens = usage.input_tokens;
        if (usage.cache_creation_input_tokens != null)
          message.usage.cache_creation_input_tokens = usage.cache_creation_input_tokens;
        if (usage.cache_read_input_tokens != null)
          message.usage.cache_read_input_tokens = usage.cache_read_input_tokens;
        if (usage.server_tool_use != null) message.usage.server_tool_use = usage.server_tool_use;
        break;
      }
      case "message_stop":
        this.#final = message;
        this.emit("streamEvent", event, message);
        this.emit("message", message);
        return;
      default: {
        const unreachable: never = event;
        throw new TurnpikeError(`Unexpected stream event ${JSON.stringify(unreachable)}`);
      }
    }
    this.emit("streamEvent", event, message);
  }

  protected finish(): void {
    if (!this.#final) {
      throw new TurnpikeError("The stream ended before message_stop; the message is incomplete.");
    }
    this.emit("finalMessage", this.#final);
  }

  #applyDelta(message: Message, event: Extract<RawMessageStreamEvent, { type: "content_block_delta" }>): void {
    const block = message.content[event.index];
    if (!block) throw new TurnpikeError(`content_block_delta for block ${event.index}, which was never started`);
    const delta = event.delta;
    switch (delta.type) {
      case "text_delta":
        if (block.type !== "text") throw mismatch(delta.type, block.type, event.index);
        block.text += delta.text;
        this.emit("text", delta.text, block.text);
        break;
      case "input_json_delta": {
        const json = (this.#json.get(event.index) ?? "") + delta.partial_json;
        this.#json.set(event.index, json);
        this.emit("inputJson", delta.partial_json, json);
        break;
      }
      case "thinking_delta":
        if (block.type !== "thinking") throw mismatch(delta.type, block.type, event.index);
        block.thinking += delta.thinking;
        this.emit("thinking", delta.thinking, block.thinking);
        break;
      case "signature_delta":
        if (block.type !== "thinking") throw mismatch(delta.type, block.type, event.index);
        block.signature = delta.signature;
        break;
      case "citations_delta":
        if (block.type !== "text") throw mismatch(delta.type, block.type, event.index);
        block.citations = [...(block.citations ?? []), delta.citation];
        break;
      default: {
        const unreachable: never = delta;
        throw new TurnpikeError(`Unexpected delta ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /** Parses the tool input gathered for block `index` (a tool with no arguments sends `""` → `{}`). */
  #finishBlock(message: Message, index: number): ContentBlock {
    const block = message.content[index];
    if (!block) throw new TurnpikeError(`content_block_stop for block ${index}, which was never started`);
    const json = this.#json.get(index);
    if (json !== undefined) {
      this.#json.delete(index);
      let input: unknown;
      try {
        input = json.trim() === "" ? {} : JSON.parse(json);
      } catch (cause) {
        const name = "name" in block ? ` of tool "${String(block.name)}"` : "";
        throw new TurnpikeError(`Could not parse the streamed input${name} (block ${index}) as JSON: ${json}`, {
          cause,
        });
      }
      // tool_use and server_tool_use blocks carry `input`; the schema types the latter loosely.
      (block as { input?: unknown }).input = input;
    }
    return block;
  }
}

function mismatch(delta: string, block: string, index: number): TurnpikeError {
  return new TurnpikeError(`Got a ${delta} for block ${index}, which is a ${block} block`);
}
