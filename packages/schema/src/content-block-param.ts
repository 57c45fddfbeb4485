/**
 * Input content blocks of the messages format (docs/protocols.md §1.3): what a client may put in
 * `messages[].content`, `system` and `tool_result.content`.
 */
import { Type, type Static } from "@sinclair/typebox";
import { CacheControl } from "./cache-control.js";
import { Nullable } from "./nullable.js";
import { OtherTyped } from "./open.js";

const cache_control = Type.Optional(Nullable(CacheControl));

/** A citation a client echoes back on a text block; vendor-defined, kept as-is. */
export const TextCitationParam = Type.Object({ type: Type.String() }, { additionalProperties: true });
export type TextCitationParam = Static<typeof TextCitationParam>;

/**
 * `{type:"text", text}`. The text must be non-empty: the vendor answers an empty one with 400
 * "messages: text content blocks must be non-empty" (docs/protocols.md §1.3), so we reject it first.
 *
 * @example
 * ```ts
 * const b: TextBlockParam = { type: "text", text: "Hello", cache_control: { type: "ephemeral" } };
 * ```
 */
export const TextBlockParam = Type.Object({
  type: Type.Literal("text"),
  text: Type.String({ minLength: 1 }),
  citations: Type.Optional(Nullable(Type.Array(TextCitationParam))),
  cache_control,
});
export type TextBlockParam = Static<typeof TextBlockParam>;

/** The four image media types the messages format accepts. */
export const ImageMediaType = Type.Union([
  Type.Literal("image/jpeg"),
  Type.Literal("image/png"),
  Type.Literal("image/gif"),
  Type.Literal("image/webp"),
]);
export type ImageMediaType = Static<typeof ImageMediaType>;

/** Image bytes inline: `{type:"base64", media_type, data}`. */
export const Base64ImageSource = Type.Object({
  type: Type.Literal("base64"),
  media_type: ImageMediaType,
  data: Type.String(),
});
export type Base64ImageSource = Static<typeof Base64ImageSource>;

/** A source fetched by URL: `{type:"url", url}` (images and PDFs). */
export const UrlSource = Type.Object({ type: Type.Literal("url"), url: Type.String({ minLength: 1 }) });
export type UrlSource = Static<typeof UrlSource>;

/** A source uploaded earlier through the files API: `{type:"file", file_id}`. */
export const FileSource = Type.Object({ type: Type.Literal("file"), file_id: Type.String({ minLength: 1 }) });
export type FileSource = Static<typeof FileSource>;

/** Where an image comes from. */
export const ImageSource = Type.Union([Base64ImageSource, UrlSource, FileSource], {
  discriminatorLabel: "image source type",
});
export type ImageSource = Static<typeof ImageSource>;

/**
 * `{type:"image", source}`.
 *
 * @example
 * ```ts
 * const img: ImageBlockParam = {
 *   type: "image",
 *   source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo..." },
 * };
 * ```
 */
export const ImageBlockParam = Type.Object({
  type: Type.Literal("image"),
  source: ImageSource,
  cache_control,
});
export type ImageBlockParam = Static<typeof ImageBlockParam>;

/** A PDF inline: `{type:"base64", media_type:"application/pdf", data}`. */
export const Base64PdfSource = Type.Object({
  type: Type.Literal("base64"),
  media_type: Type.Literal("application/pdf"),
  data: Type.String(),
});
export type Base64PdfSource = Static<typeof Base64PdfSource>;

/** Plain text as a document: `{type:"text", media_type:"text/plain", data}`. */
export const PlainTextSource = Type.Object({
  type: Type.Literal("text"),
  media_type: Type.Literal("text/plain"),
  data: Type.String(),
});
export type PlainTextSource = Static<typeof PlainTextSource>;

/** A document made of blocks: `{type:"content", content: string | (text | image)[]}`. */
export const ContentBlockSource = Type.Object({
  type: Type.Literal("content"),
  content: Type.Union(
    [Type.String(), Type.Array(Type.Union([TextBlockParam, ImageBlockParam], { discriminatorLabel: "block type" }))],
    {
      expected: "string or array of text and image blocks",
    },
  ),
});
export type ContentBlockSource = Static<typeof ContentBlockSource>;

/** Where a document comes from. */
export const DocumentSource = Type.Union(
  [Base64PdfSource, PlainTextSource, ContentBlockSource, UrlSource, FileSource],
  {
    discriminatorLabel: "document source type",
  },
);
export type DocumentSource = Static<typeof DocumentSource>;

/**
 * `{type:"document", source, title?, context?, citations?}`.
 *
 * @example
 * ```ts
 * const doc: DocumentBlockParam = {
 *   type: "document",
 *   source: { type: "text", media_type: "text/plain", data: "The grass is green." },
 *   citations: { enabled: true },
 * };
 * ```
 */
export const DocumentBlockParam = Type.Object({
  type: Type.Literal("document"),
  source: DocumentSource,
  title: Type.Optional(Nullable(Type.String())),
  context: Type.Optional(Nullable(Type.String())),
  citations: Type.Optional(Nullable(Type.Object({ enabled: Type.Optional(Type.Boolean()) }))),
  cache_control,
});
export type DocumentBlockParam = Static<typeof DocumentBlockParam>;

/** The server-tool block types Turnpike knows (besides any `…_tool_result`): passed through, or dropped with a warning by a translation. */
export const SERVER_TOOL_BLOCK_TYPES = [
  "server_tool_use",
  "search_result",
  "container_upload",
  "mcp_tool_use",
] as const;
/** Every block type a message's content may hold that Turnpike knows; any other is open (see `OtherTyped`). */
export const BLOCK_TYPES = [
  "text",
  "image",
  "document",
  "tool_use",
  "tool_result",
  "thinking",
  "redacted_thinking",
  ...SERVER_TOOL_BLOCK_TYPES,
] as const;
/** The block types Turnpike knows inside a tool result's content. */
export const TOOL_RESULT_BLOCK_TYPES = ["text", "image", "document", ...SERVER_TOOL_BLOCK_TYPES] as const;

