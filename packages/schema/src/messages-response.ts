/** The messages-format reply (docs/protocols.md §1.4–1.6). */
import { Type, type Static } from "@sinclair/typebox";
import { ContentBlock } from "./content-block.js";
import { Nullable } from "./nullable.js";

/**
 * Why generation stopped (docs/protocols.md §1.5). Null in `message_start`, set afterwards.
 *
 * @example
 * ```ts
 * const r: StopReason = "tool_use";
 * ```
 */
export const StopReason = Type.Union([
  Type.Literal("end_turn"),
  Type.Literal("max_tokens"),
  Type.Literal("stop_sequence"),
  Type.Literal("tool_use"),
  Type.Literal("pause_turn"),
  Type.Literal("refusal"),
  Type.Literal("model_context_window_exceeded"),
]);
export type StopReason = Static<typeof StopReason>;

/** `stop_details` (newer): why a refusal happened. */
export const StopDetails = Type.Object(
  {
    type: Type.String(),
    category: Type.Optional(Nullable(Type.String())),
    explanation: Type.Optional(Nullable(Type.String())),
  },
  { additionalProperties: true },
);
export type StopDetails = Static<typeof StopDetails>;

/** `usage.cache_creation`: cache writes split by TTL. */
export const CacheCreation = Type.Object({
  ephemeral_5m_input_tokens: Type.Integer({ minimum: 0 }),
  ephemeral_1h_input_tokens: Type.Integer({ minimum: 0 }),
});
export type CacheCreation = Static<typeof CacheCreation>;

/** `usage.server_tool_use`: server-tool request counts. */
export const ServerToolUsage = Type.Object(
  {
    web_search_requests: Type.Optional(Type.Integer({ minimum: 0 })),
    web_fetch_requests: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: true },
);
export type ServerToolUsage = Static<typeof ServerToolUsage>;

const count = Type.Integer({ minimum: 0 });
const optionalCount = Type.Optional(Nullable(count));

/**
 * Token usage (docs/protocols.md §1.6). `input_tokens` is the *uncached* input only: total input =
 * `input_tokens + cache_creation_input_tokens + cache_read_input_tokens`. `output_tokens`
 * includes thinking. Every field but the two counts is optional (newer or vendor-dependent).
 *
 * @example
 * ```ts
 * const u: MessagesUsage = { input_tokens: 12, output_tokens: 29, cache_read_input_tokens: 0 };
 * const totalInput = u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
 * ```
 */
export const MessagesUsage = Type.Object({
  input_tokens: count,
  output_tokens: count,
  cache_creation_input_tokens: optionalCount,
  cache_read_input_tokens: optionalCount,
  cache_creation: Type.Optional(Nullable(CacheCreation)),
  service_tier: Type.Optional(Nullable(Type.String())),
  server_tool_use: Type.Optional(Nullable(ServerToolUsage)),
  inference_geo: Type.Optional(Nullable(Type.String())),
  output_tokens_details: Type.Optional(
    Nullable(Type.Object({ thinking_tokens: Type.Optional(count) }, { additionalProperties: true })),
  ),
});
export type MessagesUsage = Static<typeof MessagesUsage>;

/**
 * The reply of `POST /v1/messages` (non-streaming), and the `message` of `message_start`.
 *
 * @example
 * ```ts
 * const res: MessagesResponse = {
 *   id: "msg_01", type: "message", role: "assistant", model: "alpha-sonnet-4-6",
 *   content: [{ type: "text", text: "Hello!" }],
 *   stop_reason: "end_turn", stop_sequence: null,
 *   usage: { input_tokens: 10, output_tokens: 5 },
 * };
 * ```
 */
export const MessagesResponse = Type.Object({
  id: Type.String(),
  type: Type.Literal("message"),
  role: Type.Literal("assistant"),
  model: Type.String(),
  content: Type.Array(ContentBlock),
  stop_reason: Nullable(StopReason),
  stop_sequence: Type.Optional(Nullable(Type.String())),
  stop_details: Type.Optional(Nullable(StopDetails)),
  container: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
  usage: MessagesUsage,
});
export type MessagesResponse = Static<typeof MessagesResponse>;
