import { Type, type Static } from "@sinclair/typebox";
import { ChatResponseFormat, ChatStreamOptions, LogitBias, ReasoningEffort } from "./chat-params.js";
import { Nullable } from "./nullable.js";

/**
 * Chat-only parameters carried across the messages-format pivot (docs/design.md ("One request")).
 * Each field has exactly the type of the {@link ChatRequest} field of the same name, so a
 * chat → messages converter copies them as they are and a messages → chat converter copies
 * them back.
 *
 * @example
 * ```ts
 * const chat: TurnpikeChatParams = { seed: 7, response_format: { type: "json_object" }, n: 1 };
 * ```
 */
export const TurnpikeChatParams = Type.Object({
  seed: Type.Optional(Nullable(Type.Integer())),
  response_format: Type.Optional(ChatResponseFormat),
  frequency_penalty: Type.Optional(Nullable(Type.Number({ minimum: -2, maximum: 2 }))),
  presence_penalty: Type.Optional(Nullable(Type.Number({ minimum: -2, maximum: 2 }))),
  logit_bias: Type.Optional(Nullable(LogitBias)),
  logprobs: Type.Optional(Nullable(Type.Boolean())),
  top_logprobs: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 20 }))),
  n: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  user: Type.Optional(Type.String()),
  parallel_tool_calls: Type.Optional(Type.Boolean()),
  reasoning_effort: Type.Optional(Nullable(ReasoningEffort)),
  stream_options: Type.Optional(Nullable(ChatStreamOptions)),
});
export type TurnpikeChatParams = Static<typeof TurnpikeChatParams>;

/**
 * The gateway-only `turnpike` field of the pivot messages request. **Internal**: it is set by
 * the gateway's chat → messages converter and stripped before any upstream sees a
 * messages-format body. It is not part of either public wire format.
 *
 * @example
 * ```ts
 * const ext: TurnpikeExtension = { chat: { seed: 7, user: "user-42" } };
 * ```
 */
export const TurnpikeExtension = Type.Object({
  chat: Type.Optional(TurnpikeChatParams),
});
export type TurnpikeExtension = Static<typeof TurnpikeExtension>;
