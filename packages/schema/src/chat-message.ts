/** Messages of the chat completions format (docs/protocols.md §2.3), discriminated on `role`. */
import { Type, type Static } from "@sinclair/typebox";
import { CacheControl } from "./cache-control.js";
import { Nullable } from "./nullable.js";
import { OtherTyped } from "./open.js";

/**
 * `{type:"text", text}`. `cache_control` is a common extension of chat clients that reach a
 * messages-format upstream through a gateway: a prompt-cache breakpoint on this part.
 */
export const ChatTextPart = Type.Object({
  type: Type.Literal("text"),
  text: Type.String(),
  cache_control: Type.Optional(Nullable(CacheControl)),
});
export type ChatTextPart = Static<typeof ChatTextPart>;

/** `{type:"image_url", image_url:{url, detail?}}`; `url` is http(s) or `data:<mime>;base64,…`. */
export const ChatImagePart = Type.Object({
  type: Type.Literal("image_url"),
  image_url: Type.Object({
    url: Type.String({ minLength: 1 }),
    detail: Type.Optional(Type.Union([Type.Literal("auto"), Type.Literal("low"), Type.Literal("high")])),
  }),
  cache_control: Type.Optional(Nullable(CacheControl)),
});
export type ChatImagePart = Static<typeof ChatImagePart>;

/** `{type:"input_audio", input_audio:{data, format}}`. */
export const ChatAudioPart = Type.Object({
  type: Type.Literal("input_audio"),
  input_audio: Type.Object({ data: Type.String(), format: Type.Union([Type.Literal("wav"), Type.Literal("mp3")]) }),
});
export type ChatAudioPart = Static<typeof ChatAudioPart>;

/** `{type:"file", file:{file_data?, file_id?, filename?}}`. */
export const ChatFilePart = Type.Object({
  type: Type.Literal("file"),
  file: Type.Object({
    file_data: Type.Optional(Type.String()),
    file_id: Type.Optional(Type.String()),
    filename: Type.Optional(Type.String()),
  }),
});
export type ChatFilePart = Static<typeof ChatFilePart>;

/** `{type:"refusal", refusal}`: only in assistant content. */
export const ChatRefusalPart = Type.Object({ type: Type.Literal("refusal"), refusal: Type.String() });
export type ChatRefusalPart = Static<typeof ChatRefusalPart>;

/**
 * A part of a user message's content.
 *
 * @example
 * ```ts
 * const parts: ChatContentPart[] = [
 *   { type: "text", text: "What is in this image?" },
 *   { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "low" } },
 * ];
 * ```
 */
/** The user content part types Turnpike knows; any other is open (see `OtherTyped`). */
export const CHAT_PART_TYPES = ["text", "image_url", "input_audio", "file"] as const;

export const ChatContentPart = Type.Union(
  [ChatTextPart, ChatImagePart, ChatAudioPart, ChatFilePart, OtherTyped(CHAT_PART_TYPES)],
  {
    discriminatorLabel: "content part type",
  },
);
export type ChatContentPart = Static<typeof ChatContentPart>;

const textContent = Type.Union([Type.String(), Type.Array(ChatTextPart)], {
  expected: "string or array of text parts",
});

/** `{role:"system", content, name?}`. May appear anywhere, more than once. */
export const ChatSystemMessage = Type.Object({
  role: Type.Literal("system"),
  content: textContent,
  name: Type.Optional(Type.String()),
});
export type ChatSystemMessage = Static<typeof ChatSystemMessage>;

/** `{role:"developer", content, name?}`: the system role of newer reasoning models. */
export const ChatDeveloperMessage = Type.Object({
  role: Type.Literal("developer"),
  content: textContent,
  name: Type.Optional(Type.String()),
});
export type ChatDeveloperMessage = Static<typeof ChatDeveloperMessage>;

/** `{role:"user", content, name?}`. */
export const ChatUserMessage = Type.Object({
  role: Type.Literal("user"),
  content: Type.Union([Type.String(), Type.Array(ChatContentPart)], { expected: "string or array of content parts" }),
  name: Type.Optional(Type.String()),
});
export type ChatUserMessage = Static<typeof ChatUserMessage>;

