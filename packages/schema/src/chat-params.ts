/**
 * Chat-completions parameters that have no messages-format counterpart. They are defined once
 * here because two schemas use them: {@link ChatRequest} and the pivot's `turnpike.chat`
 * extension ({@link TurnpikeChatParams}).
 */
import { Type, type Static } from "@sinclair/typebox";
import { OpenEnum } from "./open.js";
import { Nullable } from "./nullable.js";

/**
 * `{include_usage?, include_obfuscation?}`; only valid with `stream: true` (docs/protocols.md §2.2).
 *
 * @example
 * ```ts
 * const so: ChatStreamOptions = { include_usage: true };
 * ```
 */
export const ChatStreamOptions = Type.Object({
  include_usage: Type.Optional(Type.Boolean()),
  include_obfuscation: Type.Optional(Type.Boolean()),
});
export type ChatStreamOptions = Static<typeof ChatStreamOptions>;

/** `{type:"text"}`: plain text output (the default). */
export const ChatResponseFormatText = Type.Object({ type: Type.Literal("text") });
export type ChatResponseFormatText = Static<typeof ChatResponseFormatText>;

/** `{type:"json_object"}`: JSON mode (any valid JSON object). */
export const ChatResponseFormatJsonObject = Type.Object({ type: Type.Literal("json_object") });
export type ChatResponseFormatJsonObject = Static<typeof ChatResponseFormatJsonObject>;

/** `{type:"json_schema", json_schema:{name, description?, schema?, strict?}}`: structured output. */
export const ChatResponseFormatJsonSchema = Type.Object({
  type: Type.Literal("json_schema"),
  json_schema: Type.Object({
    name: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    strict: Type.Optional(Nullable(Type.Boolean())),
  }),
});
export type ChatResponseFormatJsonSchema = Static<typeof ChatResponseFormatJsonSchema>;

/**
 * `response_format`, one of three forms.
 *
 * @example
 * ```ts
 * const rf: ChatResponseFormat = {
 *   type: "json_schema",
 *   json_schema: { name: "city", schema: { type: "object", properties: { name: { type: "string" } } } },
 * };
 * ```
 */
export const ChatResponseFormat = Type.Union(
  [ChatResponseFormatText, ChatResponseFormatJsonObject, ChatResponseFormatJsonSchema],
  {
    discriminatorLabel: "response_format type",
  },
);
export type ChatResponseFormat = Static<typeof ChatResponseFormat>;

/**
 * `reasoning_effort` values (support varies by model).
 *
 * @example
 * ```ts
 * const e: ReasoningEffort = "low";
 * ```
 */
export const ReasoningEffort = OpenEnum(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);
export type ReasoningEffort = Static<typeof ReasoningEffort>;

/**
 * Token id → bias (−100…100).
 *
 * @example
 * ```ts
 * const lb: LogitBias = { "50256": -100 };
 * ```
 */
export const LogitBias = Type.Record(Type.String(), Type.Number({ minimum: -100, maximum: 100 }));
export type LogitBias = Static<typeof LogitBias>;
