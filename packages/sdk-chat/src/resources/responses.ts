/**
 * `client.responses`: the Responses format (docs/protocols.md §5) — create (JSON or stream), the
 * stream helper, and the stored responses of the calling key: retrieve, delete, their input
 * items, and the input-token count of a request.
 */
import { APIPromise, type APIClient, type RequestOptions, type Stream } from "@turnpike/sdk-core";
import type { ResponsesDeleted, ResponsesResponse } from "@turnpike/schema";
import { decodeResponsesEvent } from "../decode-responses-event.js";
import { withOutputText } from "../output-text.js";
import { ResponseStream } from "../response-stream.js";
import type {
  ResponseCreateParamsBase,
  ResponseCreateParamsNonStreaming,
  ResponseCreateParamsStreaming,
  ResponseObject,
  ResponseStreamEvent,
  ResponseStreamParams,
} from "../responses-types.js";
import { InputItems } from "./input-items.js";
import { InputTokens } from "./input-tokens.js";

/**
 * `client.responses`.
 *
 * @example
 * ```ts
 * const response = await client.responses.create({ model: "beta-5", input: "Hello" });
 * console.log(response.output_text);
 * ```
 */
export class Responses {
  /** `list`: the input items of a stored response. */
  readonly inputItems: InputItems;
  /** `count`: the input tokens of a request, without running it. */
  readonly inputTokens: InputTokens;
  readonly #client: APIClient;

  constructor(client: APIClient) {
    this.#client = client;
    this.inputItems = new InputItems(client);
    this.inputTokens = new InputTokens(client);
  }

  /**
   * Sends an input and returns the model's response, with `output_text` added. With
   * `stream: true` it resolves, once the headers arrive, to a `Stream` of events instead; an
   * `error` event in it is thrown as the typed error its code stands for.
   *
   * @example
   * ```ts
   * const response = await client.responses.create({
   *   model: "beta-5",
   *   instructions: "Answer in one word.",
   *   input: "Capital of France?",
   * });
   * console.log(response.output_text);
   *
   * const stream = await client.responses.create({ model: "beta-5", input: "Hi", stream: true });
   * for await (const event of stream) if (event.type === "response.output_text.delta") process.stdout.write(event.delta);
   * ```
   */
  create(body: ResponseCreateParamsNonStreaming, options?: RequestOptions): APIPromise<ResponseObject>;
  create(body: ResponseCreateParamsStreaming, options?: RequestOptions): APIPromise<Stream<ResponseStreamEvent>>;
  create(
    body: ResponseCreateParamsBase,
    options?: RequestOptions,
  ): APIPromise<Stream<ResponseStreamEvent> | ResponseObject>;
  create(
    body: ResponseCreateParamsBase,
    options?: RequestOptions,
  ): APIPromise<Stream<ResponseStreamEvent> | ResponseObject> {
    const request = { ...options, method: "POST" as const, path: "/responses", body, model: body.model };
    if (body.stream) {
      return this.#client.requestStream<ResponseStreamEvent>(request, (message, response) =>
        decodeResponsesEvent(message, response, body.model),
      );
    }
    return withText(this.#client.request<ResponsesResponse>(request));
  }

  /**
   * Streams a response through the {@link ResponseStream} helper: iterate events or
   * `textStream`, listen with `.on("response.output_text.delta", …)`, await `finalResponse()`.
   *
   * @example
   * ```ts
   * const stream = client.responses.stream({ model: "beta-5", input: "Tell me a story" });
   * for await (const text of stream.textStream) process.stdout.write(text);
   * const response = await stream.finalResponse();
   * ```
   */
  stream(body: ResponseStreamParams, options?: RequestOptions): ResponseStream {
    return ResponseStream.start(
      (signal) => this.create({ ...body, stream: true }, { ...options, signal }),
      options?.signal,
    );
  }

  /**
   * A stored response of this key by id (a response created with `store: false`, another key's,
   * or an expired one rejects with `NotFoundError`).
   *
   * @example
   * ```ts
   * const again = await client.responses.retrieve(response.id);
   * ```
   */
  retrieve(id: string, options?: RequestOptions): APIPromise<ResponseObject> {
    return withText(
      this.#client.request<ResponsesResponse>({
        ...options,
        method: "GET",
        path: `/responses/${encodeURIComponent(id)}`,
      }),
    );
  }

  /**
   * Deletes a stored response of this key; `previous_response_id` can no longer name it.
   *
   * @example
   * ```ts
   * const { deleted } = await client.responses.delete(response.id);
   * ```
   */
  delete(id: string, options?: RequestOptions): APIPromise<ResponsesDeleted> {
    return this.#client.request<ResponsesDeleted>({
      ...options,
      method: "DELETE",
      path: `/responses/${encodeURIComponent(id)}`,
    });
  }
}

/** The same call, its body with `output_text` added; `.withResponse()` keeps working. */
function withText(promise: APIPromise<ResponsesResponse>): APIPromise<ResponseObject> {
  return new APIPromise(promise.withResponse().then((result) => ({ ...result, data: withOutputText(result.data) })));
}
