/**
 * The Open Responses schema the Responses tests hold every reply to (support/open-responses-schema.ts)
 * is itself right: a response written as the specification's example is valid, and each thing the
 * specification requires, when missing or mistyped, is caught.
 */
import { describe, expect, test } from "bun:test";
import { responseProblems } from "./support/open-responses";

/** A completed response with every field the specification requires, as its reference example has them. */
const whole = () => ({
  id: "resp_1",
  object: "response",
  created_at: 1_800_000_000,
  completed_at: 1_800_000_001,
  status: "completed",
  incomplete_details: null,
  model: "beta-5",
  previous_response_id: null,
  instructions: null,
  output: [
    {
      type: "message",
      id: "msg_1",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "Hi.", annotations: [], logprobs: [] }],
    },
    { type: "function_call", id: "fc_1", call_id: "call_1", name: "f", arguments: "{}", status: "completed" },
    { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "thought" }] },
  ],
  error: null,
  tools: [],
  tool_choice: "auto",
  truncation: "disabled",
  parallel_tool_calls: true,
  text: { format: { type: "text" } },
  top_p: 1,
  presence_penalty: 0,
  frequency_penalty: 0,
  top_logprobs: 0,
  temperature: 1,
  reasoning: { effort: null, summary: null },
  user: null,
  usage: {
    input_tokens: 3,
    output_tokens: 2,
    total_tokens: 5,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: 0 },
  },
  max_output_tokens: null,
  max_tool_calls: null,
  store: true,
  background: false,
  service_tier: "default",
  metadata: {},
  safety_identifier: null,
  prompt_cache_key: null,
});

describe("the Open Responses schema of the tests", () => {
  test("the specification's whole object is valid", () => {
    expect(responseProblems(whole())).toEqual([]);
  });

  test("each required field, missing, is named", () => {
    for (const field of Object.keys(whole())) {
      const r: Record<string, unknown> = whole();
      delete r[field];
      expect(responseProblems(r).some((p) => p.includes(`/${field} `))).toBe(true);
    }
  });

  test("what the specification types strictly is checked: numbers never null, enums, output_text's logprobs", () => {
    const cases: [string, (r: ReturnType<typeof whole>) => void][] = [
      ["/temperature", (r) => Object.assign(r, { temperature: null })],
      ["/top_p", (r) => Object.assign(r, { top_p: null })],
      ["/truncation", (r) => Object.assign(r, { truncation: "sometimes" })],
      ["/background", (r) => Object.assign(r, { background: null })],
      ["/output/0", (r) => delete (r.output[0] as { content: Record<string, unknown>[] }).content[0]!.logprobs],
      ["/output/2", (r) => Object.assign(r.output[2]!, { encrypted_content: null })],
      ["/reasoning", (r) => Object.assign(r, { reasoning: { effort: "minimal", summary: null } })],
    ];
    for (const [path, spoil] of cases) {
      const r = whole();
      spoil(r);
      expect(`${path}: ${responseProblems(r).some((p) => p.includes(path))}`).toBe(`${path}: true`);
    }
  });

  test("completed_at is set exactly when the response completed", () => {
    expect(responseProblems({ ...whole(), completed_at: null })).toContain(
      "response: status completed with completed_at null",
    );
    expect(responseProblems({ ...whole(), status: "in_progress" })).toContain(
      "response: status in_progress with completed_at 1800000001",
    );
    expect(responseProblems({ ...whole(), status: "in_progress", completed_at: null, usage: null })).toEqual([]);
  });
});
