/**
 * Output content blocks of the messages format (docs/protocols.md §1.3 "Output"): what a reply's
 * `content` holds and what `content_block_start` opens. Parsed leniently: unknown fields pass.
 */
import { Type, type Static } from "@sinclair/typebox";
import { ServerToolBlockType } from "./content-block-param.js";
import { Nullable } from "./nullable.js";

/**
 * `{type:"text", text, citations?}`. Unlike {@link TextBlockParam} the text may be empty (a
 * streamed block opens with `text: ""`).
 *
 * @example
 * ```ts
 * const b: TextBlock = { type: "text", text: "Hello!", citations: null };
 * ```
 */
export const TextBlock = Type.Object({
  type: Type.Literal("text"),
  text: Type.String(),
  citations: Type.Optional(Nullable(Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true })))),
});
export type TextBlock = Static<typeof TextBlock>;

/**
 * `{type:"tool_use", id, name, input}`. In a stream the block opens with `input: {}` and the
 * arguments arrive as `input_json_delta` fragments.
 *
 * @example
 * ```ts
 * const b: ToolUseBlock = { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris" } };
 * ```
 */
export const ToolUseBlock = Type.Object({
  type: Type.Literal("tool_use"),
  id: Type.String(),
  name: Type.String(),
  input: Type.Record(Type.String(), Type.Unknown()),
});
export type ToolUseBlock = Static<typeof ToolUseBlock>;

/**
 * `{type:"thinking", thinking, signature}`. `signature` is optional here because a streamed
 * block opens without it (it arrives later as a `signature_delta`).
 *
 * @example
 * ```ts
 * const b: ThinkingBlock = { type: "thinking", thinking: "Let me see...", signature: "EqQB..." };
 * ```
 */
export const ThinkingBlock = Type.Object({
  type: Type.Literal("thinking"),
  thinking: Type.String(),
  signature: Type.Optional(Type.String()),
});
export type ThinkingBlock = Static<typeof ThinkingBlock>;

/**
 * `{type:"redacted_thinking", data}`; in a stream it arrives whole in `content_block_start`.
 *
 * @example
 * ```ts
 * const b: RedactedThinkingBlock = { type: "redacted_thinking", data: "EmwKAhgB..." };
 * ```
 */
export const RedactedThinkingBlock = Type.Object({ type: Type.Literal("redacted_thinking"), data: Type.String() });
export type RedactedThinkingBlock = Static<typeof RedactedThinkingBlock>;

/**
 * Server-tool output blocks (`server_tool_use`, `web_search_tool_result`, …), relayed as-is.
 *
 * @example
 * ```ts
 * const b: ServerToolBlock = { type: "server_tool_use" };
 * ```
 */
export const ServerToolBlock = Type.Object({ type: ServerToolBlockType }, { additionalProperties: true });
export type ServerToolBlock = Static<typeof ServerToolBlock>;

/**
 * Any output block, discriminated on `type`.
 *
 * @example
 * ```ts
 * const text = (blocks: ContentBlock[]) => blocks.map((b) => (b.type === "text" ? b.text : "")).join("");
 * ```
 */
export const ContentBlock = Type.Union(
  [TextBlock, ToolUseBlock, ThinkingBlock, RedactedThinkingBlock, ServerToolBlock],
  {
    discriminatorLabel: "block type",
  },
);
export type ContentBlock = Static<typeof ContentBlock>;
