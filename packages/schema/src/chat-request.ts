/** The chat completions request body (docs/protocols.md §2.2). */
import { Type, type Static } from "@sinclair/typebox";
import { ChatMessage } from "./chat-message.js";
import { Nullable } from "./nullable.js";
import { OpenEnum } from "./open.js";
import { TurnpikeChatParams } from "./turnpike-extension.js";

/** A function's name: the vendor allows a-z, A-Z, 0-9, `_` and `-`, at most 64 characters. */
export const ChatFunctionName = Type.String({
  pattern: "^[a-zA-Z0-9_-]{1,64}$",
  rule: "must be 1 to 64 characters of a-z, A-Z, 0-9, _ or -",
});
export type ChatFunctionName = Static<typeof ChatFunctionName>;

/** `{name, description?, parameters?, strict?}` of a function tool (and of legacy `functions`). */
export const ChatFunctionDefinition = Type.Object({
  name: ChatFunctionName,
  description: Type.Optional(Type.String()),
  parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  strict: Type.Optional(Nullable(Type.Boolean())),
});
export type ChatFunctionDefinition = Static<typeof ChatFunctionDefinition>;

/** `{type:"function", function}`. */
export const ChatFunctionTool = Type.Object({ type: Type.Literal("function"), function: ChatFunctionDefinition });
export type ChatFunctionTool = Static<typeof ChatFunctionTool>;

/** `{type:"custom", custom:{name, description?, format?}}`: a tool with free-form text input. */
export const ChatCustomTool = Type.Object({
  type: Type.Literal("custom"),
  custom: Type.Object({
    name: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    format: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  }),
});
export type ChatCustomTool = Static<typeof ChatCustomTool>;

/**
 * An entry of `tools`.
 *
 * @example
 * ```ts
 * const t: ChatTool = {
 *   type: "function",
 *   function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
 * };
 * ```
 */
export const ChatTool = Type.Union([ChatFunctionTool, ChatCustomTool], { discriminatorLabel: "tool type" });
export type ChatTool = Static<typeof ChatTool>;

/** `{type:"function", function:{name}}`: call this function. */
export const ChatNamedToolChoice = Type.Object({
  type: Type.Literal("function"),
  function: Type.Object({ name: Type.String({ minLength: 1 }) }),
});
export type ChatNamedToolChoice = Static<typeof ChatNamedToolChoice>;

/** `{type:"allowed_tools", allowed_tools:{mode, tools}}`: restrict to a subset of `tools`. */
export const ChatAllowedToolsChoice = Type.Object({
  type: Type.Literal("allowed_tools"),
  allowed_tools: Type.Object({
    mode: Type.Union([Type.Literal("auto"), Type.Literal("required")]),
    tools: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  }),
});
export type ChatAllowedToolsChoice = Static<typeof ChatAllowedToolsChoice>;

/** `{type:"custom", custom:{name}}`: call this custom tool. */
export const ChatCustomToolChoice = Type.Object({
  type: Type.Literal("custom"),
  custom: Type.Object({ name: Type.String({ minLength: 1 }) }),
});
export type ChatCustomToolChoice = Static<typeof ChatCustomToolChoice>;

/**
 * `tool_choice`: `"none" | "auto" | "required"` or an object form.
 *
 * @example
 * ```ts
 * const a: ChatToolChoice = "required";
 * const b: ChatToolChoice = { type: "function", function: { name: "get_weather" } };
 * ```
 */
export const ChatToolChoice = Type.Union(
  [
    Type.Literal("none"),
    Type.Literal("auto"),
    Type.Literal("required"),
    ChatNamedToolChoice,
    ChatAllowedToolsChoice,
    ChatCustomToolChoice,
  ],
  { discriminatorLabel: "tool_choice type" },
);
export type ChatToolChoice = Static<typeof ChatToolChoice>;

/** `service_tier` (open: a newer tier passes through). */
export const ChatServiceTier = OpenEnum(["auto", "default", "flex", "scale", "priority"]);
/** `verbosity` (open: a newer value passes through). */
export const ChatVerbosity = OpenEnum(["low", "medium", "high"]);

/** Legacy `function_call` request field. */
export const ChatFunctionCallOption = Type.Union([
  Type.Literal("none"),
  Type.Literal("auto"),
  Type.Object({ name: Type.String({ minLength: 1 }) }),
]);
export type ChatFunctionCallOption = Static<typeof ChatFunctionCallOption>;

/**
 * The body of `POST /v1/chat/completions`. Fields the OpenAI client types as nullable accept
 * `null` (some clients send `"temperature": null` for "unset"). Unknown fields are allowed:
 * vendors add their own, and passthrough keeps them.
 *
 * Rules beyond the schema (no top-level `system`, `stream_options` only with `stream: true`)
 * are applied by {@link validateChatRequest}.
 *
 * @example
 * ```ts
 * const req: ChatRequest = {
 *   model: "beta-4o",
 *   messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hello" }],
 *   stream: true,
 *   stream_options: { include_usage: true },
 * };
 * ```
 */
export const ChatRequest = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    messages: Type.Array(ChatMessage, { minItems: 1 }),
    max_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    max_completion_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
    top_p: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
    stop: Type.Optional(
      Nullable(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 4 })]), {
        expected: "string, array of strings or null",
      }),
    ),
    stream: Type.Optional(Nullable(Type.Boolean())),
    tools: Type.Optional(Type.Array(ChatTool)),
    tool_choice: Type.Optional(ChatToolChoice),
    functions: Type.Optional(Type.Array(ChatFunctionDefinition)),
    function_call: Type.Optional(ChatFunctionCallOption),
    metadata: Type.Optional(Nullable(Type.Record(Type.String(), Type.String()))),
    store: Type.Optional(Nullable(Type.Boolean())),
    modalities: Type.Optional(Nullable(Type.Array(Type.Union([Type.Literal("text"), Type.Literal("audio")])))),
    service_tier: Type.Optional(Nullable(ChatServiceTier)),
    audio: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
    prediction: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
    verbosity: Type.Optional(Nullable(ChatVerbosity)),
    web_search_options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    safety_identifier: Type.Optional(Type.String()),
    prompt_cache_key: Type.Optional(Type.String()),
    ...TurnpikeChatParams.properties,
  },
  { additionalProperties: true },
);
export type ChatRequest = Static<typeof ChatRequest>;
