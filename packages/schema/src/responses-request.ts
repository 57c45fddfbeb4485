/**
 * The Responses format's request body (`POST /v1/responses`, docs/protocols.md §5): a model, an
 * `input` (a string, or a list of items: messages, function calls and their outputs, reasoning),
 * `instructions`, tools and the usual knobs. Items are checked for the fields Turnpike reads; the
 * rest of each item is left to the converter, which names what it cannot carry.
 */
import { Type, type Static } from "@sinclair/typebox";
import { Nullable } from "./nullable.js";
import { OpenEnum, OtherTyped } from "./open.js";

/** The content part types Turnpike knows; any other is open (see `OtherTyped`). */
export const RESPONSES_PART_TYPES = ["input_text", "input_image", "input_file", "output_text", "refusal"] as const;

/** A content part of an input message. */
export const ResponsesInputPart = Type.Union(
  [
    Type.Object({ type: Type.Literal("input_text"), text: Type.String() }),
    Type.Object({
      type: Type.Literal("input_image"),
      image_url: Type.Optional(Nullable(Type.String())),
      file_id: Type.Optional(Nullable(Type.String())),
      detail: Type.Optional(Type.String()),
    }),
    Type.Object({
      type: Type.Literal("input_file"),
      file_data: Type.Optional(Type.String()),
      file_id: Type.Optional(Nullable(Type.String())),
      file_url: Type.Optional(Type.String()),
      filename: Type.Optional(Type.String()),
    }),
    Type.Object({ type: Type.Literal("output_text"), text: Type.String() }),
    Type.Object({ type: Type.Literal("refusal"), refusal: Type.String() }),
    OtherTyped(RESPONSES_PART_TYPES),
  ],
  { expected: "a part of type input_text, input_image, input_file, output_text or refusal" },
);
export type ResponsesInputPart = Static<typeof ResponsesInputPart>;

/** A message item: `{role, content}`, with or without `type: "message"`. */
export const ResponsesMessageItem = Type.Object({
  type: Type.Optional(Type.Literal("message")),
  role: Type.Union(
    [Type.Literal("user"), Type.Literal("assistant"), Type.Literal("system"), Type.Literal("developer")],
    {
      expected: 'one of "user", "assistant", "system", "developer"',
    },
  ),
  content: Type.Union([Type.String(), Type.Array(ResponsesInputPart)], {
    expected: "a string or a list of content parts",
  }),
  id: Type.Optional(Type.String()),
  status: Type.Optional(Type.String()),
});
export type ResponsesMessageItem = Static<typeof ResponsesMessageItem>;

/** A function call the model made earlier (replayed history). */
export const ResponsesFunctionCallItem = Type.Object({
  type: Type.Literal("function_call"),
  call_id: Type.String({ minLength: 1 }),
  name: Type.String({ minLength: 1 }),
  /** The namespace tool the function belongs to, if any. */
  namespace: Type.Optional(Type.String()),
  arguments: Type.String(),
  id: Type.Optional(Type.String()),
  status: Type.Optional(Type.String()),
});
export type ResponsesFunctionCallItem = Static<typeof ResponsesFunctionCallItem>;

/** The result of a function call, for the call with the same `call_id`. */
export const ResponsesFunctionCallOutputItem = Type.Object({
  type: Type.Literal("function_call_output"),
  call_id: Type.String({ minLength: 1 }),
  output: Type.Union([Type.String(), Type.Array(ResponsesInputPart)], {
    expected: "a string or a list of content parts",
  }),
  id: Type.Optional(Type.String()),
  status: Type.Optional(Type.String()),
});
export type ResponsesFunctionCallOutputItem = Static<typeof ResponsesFunctionCallOutputItem>;

/** A reasoning item of an earlier reply (its summary, and the vendor's encrypted content). */
export const ResponsesReasoningItem = Type.Object({
  type: Type.Literal("reasoning"),
  id: Type.Optional(Type.String()),
  summary: Type.Optional(Type.Array(Type.Object({ type: Type.String(), text: Type.String() }))),
  encrypted_content: Type.Optional(Nullable(Type.String())),
});
export type ResponsesReasoningItem = Static<typeof ResponsesReasoningItem>;

/** A call the model made earlier to a custom (free-form) tool: its input is plain text, not JSON. */
export const ResponsesCustomToolCallItem = Type.Object({
  type: Type.Literal("custom_tool_call"),
  call_id: Type.String({ minLength: 1 }),
  name: Type.String({ minLength: 1 }),
  input: Type.String(),
  id: Type.Optional(Type.String()),
  status: Type.Optional(Type.String()),
});
export type ResponsesCustomToolCallItem = Static<typeof ResponsesCustomToolCallItem>;

/** The result of a custom tool call, for the call with the same `call_id`. */
export const ResponsesCustomToolCallOutputItem = Type.Object({
  type: Type.Literal("custom_tool_call_output"),
  call_id: Type.String({ minLength: 1 }),
  output: Type.Union([Type.String(), Type.Array(ResponsesInputPart)], {
    expected: "a string or a list of content parts",
  }),
  id: Type.Optional(Type.String()),
});
export type ResponsesCustomToolCallOutputItem = Static<typeof ResponsesCustomToolCallOutputItem>;

