/** `client.messages`: create (JSON or stream), the stream helper, and token counting. */
import type { CountTokensResponse } from "@turnpike/schema";
import type { APIClient, APIPromise, RequestOptions, Stream } from "@turnpike/sdk-core";
import { decodeMessagesEvent } from "../decode-messages-event.js";
import { MessageStream } from "../message-stream.js";
import { MessageBatches } from "./message-batches.js";
import type {
  Message,
  MessageCountTokensParams,
  MessageCreateParamsBase,
  MessageCreateParamsNonStreaming,
  MessageCreateParamsStreaming,
  MessageStreamParams,
  RawMessageStreamEvent,
} from "../types.js";

/**
 * `client.messages`.
 *
 * @example
 * ```ts
 * const message = await client.messages.create({ model: "alpha-haiku-4-5", max_tokens: 256, messages });
 * ```
 */
export class Messages {
  readonly #client: APIClient;
  /** `create`, `retrieve`, `list`, `cancel`, `results`: requests run offline. */
  readonly batches: MessageBatches;

  constructor(client: APIClient) {
    this.#client = client;
    this.batches = new MessageBatches(client);
  }

  /**
   * Sends a conversation and returns the model's reply. With `stream: true` it resolves, once
   * the headers arrive, to a `Stream` of events instead.
   *
   * @example
   * ```ts
   * const message = await client.messages.create({
   *   model: "alpha-sonnet-4-6",
   *   max_tokens: 1024,
   *   messages: [{ role: "user", content: "Hello" }],
   * });
   * console.log(message.content);
   *
   * const stream = await client.messages.create({ ...params, stream: true });
   * for await (const event of stream) console.log(event.type);
   * ```
   */
  create(body: MessageCreateParamsNonStreaming, options?: RequestOptions): APIPromise<Message>;
  create(body: MessageCreateParamsStreaming, options?: RequestOptions): APIPromise<Stream<RawMessageStreamEvent>>;
  create(body: MessageCreateParamsBase, options?: RequestOptions): APIPromise<Stream<RawMessageStreamEvent> | Message>;
  create(body: MessageCreateParamsBase, options?: RequestOptions): APIPromise<Stream<RawMessageStreamEvent> | Message> {
    const request = { ...options, method: "POST" as const, path: "/v1/messages", body, model: body.model };
    if (body.stream) {
      return this.#client.requestStream<RawMessageStreamEvent>(request, (message, response) =>
        decodeMessagesEvent(message, response, body.model),
      );
    }
    return this.#client.request<Message>(request);
  }

  /**
   * Streams a reply through the {@link MessageStream} helper: iterate events or `textStream`,
   * listen with `.on("text", …)`, await `finalMessage()`.
   *
   * @example
   * ```ts
   * const stream = client.messages.stream({ model: "alpha-haiku-4-5", max_tokens: 256, messages });
   * stream.on("text", (delta) => process.stdout.write(delta));
   * const message = await stream.finalMessage();
   * ```
   */
  stream(body: MessageStreamParams, options?: RequestOptions): MessageStream {
    return MessageStream.start(
      (signal) => this.create({ ...body, stream: true }, { ...options, signal }),
      options?.signal,
    );
  }

  /**
   * Counts the input tokens of a request without running it.
   *
   * @example
   * ```ts
   * const { input_tokens } = await client.messages.countTokens({
   *   model: "alpha-sonnet-4-6",
   *   messages: [{ role: "user", content: "Hello" }],
   * });
   * ```
   */
  countTokens(body: MessageCountTokensParams, options?: RequestOptions): APIPromise<CountTokensResponse> {
    return this.#client.request<CountTokensResponse>({
      ...options,
      method: "POST",
      path: "/v1/messages/count_tokens",
      body,
      model: body.model,
    });
  }
}
