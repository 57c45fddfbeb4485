/**
 * Pivot event sequences for the Responses stream encoder's byte-for-byte test
 * (messages-events-to-responses-events.test.ts): every event kind it writes, and text that JSON
 * must escape. Their expected streams are in `__fixtures__/responses-stream-<name>.sse`, as the
 * encoder wrote them when each event was one `JSON.stringify` of its whole object (item ids
 * replaced by `<id>`).
 */
import type { MessagesStreamEvent, ResponsesRequest } from "@turnpike/schema";
import type { ResponsesReplyContext } from "./convert-messages-response-to-responses.js";

const start = (input: number): MessagesStreamEvent => ({
  type: "message_start",
  message: {
    id: "msg_up",
    type: "message",
    role: "assistant",
    model: "up",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: input, output_tokens: 1, cache_read_input_tokens: 3 },
  },
});
const text = (index: number): MessagesStreamEvent => ({
  type: "content_block_start",
  index,
  content_block: { type: "text", text: "" },
});
const say = (index: number, t: string): MessagesStreamEvent => ({
  type: "content_block_delta",
  index,
  delta: { type: "text_delta", text: t },
});
const tool = (index: number, id: string, name: string): MessagesStreamEvent => ({
  type: "content_block_start",
  index,
  content_block: { type: "tool_use", id, name, input: {} },
});
const args = (index: number, json: string): MessagesStreamEvent => ({
  type: "content_block_delta",
  index,
  delta: { type: "input_json_delta", partial_json: json },
});
const think = (index: number): MessagesStreamEvent => ({
  type: "content_block_start",
  index,
  content_block: { type: "thinking", thinking: "", signature: "" },
});
const thought = (index: number, t: string): MessagesStreamEvent => ({
  type: "content_block_delta",
  index,
  delta: { type: "thinking_delta", thinking: t },
});
const stop = (index: number): MessagesStreamEvent => ({ type: "content_block_stop", index });
const finish = (reason: "end_turn" | "tool_use" | "max_tokens" | "refusal", output: number): MessagesStreamEvent => ({
  type: "message_delta",
  delta: { stop_reason: reason, stop_sequence: null },
  usage: { output_tokens: output },
});
const END: MessagesStreamEvent = { type: "message_stop" };

/** Text JSON must escape: quotes, backslashes, line ends, control characters, U+2028, a lone surrogate, astral characters. */
const HARD = [
  "Hel",
  'lo "wor',
  'ld"\n\\',
  "\r\t\u0001\u001f",
  "ü€😀",
  "\u2028\u2029",
  "\ud800 lone",
  "</script>",
  " ",
  "",
];

const plain: ResponsesRequest = { model: "beta-5", input: "hi", store: false };
const full = {
  model: "beta-5",
  input: [{ role: "user", content: "Do it" }],
  instructions: 'Be "brief"\nplease',
  max_output_tokens: 64,
  temperature: 0.5,
  top_p: 0.9,
  parallel_tool_calls: false,
  tool_choice: "required",
  tools: [
    { type: "function", name: "get_time", description: "Time ⏰", parameters: { type: "object", properties: {} } },
    { type: "custom", name: "apply_patch", description: "A patch" },
  ],
  text: { format: { type: "text" } },
  reasoning: { effort: "low", summary: "auto" },
  metadata: { user: 'u"1' },
} as unknown as ResponsesRequest;

export interface ResponsesStreamScenario {
  name: string;
  ctx: ResponsesReplyContext;
  events: MessagesStreamEvent[];
  /** Ends with `fail(code, message)` instead of `end()`. */
  fail?: [string, string];
}

const ctx = (request: ResponsesRequest): ResponsesReplyContext => ({
  model: "beta-5",
  request,
  id: "resp_test",
  createdAt: 1_700_000_000,
  completedAt: 1_700_000_002,
  namespaced: { ns__lookup: { namespace: "ns", name: "lookup" } },
  custom: { apply_patch: true },
});

export const RESPONSES_STREAM_SCENARIOS: ResponsesStreamScenario[] = [
  {
    name: "text",
    ctx: ctx(plain),
    events: [start(12), text(0), ...HARD.map((t) => say(0, t)), stop(0), finish("end_turn", 9), END],
  },
  {
    name: "mixed",
    ctx: ctx(full),
    events: [
      start(40),
      { type: "ping" },
      think(0),
      thought(0, "Let me "),
      thought(0, 'think "hard"\n'),
      stop(0),
      text(1),
      say(1, "First."),
      stop(1),
      text(2),
      say(2, "Second\npart."),
      stop(2),
      tool(3, "call_1", "get_time"),
      args(3, '{"tz":'),
      args(3, '"UTC"}'),
      stop(3),
      tool(4, "call_2", "ns__lookup"),
      args(4, ""),
      stop(4),
      tool(5, "call_3", "apply_patch"),
      args(5, '{"input":"*** Begin'),
      args(5, ' Patch\\n\\"x\\""}'),
      stop(5),
      tool(6, "call_4", "apply_patch"),
      stop(6),
      text(7),
      say(7, "Done."),
      stop(7),
      finish("tool_use", 30),
      END,
    ],
  },
  {
    name: "incomplete",
    ctx: ctx(plain),
    events: [
      start(5),
      text(0),
      say(0, "cut"),
      stop(0),
      tool(1, "call_9", "get_time"),
      args(1, "{"),
      finish("max_tokens", 64),
      END,
    ],
  },
  {
    name: "refusal",
    ctx: ctx(plain),
    events: [start(5), text(0), say(0, "No."), stop(0), finish("refusal", 2), END],
  },
  {
    name: "error",
    ctx: ctx(full),
    events: [
      start(5),
      text(0),
      say(0, "part"),
      { type: "error", error: { type: "overloaded_error", message: 'Busy "now"' } },
      say(0, "never"),
    ],
  },
  { name: "cut", ctx: ctx(plain), events: [start(5), text(0), say(0, "half")] },
  {
    name: "failed",
    ctx: ctx(plain),
    events: [start(5), think(0), thought(0, "hm")],
    fail: ["rate_limited", "Slow\ndown"],
  },
  { name: "empty", ctx: ctx(plain), events: [start(1), finish("end_turn", 0), END] },
  { name: "nothing", ctx: ctx(plain), events: [] },
];
