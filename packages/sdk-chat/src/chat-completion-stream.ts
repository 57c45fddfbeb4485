/**
 * `client.chat.completions.stream()`: a streamed reply with the conveniences of the official
 * helper — iterate chunks or just the text, listen with `.on("content", …)`, or await
 * `finalChatCompletion()`, the reply assembled from the chunks as `create` would have returned
 * it: content joined per choice, tool calls assembled from their argument fragments by
 * `index` (docs/protocols.md §2.6), usage from the final usage chunk.
 */
import type { ChatChoice, ChatChunkChoice, ChatResponseMessage, FinishReason } from "@turnpike/schema";
import { StreamHelper, TurnpikeError, type APIPromise, type Stream } from "@turnpike/sdk-core";
import type { ChatCompletion, ChatCompletionChunk } from "./types.js";

/** A choice while it streams: `finish_reason` is null until its last chunk. */
export type ChatChoiceSnapshot = Omit<ChatChoice, "finish_reason"> & { finish_reason: FinishReason | null };
/** The reply as assembled so far. */
export type ChatCompletionSnapshot = Omit<ChatCompletion, "choices"> & { choices: ChatChoiceSnapshot[] };

/** Listener arguments of {@link ChatCompletionStream} events (plus `connect`, `error`, `abort`, `end`). */
export type ChatCompletionStreamEvents = {
  /** Every chunk, with the reply as assembled so far. */
  chunk: [chunk: ChatCompletionChunk, snapshot: ChatCompletionSnapshot];
  /** A content delta of choice 0 and its content so far. */
  content: [delta: string, snapshot: string];
  /** A refusal delta of choice 0 and its refusal so far. */
  refusal: [delta: string, snapshot: string];
  /** An arguments fragment of a tool call of choice 0, the arguments so far, and the call's position. */
  toolCallArguments: [delta: string, snapshot: string, index: number];
  /** The complete reply, once, after the stream ended successfully. */
  finalChatCompletion: [completion: ChatCompletion];
  /** The final message of choice 0. */
  finalMessage: [message: ChatResponseMessage];
  /** The final content of choice 0 (null when it only called tools). */
  finalContent: [content: string | null];
};

/**
 * @example
 * ```ts
 * const stream = client.chat.completions.stream({
 *   model: "beta-5",
 *   messages: [{ role: "user", content: "Write a haiku" }],
 * });
 * for await (const text of stream.textStream) process.stdout.write(text);
 * const completion = await stream.finalChatCompletion();
 * console.log(completion.choices[0]?.finish_reason);
 * ```
 */
export class ChatCompletionStream extends StreamHelper<ChatCompletionChunk, ChatCompletionStreamEvents> {
  #snapshot: ChatCompletionSnapshot | undefined;
  #final: ChatCompletion | undefined;
  /** Per choice: the vendor's tool-call `index` → position in `tool_calls`. */
  readonly #toolPositions = new Map<number, Map<number, number>>();

  private constructor() {
    super();
  }

  /** Starts a stream; `open` makes the `stream: true` request with the given signal. */
  static start(
    open: (signal: AbortSignal) => APIPromise<Stream<ChatCompletionChunk>>,
    signal?: AbortSignal,
  ): ChatCompletionStream {
    const stream = new ChatCompletionStream();
    stream.run(open, signal);
    return stream;
  }

  /** The reply as assembled so far (undefined before the first chunk). */
  get currentChatCompletionSnapshot(): ChatCompletionSnapshot | undefined {
    return this.#snapshot;
  }

  /** The complete reply; rejects if the stream failed, was aborted, or a choice never finished. */
  async finalChatCompletion(): Promise<ChatCompletion> {
    await this.done();
    // done() resolved, so finish() ran and set #final.
    return this.#final as ChatCompletion;
  }

  /** The final message of choice 0. */
  async finalMessage(): Promise<ChatResponseMessage> {
    return firstChoice(await this.finalChatCompletion()).message;
  }

  /** The final content of choice 0 (null when it only called tools). */
  async finalContent(): Promise<string | null> {
    return (await this.finalMessage()).content;
  }

  protected textOf(chunk: ChatCompletionChunk): string | undefined {
    return chunk.choices.find((c) => c.index === 0)?.delta.content ?? undefined;
  }

