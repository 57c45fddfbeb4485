/** The messages-format request body (docs/protocols.md §1.2). */
import { Type, type Static } from "@sinclair/typebox";
import { CacheControl } from "./cache-control.js";
import { ContentBlockParam, TextBlockParam } from "./content-block-param.js";
import { Nullable } from "./nullable.js";
import { OpenEnum } from "./open.js";
import { TurnpikeExtension } from "./turnpike-extension.js";

/**
 * One conversation turn. `role` is `user` or `assistant`, or `system` for a mid-conversation
 * system message (the `mid-conversation-system-2026-04-07` beta, which coding agents send on
 * every call: docs/protocols.md §1.2), whose content is text only; `content` is a string or an
 * array of blocks.
 *
 * @example
 * ```ts
 * const m: MessageParam = { role: "user", content: [{ type: "text", text: "Hi" }] };
 * const s: MessageParam = { role: "system", content: "Available skills: …" };
 * ```
 */
export const MessageParam = Type.Object({
  role: Type.Union([Type.Literal("user"), Type.Literal("assistant"), Type.Literal("system")], {
    hint: 'the first system prompt goes in the top-level "system" field',
  }),
  content: Type.Union([Type.String(), Type.Array(ContentBlockParam)], {
    expected: "string or array of content blocks",
  }),
});
export type MessageParam = Static<typeof MessageParam>;

/**
 * The top-level `system` prompt: a string or text blocks (which may carry `cache_control`).
 *
 * @example
 * ```ts
 * const s: SystemPrompt = [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }];
 * ```
 */
export const SystemPrompt = Type.Union([Type.String(), Type.Array(TextBlockParam)], {
  expected: "string or array of text blocks",
});
export type SystemPrompt = Static<typeof SystemPrompt>;

/** A tool's `input_schema`: a JSON Schema object whose `type` is `"object"`. */
export const ToolInputSchema = Type.Object(
  {
    type: Type.Literal("object"),
    properties: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
    required: Type.Optional(Nullable(Type.Array(Type.String()))),
  },
  { additionalProperties: true },
);
export type ToolInputSchema = Static<typeof ToolInputSchema>;

/**
 * A client tool: the caller runs it. `type` is absent or `"custom"`.
 *
 * @example
 * ```ts
 * const t: ClientTool = {
 *   name: "get_weather",
 *   description: "Current weather for a city",
 *   input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
 * };
 * ```
 */
export const ClientTool = Type.Object(
  {
    type: Type.Optional(Type.Literal("custom")),
    name: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    input_schema: ToolInputSchema,
    cache_control: Type.Optional(Nullable(CacheControl)),
    strict: Type.Optional(Type.Boolean()),
    eager_input_streaming: Type.Optional(Nullable(Type.Boolean())),
  },
  { additionalProperties: true },
);
export type ClientTool = Static<typeof ClientTool>;

/**
 * A vendor server tool (`web_search_20250305`, `bash_20250124`, …). Turnpike passes these
 * through to a messages-format upstream without interpreting them, so only `type` is checked.
 *
 * @example
 * ```ts
 * const t: ServerTool = { type: "web_search_20250305", name: "web_search" };
 * ```
 */
export const ServerTool = Type.Object(
  {
    type: Type.String({ pattern: "^(?!custom$)[A-Za-z0-9_.-]+$" }),
    name: Type.Optional(Type.String()),
    cache_control: Type.Optional(Nullable(CacheControl)),
  },
  { additionalProperties: true },
);
export type ServerTool = Static<typeof ServerTool>;

/**
 * Any entry of `tools`: a {@link ClientTool} (no `type`, or `"custom"`) or a {@link ServerTool}.
 *
 * @example
 * ```ts
 * const isClient = (t: ToolDefinition): t is ClientTool => "input_schema" in t;
 * ```
 */
export const ToolDefinition = Type.Union([ClientTool, ServerTool], { discriminatorLabel: "tool type" });
export type ToolDefinition = Static<typeof ToolDefinition>;

const disable_parallel_tool_use = Type.Optional(Type.Boolean());

/** `{type:"auto"}`: the model decides. */
export const ToolChoiceAuto = Type.Object({ type: Type.Literal("auto"), disable_parallel_tool_use });
export type ToolChoiceAuto = Static<typeof ToolChoiceAuto>;
/** `{type:"any"}`: the model must call some tool. */
export const ToolChoiceAny = Type.Object({ type: Type.Literal("any"), disable_parallel_tool_use });
export type ToolChoiceAny = Static<typeof ToolChoiceAny>;
/** `{type:"tool", name}`: the model must call this tool. */
export const ToolChoiceTool = Type.Object({
  type: Type.Literal("tool"),
  name: Type.String({ minLength: 1 }),
  disable_parallel_tool_use,
});
export type ToolChoiceTool = Static<typeof ToolChoiceTool>;
/** `{type:"none"}`: no tool calls. */
export const ToolChoiceNone = Type.Object({ type: Type.Literal("none") });
export type ToolChoiceNone = Static<typeof ToolChoiceNone>;

