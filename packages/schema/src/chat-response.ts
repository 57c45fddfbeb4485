/** The chat completions reply (docs/protocols.md §2.4–2.5). */
import { Type, type Static } from "@sinclair/typebox";
import { ChatFunctionCall, ChatToolCall } from "./chat-message.js";
import { Nullable } from "./nullable.js";

/**
 * Why a choice stopped. `stop` covers both a natural stop and a stop sequence.
 *
 * @example
 * ```ts
 * const f: FinishReason = "tool_calls";
 * ```
 */
export const FinishReason = Type.Union([
  Type.Literal("stop"),
  Type.Literal("length"),
  Type.Literal("tool_calls"),
  Type.Literal("content_filter"),
  Type.Literal("function_call"),
]);
export type FinishReason = Static<typeof FinishReason>;

const count = Type.Integer({ minimum: 0 });
const optionalCount = Type.Optional(Nullable(count));

/** `usage.prompt_tokens_details`: subsets of `prompt_tokens`. */
export const ChatPromptTokensDetails = Type.Object({
  cached_tokens: optionalCount,
  audio_tokens: optionalCount,
  image_tokens: optionalCount,
  text_tokens: optionalCount,
  cache_write_tokens: optionalCount,
});
export type ChatPromptTokensDetails = Static<typeof ChatPromptTokensDetails>;

/** `usage.completion_tokens_details`: subsets of `completion_tokens`. */
export const ChatCompletionTokensDetails = Type.Object({
  reasoning_tokens: optionalCount,
  audio_tokens: optionalCount,
  accepted_prediction_tokens: optionalCount,
  rejected_prediction_tokens: optionalCount,
});
export type ChatCompletionTokensDetails = Static<typeof ChatCompletionTokensDetails>;

/**
 * Token usage (docs/protocols.md §2.5). Unlike the messages format, `prompt_tokens` *includes*
 * cached tokens and `completion_tokens` includes reasoning tokens.
 *
 * @example
 * ```ts
 * const u: ChatUsage = {
 *   prompt_tokens: 16, completion_tokens: 363, total_tokens: 379,
 *   prompt_tokens_details: { cached_tokens: 0 },
 * };
 * ```
 */
export const ChatUsage = Type.Object({
  prompt_tokens: count,
  completion_tokens: count,
  total_tokens: count,
  prompt_tokens_details: Type.Optional(Nullable(ChatPromptTokensDetails)),
  completion_tokens_details: Type.Optional(Nullable(ChatCompletionTokensDetails)),
  /** DeepSeek. */
  prompt_cache_hit_tokens: optionalCount,
  /** DeepSeek. */
  prompt_cache_miss_tokens: optionalCount,
});
export type ChatUsage = Static<typeof ChatUsage>;

/** Token log-probabilities of a choice; relayed, not interpreted. */
export const ChatLogprobs = Type.Record(Type.String(), Type.Unknown());
export type ChatLogprobs = Static<typeof ChatLogprobs>;

/** `choices[].message` of a reply. `reasoning_content` is a vendor extension (DeepSeek, xAI). */
export const ChatResponseMessage = Type.Object({
  role: Type.Literal("assistant"),
  content: Nullable(Type.String()),
  refusal: Type.Optional(Nullable(Type.String())),
  annotations: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
  tool_calls: Type.Optional(Type.Array(ChatToolCall)),
  function_call: Type.Optional(Nullable(ChatFunctionCall)),
  audio: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
  reasoning_content: Type.Optional(Nullable(Type.String())),
});
export type ChatResponseMessage = Static<typeof ChatResponseMessage>;

/** One entry of `choices`. */
export const ChatChoice = Type.Object({
  index: Type.Integer({ minimum: 0 }),
  message: ChatResponseMessage,
  logprobs: Type.Optional(Nullable(ChatLogprobs)),
  finish_reason: FinishReason,
});
export type ChatChoice = Static<typeof ChatChoice>;

/**
 * The reply of `POST /v1/chat/completions` (non-streaming).
 *
 * @example
 * ```ts
 * const res: ChatResponse = {
 *   id: "chatcmpl-1", object: "chat.completion", created: 1770933883, model: "beta-4o",
 *   choices: [{ index: 0, message: { role: "assistant", content: "Hi!" }, finish_reason: "stop" }],
 *   usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
 * };
 * ```
 */
export const ChatResponse = Type.Object({
  id: Type.String(),
  object: Type.Literal("chat.completion"),
  created: Type.Integer(),
  model: Type.String(),
  choices: Type.Array(ChatChoice),
  usage: Type.Optional(ChatUsage),
  service_tier: Type.Optional(Nullable(Type.String())),
  system_fingerprint: Type.Optional(Nullable(Type.String())),
});
export type ChatResponse = Static<typeof ChatResponse>;