/**
 * Blocks of the vendor's server-side tools (web search, code execution, MCP, …) and
 * `search_result` / `container_upload`. Turnpike does not interpret them; they pass through to a
 * messages-format upstream unchanged, so only `type` is checked. The accepted types are the
 * ones the vendor's SDK lists (`server_tool_use`, `*_tool_result`, …), not any string, so that a
 * typo such as `"imagex"` is still reported.
 *
 * @example
 * ```ts
 * const b: ServerToolBlockParam = { type: "web_search_tool_result" };
 * ```
 */
export const ServerToolBlockType = Type.Union([
  Type.Literal("server_tool_use"),
  Type.Literal("search_result"),
  Type.Literal("container_upload"),
  Type.Literal("mcp_tool_use"),
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a TypeBox template-literal pattern, not a JS template
  Type.TemplateLiteral("${string}_tool_result"),
]);
export type ServerToolBlockType = Static<typeof ServerToolBlockType>;

export const ServerToolBlockParam = Type.Object(
  { type: ServerToolBlockType, cache_control },
  { additionalProperties: true },
);
export type ServerToolBlockParam = Static<typeof ServerToolBlockParam>;

/**
 * `{type:"tool_use", id, name, input}` — an earlier tool call, in an assistant turn.
 *
 * @example
 * ```ts
 * const call: ToolUseBlockParam = { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris" } };
 * ```
 */
export const ToolUseBlockParam = Type.Object({
  type: Type.Literal("tool_use"),
  id: Type.String({ minLength: 1 }),
  name: Type.String({ minLength: 1 }),
  input: Type.Record(Type.String(), Type.Unknown()),
  cache_control,
});
export type ToolUseBlockParam = Static<typeof ToolUseBlockParam>;

/** What a tool result may hold when it is not a plain string. */
export const ToolResultContentBlock = Type.Union(
  [
    TextBlockParam,
    ImageBlockParam,
    DocumentBlockParam,
    ServerToolBlockParam,
    OtherTyped(TOOL_RESULT_BLOCK_TYPES, ["_tool_result"]),
  ],
  {
    discriminatorLabel: "block type",
  },
);
export type ToolResultContentBlock = Static<typeof ToolResultContentBlock>;

/**
 * `{type:"tool_result", tool_use_id, content?, is_error?}` — the answer to a tool call, in a
 * user turn.
 *
 * @example
 * ```ts
 * const r: ToolResultBlockParam = { type: "tool_result", tool_use_id: "toolu_01", content: "18°C, sunny" };
 * ```
 */
export const ToolResultBlockParam = Type.Object({
  type: Type.Literal("tool_result"),
  tool_use_id: Type.String({ minLength: 1 }),
  content: Type.Optional(
    Type.Union([Type.String(), Type.Array(ToolResultContentBlock)], { expected: "string or array of content blocks" }),
  ),
  is_error: Type.Optional(Type.Boolean()),
  cache_control,
});
export type ToolResultBlockParam = Static<typeof ToolResultBlockParam>;

/**
 * `{type:"thinking", thinking, signature}` — echoed back unmodified from an earlier reply.
 *
 * @example
 * ```ts
 * const t: ThinkingBlockParam = { type: "thinking", thinking: "Let me see...", signature: "EqQB..." };
 * ```
 */
export const ThinkingBlockParam = Type.Object({
  type: Type.Literal("thinking"),
  thinking: Type.String(),
  signature: Type.String(),
  cache_control,
});
export type ThinkingBlockParam = Static<typeof ThinkingBlockParam>;

/**
 * `{type:"redacted_thinking", data}` — opaque, echoed back unchanged.
 *
 * @example
 * ```ts
 * const r: RedactedThinkingBlockParam = { type: "redacted_thinking", data: "EmwKAhgB..." };
 * ```
 */
export const RedactedThinkingBlockParam = Type.Object({
  type: Type.Literal("redacted_thinking"),
  data: Type.String(),
  cache_control,
});
export type RedactedThinkingBlockParam = Static<typeof RedactedThinkingBlockParam>;

/**
 * Any input content block, discriminated on `type`. Besides the seven blocks Turnpike
 * translates, {@link ServerToolBlockParam} lets server-tool blocks pass through. Its `type` is
 * itself a union, so in an exhaustive `switch` handle it in `default:`, where `b` has narrowed
 * to `ServerToolBlockParam`.
 *
 * @example
 * ```ts
 * function textOf(b: ContentBlockParam): string {
 *   switch (b.type) {
 *     case "text": return b.text;
 *     case "image": case "document": case "tool_use": case "tool_result":
 *     case "thinking": case "redacted_thinking": return "";
 *     default: { const server: ServerToolBlockParam = b; return `[${server.type}]`; }
 *   }
 * }
 * ```
 */
export const ContentBlockParam = Type.Union(
  [
    TextBlockParam,
    ImageBlockParam,
    DocumentBlockParam,
    ToolUseBlockParam,
    ToolResultBlockParam,
    ThinkingBlockParam,
    RedactedThinkingBlockParam,
    ServerToolBlockParam,
    OtherTyped(BLOCK_TYPES, ["_tool_result"]),
  ],
  { discriminatorLabel: "block type" },
);
export type ContentBlockParam = Static<typeof ContentBlockParam>;
