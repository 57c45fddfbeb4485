/**
 * The Responses format's reply: the response object (a JSON reply, and the body of the
 * `response.*` lifecycle events of a stream), its output items, and the stream's events
 * (docs/protocols.md §5).
 */
import { Type, type Static } from "@sinclair/typebox";
import { Nullable } from "./nullable.js";

export const ResponsesOutputText = Type.Object({
  type: Type.Literal("output_text"),
  text: Type.String(),
  annotations: Type.Array(Type.Unknown()),
  /** The sampled tokens' log probabilities: empty unless the upstream returned them. */
  logprobs: Type.Array(Type.Unknown()),
});
export type ResponsesOutputText = Static<typeof ResponsesOutputText>;

export const ResponsesOutputMessage = Type.Object({
  type: Type.Literal("message"),
  id: Type.String(),
  status: Type.Union([Type.Literal("in_progress"), Type.Literal("completed"), Type.Literal("incomplete")]),
  role: Type.Literal("assistant"),
  content: Type.Array(ResponsesOutputText),
});
export type ResponsesOutputMessage = Static<typeof ResponsesOutputMessage>;

export const ResponsesOutputFunctionCall = Type.Object({
  type: Type.Literal("function_call"),
  id: Type.String(),
  call_id: Type.String(),
  name: Type.String(),
  /** The namespace tool the function belongs to (only when it belongs to one). */
  namespace: Type.Optional(Type.String()),
  arguments: Type.String(),
  status: Type.Union([Type.Literal("in_progress"), Type.Literal("completed"), Type.Literal("incomplete")]),
});
export type ResponsesOutputFunctionCall = Static<typeof ResponsesOutputFunctionCall>;

export const ResponsesSummaryText = Type.Object({ type: Type.Literal("summary_text"), text: Type.String() });
export type ResponsesSummaryText = Static<typeof ResponsesSummaryText>;

export const ResponsesOutputReasoning = Type.Object({
  type: Type.Literal("reasoning"),
  id: Type.String(),
  summary: Type.Array(ResponsesSummaryText),
  encrypted_content: Type.Optional(Nullable(Type.String())),
});
export type ResponsesOutputReasoning = Static<typeof ResponsesOutputReasoning>;

/** A call to a custom (free-form) tool: `input` is the plain text the model wrote for it. */
export const ResponsesOutputCustomToolCall = Type.Object({
  type: Type.Literal("custom_tool_call"),
  id: Type.String(),
  call_id: Type.String(),
  name: Type.String(),
  input: Type.String(),
  status: Type.Union([Type.Literal("in_progress"), Type.Literal("completed"), Type.Literal("incomplete")]),
});
export type ResponsesOutputCustomToolCall = Static<typeof ResponsesOutputCustomToolCall>;

export const ResponsesOutputItem = Type.Union([
  ResponsesOutputMessage,
  ResponsesOutputFunctionCall,
  ResponsesOutputReasoning,
  ResponsesOutputCustomToolCall,
]);
export type ResponsesOutputItem = Static<typeof ResponsesOutputItem>;

export const ResponsesUsage = Type.Object({
  input_tokens: Type.Integer(),
  input_tokens_details: Type.Object({ cached_tokens: Type.Integer() }),
  output_tokens: Type.Integer(),
  output_tokens_details: Type.Object({ reasoning_tokens: Type.Integer() }),
  total_tokens: Type.Integer(),
});
export type ResponsesUsage = Static<typeof ResponsesUsage>;

export const ResponsesStatus = Type.Union([
  Type.Literal("completed"),
  Type.Literal("incomplete"),
  Type.Literal("failed"),
  Type.Literal("in_progress"),
]);
export type ResponsesStatus = Static<typeof ResponsesStatus>;

/**
 * The response object: every field the Open Responses specification requires of it
 * (docs/protocols.md §5), the request's settings repeated as the request gave them (defaults
 * where it gave none).
 */
export const ResponsesResponse = Type.Object({
  id: Type.String(),
  object: Type.Literal("response"),
  created_at: Type.Integer(),
  /** Unix seconds at which the response completed; null until then, and for a failed or incomplete one. */
  completed_at: Nullable(Type.Integer()),
  status: ResponsesStatus,
  error: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
  incomplete_details: Nullable(
    Type.Object({ reason: Type.Union([Type.Literal("max_output_tokens"), Type.Literal("content_filter")]) }),
  ),
  instructions: Nullable(Type.String()),
  max_output_tokens: Nullable(Type.Integer()),
  model: Type.String(),
  previous_response_id: Nullable(Type.String()),
  output: Type.Array(ResponsesOutputItem),
  parallel_tool_calls: Type.Boolean(),
  temperature: Type.Number(),
  top_p: Type.Number(),
  presence_penalty: Type.Number(),
  frequency_penalty: Type.Number(),
  top_logprobs: Type.Integer(),
  tool_choice: Type.Unknown(),
  tools: Type.Array(Type.Unknown()),
  max_tool_calls: Nullable(Type.Integer()),
  truncation: Type.String(),
  text: Type.Object({ format: Type.Unknown() }),
  reasoning: Type.Object({ effort: Nullable(Type.String()), summary: Nullable(Type.String()) }),
  store: Type.Boolean(),
  background: Type.Boolean(),
  /** The tier the call was served at (`default` unless one was asked and the upstream has it). */
  service_tier: Type.String(),
  metadata: Type.Record(Type.String(), Type.String()),
  user: Nullable(Type.String()),
  safety_identifier: Nullable(Type.String()),
  prompt_cache_key: Nullable(Type.String()),
  usage: Nullable(ResponsesUsage),
});
export type ResponsesResponse = Static<typeof ResponsesResponse>;

/** The event names of a Responses stream that Turnpike writes (each frame's `event:` equals its `type`). */
export const RESPONSES_STREAM_EVENT_TYPES = [
  "response.created",
  "response.in_progress",
  "response.output_item.added",
  "response.content_part.added",
  "response.output_text.delta",
  "response.output_text.done",
  "response.content_part.done",
  "response.function_call_arguments.delta",
  "response.function_call_arguments.done",
  "response.custom_tool_call_input.delta",
  "response.custom_tool_call_input.done",
  "response.reasoning_summary_part.added",
  "response.reasoning_summary_text.delta",
  "response.reasoning_summary_text.done",
  "response.reasoning_summary_part.done",
  "response.output_item.done",
  "response.completed",
  "response.incomplete",
  "response.failed",
  "error",
] as const;
export type ResponsesStreamEventType = (typeof RESPONSES_STREAM_EVENT_TYPES)[number];

/** The lifecycle events that end a stream (`error` is followed by `response.failed`). */
export const RESPONSES_TERMINAL_EVENTS: readonly ResponsesStreamEventType[] = [
  "response.completed",
  "response.incomplete",
  "response.failed",
];
