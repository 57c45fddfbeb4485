/**
 * The public types of `@turnpike/chat`. Wire types come from `@turnpike/schema`, so the client,
 * the gateway and the mocks share one definition; the names the official chat-completions
 * client uses (`ChatCompletion`, `ChatCompletionChunk`, …) are aliases of them.
 */
import type { ChatChunk, ChatMessage, ChatRequest, ChatResponse, ChatTool, ChatToolCall } from "@turnpike/schema";

export type {
  Batch,
  BatchCreateParams,
  BatchEndpoint,
  BatchList,
  BatchRequestLine,
  BatchResultLine,
  BatchStatus,
  EmbeddingsRequest,
  EmbeddingsResponse,
  FileObject,
  ChatChoice,
  ChatChunk,
  ChatChunkChoice,
  ChatChunkDelta,
  ChatContentPart,
  ChatErrorBody,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ChatResponseMessage,
  ChatTool,
  ChatToolCall,
  ChatToolCallDelta,
  ChatToolChoice,
  ChatUsage,
  FinishReason,
  Model,
  ModelList,
} from "@turnpike/schema";

/** A reply of `chat.completions.create` (the official client's name for {@link ChatResponse}). */
export type ChatCompletion = ChatResponse;
/** One streamed chunk (the official client's name for {@link ChatChunk}). */
export type ChatCompletionChunk = ChatChunk;
/** A message of the conversation (the official client's name for {@link ChatMessage}). */
export type ChatCompletionMessageParam = ChatMessage;
/** A tool definition (the official client's name for {@link ChatTool}). */
export type ChatCompletionTool = ChatTool;
/** A tool call in a reply (the official client's name for {@link ChatToolCall}). */
export type ChatCompletionMessageToolCall = ChatToolCall;

/**
 * The body of `chat.completions.create`.
 *
 * @example
 * ```ts
 * const params: ChatCompletionCreateParams = {
 *   model: "beta-5",
 *   messages: [{ role: "user", content: "Hello" }],
 * };
 * ```
 */
export type ChatCompletionCreateParamsBase = Omit<ChatRequest, "stream"> & { stream?: boolean | null };
/** {@link ChatCompletionCreateParamsBase} with `stream` absent, `false` or `null`: resolves to a {@link ChatCompletion}. */
export type ChatCompletionCreateParamsNonStreaming = ChatCompletionCreateParamsBase & { stream?: false | null };
/** {@link ChatCompletionCreateParamsBase} with `stream: true`: resolves to a `Stream` of chunks. */
export type ChatCompletionCreateParamsStreaming = ChatCompletionCreateParamsBase & { stream: true };
/** Either form of the `chat.completions.create` body. */
export type ChatCompletionCreateParams = ChatCompletionCreateParamsNonStreaming | ChatCompletionCreateParamsStreaming;
/** The body of `chat.completions.stream`: `stream` is implied. */
export type ChatCompletionStreamParams = Omit<ChatCompletionCreateParamsBase, "stream">;