/** A function call: `arguments` is a JSON *string*. */
export const ChatFunctionToolCall = Type.Object({
  id: Type.String(),
  type: Type.Literal("function"),
  function: Type.Object({ name: Type.String(), arguments: Type.String() }),
});
export type ChatFunctionToolCall = Static<typeof ChatFunctionToolCall>;

/** A call of a `custom` (free-form input) tool. */
export const ChatCustomToolCall = Type.Object({
  id: Type.String(),
  type: Type.Literal("custom"),
  custom: Type.Object({ name: Type.String(), input: Type.String() }),
});
export type ChatCustomToolCall = Static<typeof ChatCustomToolCall>;

/**
 * A tool call in an assistant message (request history or reply).
 *
 * @example
 * ```ts
 * const call: ChatToolCall = {
 *   id: "call_qOfT", type: "function",
 *   function: { name: "get_weather", arguments: "{\"location\":\"Shanghai\"}" },
 * };
 * ```
 */
export const ChatToolCall = Type.Union([ChatFunctionToolCall, ChatCustomToolCall], {
  discriminatorLabel: "tool call type",
});
export type ChatToolCall = Static<typeof ChatToolCall>;

/** Legacy `function_call` of an assistant message. */
export const ChatFunctionCall = Type.Object({ name: Type.String(), arguments: Type.String() });
export type ChatFunctionCall = Static<typeof ChatFunctionCall>;

/**
 * `{role:"assistant", content?, tool_calls?, refusal?, …}`. `content` may be null when
 * `tool_calls` is present. `reasoning_content` is a vendor extension (DeepSeek, xAI, vLLM).
 */
export const ChatAssistantMessage = Type.Object({
  role: Type.Literal("assistant"),
  content: Type.Optional(
    Nullable(
      Type.Union([
        Type.String(),
        Type.Array(Type.Union([ChatTextPart, ChatRefusalPart], { discriminatorLabel: "content part type" })),
      ]),
      {
        expected: "string, array of text or refusal parts, or null",
      },
    ),
  ),
  refusal: Type.Optional(Nullable(Type.String())),
  name: Type.Optional(Type.String()),
  tool_calls: Type.Optional(Type.Array(ChatToolCall)),
  function_call: Type.Optional(Nullable(ChatFunctionCall)),
  audio: Type.Optional(Nullable(Type.Object({ id: Type.String() }))),
  reasoning_content: Type.Optional(Nullable(Type.String())),
});
export type ChatAssistantMessage = Static<typeof ChatAssistantMessage>;

/** `{role:"tool", tool_call_id, content}`: text only. */
export const ChatToolMessage = Type.Object({
  role: Type.Literal("tool"),
  tool_call_id: Type.String({ minLength: 1 }),
  content: textContent,
});
export type ChatToolMessage = Static<typeof ChatToolMessage>;

/** Legacy `{role:"function", name, content}`. */
export const ChatFunctionMessage = Type.Object({
  role: Type.Literal("function"),
  name: Type.String({ minLength: 1 }),
  content: Nullable(Type.String()),
});
export type ChatFunctionMessage = Static<typeof ChatFunctionMessage>;

/**
 * Any chat message, discriminated on `role`.
 *
 * @example
 * ```ts
 * const history: ChatMessage[] = [
 *   { role: "system", content: "Be brief." },
 *   { role: "user", content: "Weather in Paris?" },
 *   { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }] },
 *   { role: "tool", tool_call_id: "call_1", content: "18°C" },
 * ];
 * ```
 */
export const ChatMessage = Type.Union(
  [
    ChatSystemMessage,
    ChatDeveloperMessage,
    ChatUserMessage,
    ChatAssistantMessage,
    ChatToolMessage,
    ChatFunctionMessage,
  ],
  { discriminatorLabel: "role" },
);
export type ChatMessage = Static<typeof ChatMessage>;
