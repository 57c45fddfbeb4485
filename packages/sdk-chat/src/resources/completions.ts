/** `client.chat.completions`: create (JSON or stream) and the stream helper. */
import type { APIClient, APIPromise, RequestOptions, Stream } from "@turnpike/sdk-core";
import { ChatCompletionStream } from "../chat-completion-stream.js";
import { decodeChatEvent } from "../decode-chat-event.js";
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsBase,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionStreamParams,
} from "../types.js";

/**
 * `client.chat.completions`.
 *
 * @example
 * ```ts
 * const completion = await client.chat.completions.create({ model: "beta-5", messages });
 * ```
 */
export class Completions {
  readonly #client: APIClient;

  constructor(client: APIClient) {
    this.#client = client;
  }

  /**
   * Sends a conversation and returns the model's reply. With `stream: true` it resolves, once
   * the headers arrive, to a `Stream` of chunks instead.
   *
   * @example
   * ```ts
   * const completion = await client.chat.completions.create({
   *   model: "beta-5",
   *   messages: [{ role: "user", content: "Hello" }],
   * });
   * console.log(completion.choices[0]?.message.content);
   *
   * const stream = await client.chat.completions.create({ ...params, stream: true });
   * for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta.content ?? "");
   * ```
   */
  create(body: ChatCompletionCreateParamsNonStreaming, options?: RequestOptions): APIPromise<ChatCompletion>;
  create(body: ChatCompletionCreateParamsStreaming, options?: RequestOptions): APIPromise<Stream<ChatCompletionChunk>>;
  create(
    body: ChatCompletionCreateParamsBase,
    options?: RequestOptions,
  ): APIPromise<Stream<ChatCompletionChunk> | ChatCompletion>;
  create(
    body: ChatCompletionCreateParamsBase,
    options?: RequestOptions,
  ): APIPromise<Stream<ChatCompletionChunk> | ChatCompletion> {
    const request = { ...options, method: "POST" as const, path: "/chat/completions", body, model: body.model };
    if (body.stream) {
      return this.#client.requestStream<ChatCompletionChunk>(request, (message, response) =>
        decodeChatEvent(message, response, body.model),
      );
    }
    return this.#client.request<ChatCompletion>(request);
  }

  /**
   * Streams a reply through the {@link ChatCompletionStream} helper: iterate chunks or
   * `textStream`, listen with `.on("content", …)`, await `finalChatCompletion()`.
   *
   * @example
   * ```ts
   * const stream = client.chat.completions.stream({ model: "beta-5", messages });
   * stream.on("content", (delta) => process.stdout.write(delta));
   * const completion = await stream.finalChatCompletion();
   * ```
   */
  stream(body: ChatCompletionStreamParams, options?: RequestOptions): ChatCompletionStream {
    return ChatCompletionStream.start(
      (signal) => this.create({ ...body, stream: true }, { ...options, signal }),
      options?.signal,
    );
  }
}