/** Any item of `input`. */
export const ResponsesInputItem = Type.Union(
  [
    ResponsesMessageItem,
    ResponsesFunctionCallItem,
    ResponsesFunctionCallOutputItem,
    ResponsesReasoningItem,
    ResponsesCustomToolCallItem,
    ResponsesCustomToolCallOutputItem,
  ],
  {
    expected:
      "a message ({role, content}), function_call, function_call_output, custom_tool_call, custom_tool_call_output or reasoning item",
  },
);
export type ResponsesInputItem = Static<typeof ResponsesInputItem>;

/** A function tool: `{type: "function", name, description?, parameters?, strict?}`. */
export const ResponsesFunctionTool = Type.Object({
  type: Type.Literal("function"),
  name: Type.String({ pattern: "^[a-zA-Z0-9_-]{1,64}$", rule: "must be 1 to 64 characters of a-z, A-Z, 0-9, _ or -" }),
  description: Type.Optional(Nullable(Type.String())),
  parameters: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
  strict: Type.Optional(Nullable(Type.Boolean())),
});
export type ResponsesFunctionTool = Static<typeof ResponsesFunctionTool>;

/** An entry of `tools`: a function tool, or another type the converter decides about. */
export const ResponsesTool = Type.Object({ type: Type.String({ minLength: 1 }) });
export type ResponsesTool = Static<typeof ResponsesTool>;

export const ResponsesToolChoice = Type.Union(
  [
    Type.Literal("auto"),
    Type.Literal("none"),
    Type.Literal("required"),
    Type.Object({ type: Type.Literal("function"), name: Type.String({ minLength: 1 }) }),
    Type.Object({ type: Type.Literal("custom"), name: Type.String({ minLength: 1 }) }),
  ],
  { expected: '"auto", "none", "required" or {"type": "function" | "custom", "name": …}' },
);
export type ResponsesToolChoice = Static<typeof ResponsesToolChoice>;

/** `text.format`: plain text, any JSON object, or JSON matching a schema. */
export const ResponsesTextFormat = Type.Union(
  [
    Type.Object({ type: Type.Literal("text") }),
    Type.Object({ type: Type.Literal("json_object") }),
    Type.Object({
      type: Type.Literal("json_schema"),
      name: Type.String({ minLength: 1 }),
      schema: Type.Record(Type.String(), Type.Unknown()),
      description: Type.Optional(Type.String()),
      strict: Type.Optional(Nullable(Type.Boolean())),
    }),
  ],
  { expected: "a format of type text, json_object or json_schema" },
);
export type ResponsesTextFormat = Static<typeof ResponsesTextFormat>;

/** `service_tier` (open: a newer tier passes through). */
export const ResponsesServiceTier = OpenEnum(["auto", "default", "flex", "scale", "priority"]);

export const ResponsesReasoningEffort = OpenEnum(["none", "minimal", "low", "medium", "high", "xhigh"]);

/** The request body. Unknown top-level fields are allowed (and named in a warning). */
export const ResponsesRequest = Type.Object({
  model: Type.String({ minLength: 1 }),
  input: Type.Union([Type.String(), Type.Array(ResponsesInputItem)], { expected: "a string or a list of input items" }),
  instructions: Type.Optional(Nullable(Type.String())),
  tools: Type.Optional(Type.Array(ResponsesTool)),
  tool_choice: Type.Optional(ResponsesToolChoice),
  parallel_tool_calls: Type.Optional(Nullable(Type.Boolean())),
  max_output_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
  top_p: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
  presence_penalty: Type.Optional(Nullable(Type.Number({ minimum: -2, maximum: 2 }))),
  frequency_penalty: Type.Optional(Nullable(Type.Number({ minimum: -2, maximum: 2 }))),
  top_logprobs: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 20 }))),
  max_tool_calls: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  background: Type.Optional(Nullable(Type.Boolean())),
  /** `service_tier` (open: a newer tier passes through): as the chat format's. */
  service_tier: Type.Optional(Nullable(ResponsesServiceTier)),
  text: Type.Optional(
    Nullable(Type.Object({ format: Type.Optional(ResponsesTextFormat), verbosity: Type.Optional(Type.String()) })),
  ),
  reasoning: Type.Optional(
    Nullable(
      Type.Object({
        effort: Type.Optional(Nullable(ResponsesReasoningEffort)),
        summary: Type.Optional(Nullable(Type.String())),
      }),
    ),
  ),
  metadata: Type.Optional(Nullable(Type.Record(Type.String(), Type.String()))),
  user: Type.Optional(Type.String()),
  safety_identifier: Type.Optional(Type.String()),
  prompt_cache_key: Type.Optional(Type.String()),
  include: Type.Optional(Nullable(Type.Array(Type.String()))),
  truncation: Type.Optional(Nullable(Type.String())),
  store: Type.Optional(Nullable(Type.Boolean())),
  previous_response_id: Type.Optional(Nullable(Type.String())),
  stream: Type.Optional(Nullable(Type.Boolean())),
});
export type ResponsesRequest = Static<typeof ResponsesRequest>;
