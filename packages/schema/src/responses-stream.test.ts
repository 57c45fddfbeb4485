/** The Responses stream-event schemas accept the events the gateway writes and reject broken ones. */
import { describe, expect, test } from "bun:test";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import {
  RESPONSES_STREAM_EVENT_TYPES,
  ResponsesDeleted,
  ResponsesInputItemList,
  ResponsesStreamEvent,
  type ResponsesResponse,
} from "./index.js";

const check = TypeCompiler.Compile(ResponsesStreamEvent);

const response: ResponsesResponse = {
  id: "resp_1",
  object: "response",
  created_at: 1_700_000_000,
  completed_at: null,
  status: "in_progress",
  error: null,
  incomplete_details: null,
  instructions: null,
  max_output_tokens: null,
  model: "beta-5",
  previous_response_id: null,
  output: [],
  parallel_tool_calls: true,
  temperature: 1,
  top_p: 1,
  presence_penalty: 0,
  frequency_penalty: 0,
  top_logprobs: 0,
  tool_choice: "auto",
  tools: [],
  max_tool_calls: null,
  truncation: "disabled",
  text: { format: { type: "text" } },
  reasoning: { effort: null, summary: null },
  store: true,
  background: false,
  service_tier: "default",
  metadata: {},
  user: null,
  safety_identifier: null,
  prompt_cache_key: null,
  usage: null,
};
const at = { item_id: "msg_1", output_index: 0 };
const part = { type: "output_text", text: "", annotations: [], logprobs: [] };
const summary = { type: "summary_text", text: "" };

/** One event of every name, shaped as the gateway's encoder writes it. */
const SAMPLES: Record<(typeof RESPONSES_STREAM_EVENT_TYPES)[number], Record<string, unknown>> = {
  "response.created": { response },
  "response.in_progress": { response },
  "response.output_item.added": {
    output_index: 0,
    item: { type: "message", id: "msg_1", status: "in_progress", role: "assistant", content: [] },
  },
  "response.content_part.added": { ...at, content_index: 0, part },
  "response.output_text.delta": { ...at, content_index: 0, delta: "Hi", logprobs: [] },
  "response.output_text.done": { ...at, content_index: 0, text: "Hi", logprobs: [] },
  "response.content_part.done": { ...at, content_index: 0, part: { ...part, text: "Hi" } },
  "response.function_call_arguments.delta": { item_id: "fc_1", output_index: 1, delta: '{"a"' },
  "response.function_call_arguments.done": { item_id: "fc_1", output_index: 1, arguments: '{"a":1}' },
  "response.custom_tool_call_input.delta": { item_id: "ctc_1", output_index: 1, delta: "*** Begin" },
  "response.custom_tool_call_input.done": { item_id: "ctc_1", output_index: 1, input: "*** Begin Patch" },
  "response.reasoning_summary_part.added": { item_id: "rs_1", output_index: 0, summary_index: 0, part: summary },
  "response.reasoning_summary_text.delta": { item_id: "rs_1", output_index: 0, summary_index: 0, delta: "Hm" },
  "response.reasoning_summary_text.done": { item_id: "rs_1", output_index: 0, summary_index: 0, text: "Hm" },
  "response.reasoning_summary_part.done": {
    item_id: "rs_1",
    output_index: 0,
    summary_index: 0,
    part: { ...summary, text: "Hm" },
  },
  "response.output_item.done": {
    output_index: 1,
    item: { type: "function_call", id: "fc_1", call_id: "c1", name: "f", arguments: '{"a":1}', status: "completed" },
  },
  "response.completed": { response: { ...response, status: "completed" } },
  "response.incomplete": {
    response: { ...response, status: "incomplete", incomplete_details: { reason: "max_output_tokens" } },
  },
  "response.failed": {
    response: { ...response, status: "failed", error: { code: "overloaded_error", message: "Overloaded" } },
  },
  error: { code: "overloaded_error", message: "Overloaded", param: null },
};

describe("ResponsesStreamEvent", () => {
  test("accepts one event of every name the gateway writes", () => {
    RESPONSES_STREAM_EVENT_TYPES.forEach((type, sequence_number) => {
      const event = { type, ...SAMPLES[type], sequence_number };
      expect({ type, ok: check.Check(event) }).toEqual({ type, ok: true });
    });
  });

  test("rejects an event without its sequence number, with a negative one, or with a field of the wrong type", () => {
    expect(check.Check({ type: "response.output_text.delta", ...SAMPLES["response.output_text.delta"] })).toBe(false);
    expect(
      check.Check({
        type: "response.output_text.delta",
        ...SAMPLES["response.output_text.delta"],
        sequence_number: -1,
      }),
    ).toBe(false);
    expect(
      check.Check({
        type: "response.output_text.delta",
        ...SAMPLES["response.output_text.delta"],
        delta: 5,
        sequence_number: 3,
      }),
    ).toBe(false);
    expect(check.Check({ type: "response.unknown", sequence_number: 0 })).toBe(false);
  });
});

describe("replies of the stored-response routes", () => {
  test("a deletion and a list of input items with ids", () => {
    expect(TypeCompiler.Compile(ResponsesDeleted).Check({ id: "resp_1", object: "response", deleted: true })).toBe(
      true,
    );
    const list = TypeCompiler.Compile(ResponsesInputItemList);
    const data = [{ id: "item_0000", type: "message", role: "user", content: "Hi" }];
    expect(list.Check({ object: "list", data, first_id: "item_0000", last_id: "item_0000", has_more: false })).toBe(
      true,
    );
    expect(
      list.Check({
        object: "list",
        data: [{ type: "message", role: "user", content: "Hi" }],
        first_id: null,
        last_id: null,
        has_more: false,
      }),
    ).toBe(false);
  });
});