/**
 * `tool_choice`. `disable_parallel_tool_use: true` means at most one call (auto) or exactly
 * one (any, tool).
 *
 * @example
 * ```ts
 * const tc: ToolChoice = { type: "tool", name: "get_weather", disable_parallel_tool_use: true };
 * ```
 */
export const ToolChoice = Type.Union([ToolChoiceAuto, ToolChoiceAny, ToolChoiceTool, ToolChoiceNone], {
  discriminatorLabel: "tool_choice type",
});
export type ToolChoice = Static<typeof ToolChoice>;

/** `display` of thinking: full summary or omitted (open: newer values, such as `"updates"`, pass through). */
export const ThinkingDisplay = OpenEnum(["summarized", "omitted"]);
export type ThinkingDisplay = Static<typeof ThinkingDisplay>;

/** `{type:"enabled", budget_tokens}`; the budget is ≥ 1024 and below `max_tokens`. */
export const ThinkingConfigEnabled = Type.Object({
  type: Type.Literal("enabled"),
  budget_tokens: Type.Integer({ minimum: 1024 }),
  display: Type.Optional(ThinkingDisplay),
});
export type ThinkingConfigEnabled = Static<typeof ThinkingConfigEnabled>;
/** `{type:"disabled"}`. */
export const ThinkingConfigDisabled = Type.Object({ type: Type.Literal("disabled") });
export type ThinkingConfigDisabled = Static<typeof ThinkingConfigDisabled>;
/** `{type:"adaptive"}`: the model picks its budget (the only mode on the newest models). */
export const ThinkingConfigAdaptive = Type.Object({
  type: Type.Literal("adaptive"),
  display: Type.Optional(ThinkingDisplay),
});
export type ThinkingConfigAdaptive = Static<typeof ThinkingConfigAdaptive>;

/**
 * `thinking`: extended thinking settings.
 *
 * @example
 * ```ts
 * const th: ThinkingConfig = { type: "enabled", budget_tokens: 2048 };
 * ```
 */
export const ThinkingConfig = Type.Union([ThinkingConfigEnabled, ThinkingConfigDisabled, ThinkingConfigAdaptive], {
  discriminatorLabel: "thinking type",
});
export type ThinkingConfig = Static<typeof ThinkingConfig>;

/** `output_config.effort`. */
export const OutputEffort = OpenEnum(["low", "medium", "high", "xhigh", "max"]);
export type OutputEffort = Static<typeof OutputEffort>;

/**
 * `output_config`: effort (pairs with adaptive thinking) and structured output format.
 *
 * @example
 * ```ts
 * const oc: OutputConfig = { effort: "high", format: { type: "json_schema", schema: { type: "object" } } };
 * ```
 */
export const OutputConfig = Type.Object({
  effort: Type.Optional(Nullable(OutputEffort)),
  format: Type.Optional(
    Nullable(Type.Object({ type: Type.Literal("json_schema"), schema: Type.Record(Type.String(), Type.Unknown()) })),
  ),
});
export type OutputConfig = Static<typeof OutputConfig>;

/** `metadata`: only an opaque end-user id. */
export const MessagesMetadata = Type.Object({ user_id: Type.Optional(Nullable(Type.String())) });
export type MessagesMetadata = Static<typeof MessagesMetadata>;

/** `service_tier` of a request. */
export const MessagesServiceTier = OpenEnum(["auto", "standard_only"]);
export type MessagesServiceTier = Static<typeof MessagesServiceTier>;

/**
 * The body of `POST /v1/messages`. Also the gateway's pivot format: the optional `turnpike`
 * field (internal, see {@link TurnpikeExtension}) carries chat-only parameters across a
 * translation. Unknown fields are allowed and survive passthrough.
 *
 * Rules beyond the schema (`temperature` and `top_p` not both, `thinking.budget_tokens` below
 * `max_tokens`) are applied by {@link validateMessagesRequest}.
 *
 * @example
 * ```ts
 * const req: MessagesRequest = {
 *   model: "alpha-sonnet-4-6",
 *   max_tokens: 1024,
 *   system: "Be brief.",
 *   messages: [{ role: "user", content: "Hello" }],
 * };
 * ```
 */
export const MessagesRequest = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    max_tokens: Type.Integer({ minimum: 0 }),
    messages: Type.Array(MessageParam, { minItems: 1, maxItems: 100_000 }),
    system: Type.Optional(SystemPrompt),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_k: Type.Optional(Type.Integer({ minimum: 0 })),
    stop_sequences: Type.Optional(Type.Array(Type.String())),
    stream: Type.Optional(Type.Boolean()),
    tools: Type.Optional(Type.Array(ToolDefinition)),
    tool_choice: Type.Optional(ToolChoice),
    metadata: Type.Optional(MessagesMetadata),
    thinking: Type.Optional(ThinkingConfig),
    output_config: Type.Optional(OutputConfig),
    service_tier: Type.Optional(MessagesServiceTier),
    container: Type.Optional(
      Nullable(Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown())]), {
        expected: "string, object or null",
      }),
    ),
    cache_control: Type.Optional(Nullable(CacheControl)),
    inference_geo: Type.Optional(Nullable(Type.String())),
    turnpike: Type.Optional(TurnpikeExtension),
  },
  { additionalProperties: true },
);
export type MessagesRequest = Static<typeof MessagesRequest>;
