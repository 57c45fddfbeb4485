/**
 * Stream events of the messages format (docs/protocols.md §1.7). Each event is framed as
 * `event: <type>\ndata: <json>\n\n`; the JSON `type` equals the event name, and the official
 * client dispatches on the `event:` line, so an encoder must write both.
 */
import { Type, type Static } from "@sinclair/typebox";
import { ContentBlock } from "./content-block.js";
import { MessagesErrorDetail } from "./errors.js";
import { MessagesResponse, ServerToolUsage, StopDetails, StopReason } from "./messages-response.js";
import { Nullable } from "./nullable.js";

const index = Type.Integer({ minimum: 0 });

/** `{type:"text_delta", text}`. */
export const TextDelta = Type.Object({ type: Type.Literal("text_delta"), text: Type.String() });
export type TextDelta = Static<typeof TextDelta>;
/** `{type:"input_json_delta", partial_json}`: a fragment of a tool call's JSON input (often `""` first). */
export const InputJsonDelta = Type.Object({ type: Type.Literal("input_json_delta"), partial_json: Type.String() });
export type InputJsonDelta = Static<typeof InputJsonDelta>;
/** `{type:"thinking_delta", thinking}`. */
export const ThinkingDelta = Type.Object({ type: Type.Literal("thinking_delta"), thinking: Type.String() });
export type ThinkingDelta = Static<typeof ThinkingDelta>;
/** `{type:"signature_delta", signature}`: sent just before the thinking block's stop. */
export const SignatureDelta = Type.Object({ type: Type.Literal("signature_delta"), signature: Type.String() });
export type SignatureDelta = Static<typeof SignatureDelta>;
/** `{type:"citations_delta", citation}`. */
export const CitationsDelta = Type.Object({
  type: Type.Literal("citations_delta"),
  citation: Type.Object({ type: Type.String() }, { additionalProperties: true }),
});
export type CitationsDelta = Static<typeof CitationsDelta>;

/**
 * The `delta` of a `content_block_delta`.
 *
 * @example
 * ```ts
 * const d: ContentBlockDelta = { type: "text_delta", text: "Hello" };
 * ```
 */
export const ContentBlockDelta = Type.Union(
  [TextDelta, InputJsonDelta, ThinkingDelta, SignatureDelta, CitationsDelta],
  {
    discriminatorLabel: "delta type",
  },
);
export type ContentBlockDelta = Static<typeof ContentBlockDelta>;

/** First event: the message with empty `content`, `stop_reason: null`, real `input_tokens`. */
export const MessageStartEvent = Type.Object({ type: Type.Literal("message_start"), message: MessagesResponse });
export type MessageStartEvent = Static<typeof MessageStartEvent>;

/** Opens block `index` (0, 1, 2… contiguous, in order). */
export const ContentBlockStartEvent = Type.Object({
  type: Type.Literal("content_block_start"),
  index,
  content_block: ContentBlock,
});
export type ContentBlockStartEvent = Static<typeof ContentBlockStartEvent>;

/** Appends to block `index`. */
export const ContentBlockDeltaEvent = Type.Object({
  type: Type.Literal("content_block_delta"),
  index,
  delta: ContentBlockDelta,
});
export type ContentBlockDeltaEvent = Static<typeof ContentBlockDeltaEvent>;

/** Closes block `index`. */
export const ContentBlockStopEvent = Type.Object({ type: Type.Literal("content_block_stop"), index });
export type ContentBlockStopEvent = Static<typeof ContentBlockStopEvent>;

const optionalCount = Type.Optional(Nullable(Type.Integer({ minimum: 0 })));

/**
 * `message_delta.usage`: cumulative totals (overwrite, never add). Only `output_tokens` is
 * always present; some proxies omit the input and cache counts.
 */
export const MessageDeltaUsage = Type.Object({
  output_tokens: Type.Integer({ minimum: 0 }),
  input_tokens: optionalCount,
  cache_creation_input_tokens: optionalCount,
  cache_read_input_tokens: optionalCount,
  server_tool_use: Type.Optional(Nullable(ServerToolUsage)),
});
export type MessageDeltaUsage = Static<typeof MessageDeltaUsage>;

/** Final stop reason and usage; may come more than once. */
export const MessageDeltaEvent = Type.Object({
  type: Type.Literal("message_delta"),
  delta: Type.Object({
    stop_reason: Nullable(StopReason),
    stop_sequence: Type.Optional(Nullable(Type.String())),
    stop_details: Type.Optional(Nullable(StopDetails)),
    container: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
  }),
  usage: MessageDeltaUsage,
});
export type MessageDeltaEvent = Static<typeof MessageDeltaEvent>;

/** Last event of a successful stream. */
export const MessageStopEvent = Type.Object({ type: Type.Literal("message_stop") });
export type MessageStopEvent = Static<typeof MessageStopEvent>;

/** Keep-alive; may appear anywhere. */
export const PingEvent = Type.Object({ type: Type.Literal("ping") });
export type PingEvent = Static<typeof PingEvent>;

/** An error after the HTTP 200; the stream then ends without `message_stop`. */
export const ErrorEvent = Type.Object({
  type: Type.Literal("error"),
  error: MessagesErrorDetail,
  request_id: Type.Optional(Nullable(Type.String())),
});
export type ErrorEvent = Static<typeof ErrorEvent>;

/**
 * Any messages-format stream event, discriminated on `type`.
 *
 * @example
 * ```ts
 * function textOf(ev: MessagesStreamEvent): string {
 *   return ev.type === "content_block_delta" && ev.delta.type === "text_delta" ? ev.delta.text : "";
 * }
 * ```
 */
export const MessagesStreamEvent = Type.Union(
  [
    MessageStartEvent,
    ContentBlockStartEvent,
    ContentBlockDeltaEvent,
    ContentBlockStopEvent,
    MessageDeltaEvent,
    MessageStopEvent,
    PingEvent,
    ErrorEvent,
  ],
  { discriminatorLabel: "event type" },
);
export type MessagesStreamEvent = Static<typeof MessagesStreamEvent>;

/**
 * Event names of the stream, one table (docs/style.md rule 10).
 *
 * @example
 * ```ts
 * if (MESSAGES_STREAM_EVENT_TYPES.includes(sse.event as MessagesStreamEvent["type"])) { ... }
 * ```
 */
export const MESSAGES_STREAM_EVENT_TYPES: readonly MessagesStreamEvent["type"][] = [
  "message_start",
  "content_block_start",
  "content_block_delta",
  "content_block_stop",
  "message_delta",
  "message_stop",
  "ping",
  "error",
];