  protected accept(chunk: ChatCompletionChunk): void {
    const snapshot = (this.#snapshot ??= {
      id: chunk.id,
      object: "chat.completion",
      created: chunk.created,
      model: chunk.model,
      choices: [],
    });
    if (chunk.system_fingerprint != null) snapshot.system_fingerprint = chunk.system_fingerprint;
    if (chunk.service_tier != null) snapshot.service_tier = chunk.service_tier;
    if (chunk.usage != null) snapshot.usage = chunk.usage;
    for (const choice of chunk.choices) this.#applyChoice(snapshot, choice);
    this.emit("chunk", chunk, snapshot);
  }

  protected finish(): void {
    const snapshot = this.#snapshot;
    if (!snapshot) throw new TurnpikeError("The stream ended without a single chunk.");
    const choices: ChatChoice[] = snapshot.choices.map((choice) => {
      if (choice.finish_reason === null) {
        throw new TurnpikeError(`The stream ended before choice ${choice.index} finished (no finish_reason).`);
      }
      const message = { ...choice.message };
      // As in a JSON reply: content is null only when the model called tools instead of writing.
      if (message.content === null && !message.tool_calls?.length && !message.function_call) message.content = "";
      return { ...choice, message, finish_reason: choice.finish_reason };
    });
    const completion: ChatCompletion = { ...snapshot, choices };
    this.#final = completion;
    this.emit("finalChatCompletion", completion);
    const first = completion.choices.find((c) => c.index === 0);
    if (first) {
      this.emit("finalMessage", first.message);
      this.emit("finalContent", first.message.content);
    }
  }

  #applyChoice(snapshot: ChatCompletionSnapshot, chunk: ChatChunkChoice): void {
    let choice = snapshot.choices.find((c) => c.index === chunk.index);
    if (!choice) {
      choice = {
        index: chunk.index,
        message: { role: "assistant", content: null, refusal: null },
        finish_reason: null,
        logprobs: null,
      };
      snapshot.choices.push(choice);
      snapshot.choices.sort((a, b) => a.index - b.index);
    }
    const message = choice.message;
    const delta = chunk.delta;
    const emits = chunk.index === 0;
    if (delta.content != null && delta.content !== "") {
      message.content = (message.content ?? "") + delta.content;
      if (emits) this.emit("content", delta.content, message.content);
    }
    if (delta.refusal != null) {
      message.refusal = (message.refusal ?? "") + delta.refusal;
      if (emits) this.emit("refusal", delta.refusal, message.refusal);
    }
    if (delta.reasoning_content != null) {
      message.reasoning_content = (message.reasoning_content ?? "") + delta.reasoning_content;
    }
    if (delta.function_call) {
      const call = (message.function_call ??= { name: "", arguments: "" });
      if (delta.function_call.name) call.name += delta.function_call.name;
      if (delta.function_call.arguments) call.arguments += delta.function_call.arguments;
    }
    for (const fragment of delta.tool_calls ?? []) {
      const positions = this.#positionsOf(chunk.index);
      const calls = (message.tool_calls ??= []);
      let position = positions.get(fragment.index);
      if (position === undefined) {
        position = calls.length;
        positions.set(fragment.index, position);
        calls.push({
          id: fragment.id ?? "",
          type: "function",
          function: { name: fragment.function?.name ?? "", arguments: "" },
        });
      }
      const call = calls[position];
      if (call?.type !== "function") continue;
      if (fragment.id && !call.id) call.id = fragment.id;
      if (fragment.function?.name && !call.function.name) call.function.name = fragment.function.name;
      const args = fragment.function?.arguments;
      if (args) {
        call.function.arguments += args;
        if (emits) this.emit("toolCallArguments", args, call.function.arguments, position);
      }
    }
    if (chunk.logprobs != null) choice.logprobs = mergeLogprobs(choice.logprobs ?? null, chunk.logprobs);
    if (chunk.finish_reason != null) choice.finish_reason = chunk.finish_reason;
  }

  #positionsOf(choiceIndex: number): Map<number, number> {
    let positions = this.#toolPositions.get(choiceIndex);
    if (!positions) {
      positions = new Map();
      this.#toolPositions.set(choiceIndex, positions);
    }
    return positions;
  }
}

type Logprobs = NonNullable<ChatChoice["logprobs"]>;

/** Token log-probabilities arrive per chunk as `{content: [...]}`; the reply holds them all. */
function mergeLogprobs(into: Logprobs | null, next: Logprobs): Logprobs {
  if (!into) return structuredClone(next);
  const out: Logprobs = { ...into };
  for (const [key, value] of Object.entries(next)) {
    const prev = out[key];
    out[key] = Array.isArray(prev) && Array.isArray(value) ? [...prev, ...value] : value;
  }
  return out;
}

function firstChoice(completion: ChatCompletion): ChatChoice {
  const choice = completion.choices.find((c) => c.index === 0) ?? completion.choices[0];
  if (!choice) throw new TurnpikeError("The reply has no choices.");
  return choice;
}
