/**
 * The public types of `@turnpike/messages`. Wire types come from `@turnpike/schema`, so the
 * client, the gateway and the mocks share one definition; the names the official
 * messages-format client uses (`Message`, `MessageCreateParams`, …) are aliases of them.
 */
import type {
  CountTokensRequest,
  ErrorEvent,
  MessagesRequest,
  MessagesResponse,
  MessagesStreamEvent,
  PingEvent,
} from "@turnpike/schema";

export type {
  MessageBatch,
  MessageBatchIndividualResponse,
  MessageBatchList,
  MessageBatchResult,
  CitationsDelta,
  ContentBlock,
  ContentBlockDelta,
  ContentBlockDeltaEvent,
  ContentBlockParam,
  ContentBlockStartEvent,
  ContentBlockStopEvent,
  CountTokensRequest,
  CountTokensResponse,
  DocumentBlockParam,
  ImageBlockParam,
  InputJsonDelta,
  MessageDeltaEvent,
  MessageDeltaUsage,
  MessageParam,
  MessageStartEvent,
  MessageStopEvent,
  MessagesErrorBody,
  MessagesRequest,
  MessagesResponse,
  MessagesStreamEvent,
  MessagesUsage,
  Model,
  ModelList,
  RedactedThinkingBlock,
  RedactedThinkingBlockParam,
  SignatureDelta,
  StopReason,
  SystemPrompt,
  TextBlock,
  TextBlockParam,
  TextDelta,
  ThinkingBlock,
  ThinkingBlockParam,
  ThinkingConfig,
  ThinkingDelta,
  ToolChoice,
  ToolDefinition,
  ToolResultBlockParam,
  ToolUseBlock,
  ToolUseBlockParam,
} from "@turnpike/schema";

/** A reply of `messages.create` (the official client's name for {@link MessagesResponse}). */
export type Message = MessagesResponse;

/**
 * An event a stream yields: every messages-format event except `ping` (skipped) and `error`
 * (thrown as an `APIError` subclass instead).
 */
export type RawMessageStreamEvent = Exclude<MessagesStreamEvent, PingEvent | ErrorEvent>;

/**
 * The body of `messages.create`: the messages-format request without the gateway-internal
 * `turnpike` field.
 *
 * @example
 * ```ts
 * const params: MessageCreateParams = {
 *   model: "alpha-sonnet-4-6",
 *   max_tokens: 1024,
 *   messages: [{ role: "user", content: "Hello" }],
 * };
 * ```
 */
export type MessageCreateParamsBase = Omit<MessagesRequest, "turnpike" | "stream"> & { stream?: boolean };
/** {@link MessageCreateParamsBase} with `stream` absent or `false`: resolves to a {@link Message}. */
export type MessageCreateParamsNonStreaming = MessageCreateParamsBase & { stream?: false };
/** {@link MessageCreateParamsBase} with `stream: true`: resolves to a `Stream` of events. */
export type MessageCreateParamsStreaming = MessageCreateParamsBase & { stream: true };
/** Either form of the `messages.create` body. */
export type MessageCreateParams = MessageCreateParamsNonStreaming | MessageCreateParamsStreaming;
/** The body of `messages.stream`: `stream` is implied. */
export type MessageStreamParams = Omit<MessageCreateParamsBase, "stream">;
/** The body of `messages.countTokens`. */
export type MessageCountTokensParams = CountTokensRequest;
