/**
 * `@turnpike/chat`: a typed client for the chat completions format (and the Responses format)
 * served by a Turnpike gateway.
 *
 * @example
 * ```ts
 * import ChatClient, { RateLimitError } from "@turnpike/chat";
 *
 * const client = new ChatClient(); // TURNPIKE_API_KEY, TURNPIKE_BASE_URL
 * const stream = client.chat.completions.stream({
 *   model: "beta-5",
 *   messages: [{ role: "user", content: "Tell me a story" }],
 * });
 * for await (const text of stream.textStream) process.stdout.write(text);
 *
 * const response = await client.responses.create({ model: "beta-5", input: "Hello" });
 * console.log(response.output_text);
 * ```
 */
import { ChatClient } from "./chat-client.js";

export { ChatClient, type ChatClientOptions } from "./chat-client.js";
export {
  ChatCompletionStream,
  type ChatChoiceSnapshot,
  type ChatCompletionSnapshot,
  type ChatCompletionStreamEvents,
} from "./chat-completion-stream.js";
export { Chat } from "./resources/chat.js";
export { EmbeddingsResource, type Embeddings } from "./resources/embeddings.js";
export { Completions } from "./resources/completions.js";
export { Files, type FileCreateParams } from "./resources/files.js";
export { Batches, type BatchListParams } from "./resources/batches.js";
export { ResponseStream, type ResponseStreamEventName, type ResponseStreamEvents } from "./response-stream.js";
export { Responses } from "./resources/responses.js";
export { InputItems } from "./resources/input-items.js";
export { InputTokens } from "./resources/input-tokens.js";
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
export type * from "./responses-types.js";

export default ChatClient;
