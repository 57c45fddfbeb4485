/** `POST /v1/messages/count_tokens` (docs/protocols.md §1.10). */
import { Type, type Static } from "@sinclair/typebox";
import { CacheControl } from "./cache-control.js";
import {
  MessageParam,
  OutputConfig,
  SystemPrompt,
  ThinkingConfig,
  ToolChoice,
  ToolDefinition,
} from "./messages-request.js";
import { Nullable } from "./nullable.js";

/**
 * The count_tokens body: a messages request without `max_tokens` and sampling fields.
 *
 * @example
 * ```ts
 * const req: CountTokensRequest = { model: "alpha-sonnet-4-6", messages: [{ role: "user", content: "Hello" }] };
 * ```
 */
export const CountTokensRequest = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    messages: Type.Array(MessageParam, { minItems: 1, maxItems: 100_000 }),
    system: Type.Optional(SystemPrompt),
    tools: Type.Optional(Type.Array(ToolDefinition)),
    tool_choice: Type.Optional(ToolChoice),
    thinking: Type.Optional(ThinkingConfig),
    output_config: Type.Optional(OutputConfig),
    cache_control: Type.Optional(Nullable(CacheControl)),
  },
  { additionalProperties: true },
);
export type CountTokensRequest = Static<typeof CountTokensRequest>;

/**
 * `{input_tokens}`: the total across system, messages and tools.
 *
 * @example
 * ```ts
 * const res: CountTokensResponse = { input_tokens: 2095 };
 * ```
 */
export const CountTokensResponse = Type.Object({ input_tokens: Type.Integer({ minimum: 0 }) });
export type CountTokensResponse = Static<typeof CountTokensResponse>;
