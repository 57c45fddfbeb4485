/**
 * `@turnpike/messages`: a typed client for the messages format served by a Turnpike gateway.
 *
 * @example
 * ```ts
 * import MessagesClient, { RateLimitError } from "@turnpike/messages";
 *
 * const client = new MessagesClient(); // TURNPIKE_API_KEY, TURNPIKE_BASE_URL
 * const stream = client.messages.stream({
 *   model: "alpha-sonnet-4-6",
 *   max_tokens: 512,
 *   messages: [{ role: "user", content: "Tell me a story" }],
 * });
 * for await (const text of stream.textStream) process.stdout.write(text);
 * ```
 */
import { MessagesClient } from "./messages-client.js";

export { MessagesClient, MESSAGES_API_VERSION, type MessagesClientOptions } from "./messages-client.js";
export { MessageStream, type MessageStreamEvents } from "./message-stream.js";
export { Messages } from "./resources/messages.js";
export {
  MessageBatches,
  type MessageBatchCreateParams,
  type MessageBatchListParams,
} from "./resources/message-batches.js";
export {
  APIConnectionError,
  APIError,
  APIPromise,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  ModelNotFoundError,
  Models,
  NotFoundError,
  PagePromise,
  PermissionDeniedError,
  RateLimitError,
  Stream,
  TurnpikeError,
  UnprocessableEntityError,
  type APIErrorBody,
  type APIResult,
  type ClientOptions,
  type Fetch,
  type ModelListParams,
  type RateLimitInfo,
  type RequestOptions,
} from "@turnpike/sdk-core";
export type * from "./types.js";

export default MessagesClient;
