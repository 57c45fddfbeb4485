/**
 * The Open Responses specification's response object (its OpenAPI document, version 2026-04-24:
 * `ResponseResource`, the `ItemField` output items, `OutputTextContent`, `Usage`), written here as
 * TypeBox schemas in Turnpike's own words, for the tests to hold every Responses reply, stream
 * snapshot and WebSocket frame to (docs/protocols.md §5). What the specification requires is
 * required here; what it types loosely (`status` a string, `metadata` anything) is loose here too.
 *
 * One addition: the `custom_tool_call` item. It is not in the specification's core item set, but
 * the Responses API has it and the Responses-format coding agent's patch tool needs it
 * (wire-formats §5.2); it is checked with the same rigour as the core items.
 */
import { type TSchema, Type } from "@sinclair/typebox";

const OrNull = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const OneOf = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));

const ITEM_STATUS = OneOf(["in_progress", "completed", "incomplete"]);

/** `OutputTextContent`: text, its annotations and its log probabilities — all three required. */
export const SpecOutputText = Type.Object({
  type: Type.Literal("output_text"),
  text: Type.String(),
  annotations: Type.Array(Type.Object({ type: Type.String() })),
  logprobs: Type.Array(
    Type.Object({
      token: Type.String(),
      logprob: Type.Number(),
      top_logprobs: Type.Optional(Type.Array(Type.Unknown())),
    }),
  ),
});

const SpecRefusal = Type.Object({ type: Type.Literal("refusal"), refusal: Type.String() });
const SpecSummaryText = Type.Object({ type: Type.Literal("summary_text"), text: Type.String() });
const SpecReasoningText = Type.Object({ type: Type.Literal("reasoning_text"), text: Type.String() });

/** `Message`: an assistant's output message (other roles appear in input, not output). */
const SpecMessage = Type.Object({
  type: Type.Literal("message"),
  id: Type.String(),
  status: ITEM_STATUS,
  role: OneOf(["user", "assistant", "system", "developer"]),
  content: Type.Array(Type.Union([SpecOutputText, SpecRefusal])),
  phase: Type.Optional(OneOf(["commentary", "final_answer"])),
});

/** `FunctionCall`. */
const SpecFunctionCall = Type.Object({
  type: Type.Literal("function_call"),
  id: Type.String(),
  call_id: Type.String(),
  name: Type.String(),
  arguments: Type.String(),
  status: ITEM_STATUS,
});

/** `ReasoningBody`: `encrypted_content`, when present, is a string (never null). */
const SpecReasoning = Type.Object({
  type: Type.Literal("reasoning"),
  id: Type.String(),
  summary: Type.Array(SpecSummaryText),
  content: Type.Optional(Type.Array(SpecReasoningText)),
  encrypted_content: Type.Optional(Type.String()),
});

/** The Responses API's free-form tool call (see the note above). */
const CustomToolCall = Type.Object({
  type: Type.Literal("custom_tool_call"),
  id: Type.String(),
  call_id: Type.String(),
  name: Type.String(),
  input: Type.String(),
  status: ITEM_STATUS,
});

/** An output item (`ItemField`), discriminated by `type`. */
export const SpecOutputItem = Type.Union([SpecMessage, SpecFunctionCall, SpecReasoning, CustomToolCall]);

const SpecUsage = Type.Object({
  input_tokens: Type.Integer({ minimum: 0 }),
  output_tokens: Type.Integer({ minimum: 0 }),
  total_tokens: Type.Integer({ minimum: 0 }),
  input_tokens_details: Type.Object({ cached_tokens: Type.Integer({ minimum: 0 }) }),
  output_tokens_details: Type.Object({ reasoning_tokens: Type.Integer({ minimum: 0 }) }),
});

/** `TextField.format`: plain text, a JSON object, or a JSON schema with all its fields. */
const SpecTextFormat = Type.Union([
  Type.Object({ type: Type.Literal("text") }),
  Type.Object({ type: Type.Literal("json_object") }),
  Type.Object({
    type: Type.Literal("json_schema"),
    name: Type.String(),
    description: OrNull(Type.String()),
    schema: Type.Unknown(),
    strict: Type.Boolean(),
  }),
]);

/** `tool_choice`: a mode, or an object naming a tool or the allowed tools. */
const SpecToolChoice = Type.Union([OneOf(["none", "auto", "required"]), Type.Object({ type: Type.String() })]);

/** `ResponseResource`: every field the specification lists as required. */
export const SpecResponse = Type.Object({
  id: Type.String(),
  object: Type.Literal("response"),
  created_at: Type.Integer(),
  completed_at: OrNull(Type.Integer()),
  status: Type.String(),
  incomplete_details: OrNull(Type.Object({ reason: Type.String() })),
  model: Type.String(),
  previous_response_id: OrNull(Type.String()),
  instructions: OrNull(Type.Union([Type.String(), Type.Array(Type.Unknown())])),
  output: Type.Array(SpecOutputItem),
  error: OrNull(Type.Object({ code: Type.String(), message: Type.String() })),
  tools: Type.Array(Type.Object({ type: Type.String() })),
  tool_choice: SpecToolChoice,
  truncation: OneOf(["auto", "disabled"]),
  parallel_tool_calls: Type.Boolean(),
  text: Type.Object({ format: SpecTextFormat, verbosity: Type.Optional(OneOf(["low", "medium", "high"])) }),
  top_p: Type.Number(),
  presence_penalty: Type.Number(),
  frequency_penalty: Type.Number(),
  top_logprobs: Type.Integer(),
  temperature: Type.Number(),
  reasoning: OrNull(
    Type.Object({
      effort: OrNull(OneOf(["none", "low", "medium", "high", "xhigh"])),
      summary: OrNull(OneOf(["concise", "detailed", "auto"])),
    }),
  ),
  user: OrNull(Type.String()),
  usage: OrNull(SpecUsage),
  max_output_tokens: OrNull(Type.Integer()),
  max_tool_calls: OrNull(Type.Integer()),
  store: Type.Boolean(),
  background: Type.Boolean(),
  service_tier: Type.String(),
  metadata: Type.Unknown(),
  safety_identifier: OrNull(Type.String()),
  prompt_cache_key: OrNull(Type.String()),
});
