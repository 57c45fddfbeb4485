/**
 * Stream chunks of the chat completions format (docs/protocols.md §2.6). Framed as `data: <json>`
 * with no `event:` line, ended by `data: [DONE]`.
 */
import { Type, type Static } from "@sinclair/typebox";
import { ChatFunctionCall } from "./chat-message.js";
import { ChatLogprobs, ChatUsage, FinishReason } from "./chat-response.js";
import { Nullable } from "./nullable.js";

/**
 * A tool-call fragment. The first one for a call carries `index`, `id`, `type` and
 * `function.name`; later ones only `index` and an `arguments` fragment. `index` is the call's
 * ordinal, separate from the choice index (and not always starting at 0 on compatible vendors).
 *
 * @example
 * ```ts
 * const first: ChatToolCallDelta = { index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } };
 * const next: ChatToolCallDelta = { index: 0, function: { arguments: "{\"city\":" } };
 * ```
 */
export const ChatToolCallDelta = Type.Object({
  index: Type.Integer({ minimum: 0 }),
  id: Type.Optional(Type.String()),
  type: Type.Optional(Type.Literal("function")),
  function: Type.Optional(
    Type.Object({
      name: Type.Optional(Type.String()),
      arguments: Type.Optional(Type.String()),
    }),
  ),
});
export type ChatToolCallDelta = Static<typeof ChatToolCallDelta>;

/** `choices[].delta`: every field optional; `{}` on the finish chunk. */
export const ChatChunkDelta = Type.Object({
  role: Type.Optional(
    Type.Union([
      Type.Literal("assistant"),
      Type.Literal("developer"),
      Type.Literal("system"),
      Type.Literal("user"),
      Type.Literal("tool"),
    ]),
  ),
  content: Type.Optional(Nullable(Type.String())),
  refusal: Type.Optional(Nullable(Type.String())),
  tool_calls: Type.Optional(Type.Array(ChatToolCallDelta)),
  function_call: Type.Optional(Type.Partial(ChatFunctionCall)),
  /** Vendor extension (DeepSeek, xAI, vLLM). */
  reasoning_content: Type.Optional(Nullable(Type.String())),
});
export type ChatChunkDelta = Static<typeof ChatChunkDelta>;

/** One entry of a chunk's `choices`. */
export const ChatChunkChoice = Type.Object({
  index: Type.Integer({ minimum: 0 }),
  delta: ChatChunkDelta,
  logprobs: Type.Optional(Nullable(ChatLogprobs)),
  finish_reason: Nullable(FinishReason),
});
export type ChatChunkChoice = Static<typeof ChatChunkChoice>;

/**
 * One streamed chunk. `choices` is empty on the usage chunk (sent last when
 * `stream_options.include_usage` is true); `usage` is null on every other chunk.
 *
 * @example
 * ```ts
 * const c: ChatChunk = {
 *   id: "chatcmpl-1", object: "chat.completion.chunk", created: 1770933892, model: "beta-4o",
 *   choices: [{ index: 0, delta: { content: "Hello" }, finish_reason: null }],
 *   usage: null,
 * };
 * ```
 */
export const ChatChunk = Type.Object({
  id: Type.String(),
  object: Type.Literal("chat.completion.chunk"),
  created: Type.Integer(),
  model: Type.String(),
  choices: Type.Array(ChatChunkChoice),
  usage: Type.Optional(Nullable(ChatUsage)),
  system_fingerprint: Type.Optional(Nullable(Type.String())),
  service_tier: Type.Optional(Nullable(Type.String())),
  obfuscation: Type.Optional(Type.String()),
});
export type ChatChunk = Static<typeof ChatChunk>;
