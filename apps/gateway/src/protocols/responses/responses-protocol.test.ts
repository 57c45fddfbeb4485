import { describe, expect, test } from "bun:test";
import type { MessagesRequest, MessagesStreamEvent } from "@turnpike/schema";
import { formatSSE } from "@turnpike/schema/sse";
import { testTarget } from "../../../test/support/test-deps";
import { UsageTally } from "../../metering/usage-tally";
import { MemorySignatures } from "../../stored-responses/signature-store";
import { PROTOCOLS } from "../index";
import { responsesProtocol } from "./responses-protocol";
import type { PassthroughState, ReplyContext } from "../upstream-protocol";

const opts = { stream: false, clientHeaders: new Headers() };
const usage = {
  input_tokens: 12,
  input_tokens_details: { cached_tokens: 4 },
  output_tokens: 9,
  output_tokens_details: { reasoning_tokens: 5 },
  total_tokens: 21,
};
const ctx: ReplyContext = {
  model: "beta-5",
  stopSequences: undefined,
  toolNames: undefined,
  signatures: new MemorySignatures(),
  inputTokens: 0,
};
const frame = (type: string, body: Record<string, unknown>, seq: number) =>
  formatSSE({ event: type, data: JSON.stringify({ type, ...body, sequence_number: seq }) });
const fresh = (): PassthroughState => ({ finished: false, terminated: false });

describe("responses protocol: requests", () => {
  test("{base}/responses with a bearer key; the simulator base ends in /v1", async () => {
    const req = await responsesProtocol.buildRequest(
      testTarget("beta-5", { baseURL: "https://api.vendor.example/v1/" }),
      { model: "m", input: "hi" },
      opts,
    );
    expect(req.url).toBe("https://api.vendor.example/v1/responses");
    expect(req.headers).toEqual({ "content-type": "application/json", authorization: "Bearer vendor-key" });
    expect(responsesProtocol.simulatorBase("http://127.0.0.1:9")).toBe("http://127.0.0.1:9/v1");
    expect(PROTOCOLS.responses).toBe(responsesProtocol);
  });

  test("the count call takes only the prompt's fields, at {base}/responses/input_tokens", async () => {
    const body = {
      model: "m",
      instructions: "s",
      input: [{ role: "user", content: "hi" }],
      tools: [],
      stream: true,
      store: false,
      max_output_tokens: 9,
      include: ["x"],
    };
    const req = await responsesProtocol.count!(testTarget("beta-5"), body, new Headers());
    expect(req.url).toEndWith("/responses/input_tokens");
    expect(JSON.parse(req.body)).toEqual({
      model: "m",
      instructions: "s",
      input: [{ role: "user", content: "hi" }],
      tools: [],
    });
    expect(responsesProtocol.readCount({ object: "response.input_tokens", input_tokens: 7 })).toBe(7);
    expect(responsesProtocol.readCount({})).toBeUndefined();
  });

  test("fromPivot: instructions, input items, the cap, reasoning with a summary; stop sequences dropped with a warning", async () => {
    const pivot = {
      model: "beta-5",
      max_tokens: 2048,
      system: "s",
      stop_sequences: ["X"],
      thinking: { type: "enabled", budget_tokens: 1024 },
      messages: [{ role: "user", content: "hi" }],
    } as MessagesRequest;
    const out = await responsesProtocol.fromPivot(pivot, testTarget("beta-5"), new MemorySignatures());
    expect(out.body).toEqual({
      model: "beta-5",
      instructions: "s",
      input: [{ role: "user", content: "hi" }],
      store: false,
      max_output_tokens: 2048,
      reasoning: { effort: "low", summary: "auto" },
    });
    expect(out.warnings).toEqual([
      { param: "stop_sequences", message: "the Responses API has no stop sequences; not sent" },
    ]);
  });

  test("parseError reads the chat envelope the Responses API answers in", () => {
    const err = responsesProtocol.parseError(
      429,
      JSON.stringify({ error: { type: "requests", message: "slow", code: "rate_limit_exceeded" } }),
      new Headers({ "retry-after": "3" }),
    );
    expect([err.status, err.message, err.headers?.["retry-after"]]).toEqual([429, "slow", "3"]);
  });
});

describe("responses protocol: replies", () => {
  test("a JSON reply as the pivot: reasoning summary → thinking, text, function calls → tool_use, usage", () => {
    const reply = responsesProtocol.reply(
      {
        model: "beta-5-2026",
        status: "completed",
        output: [
          { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Hmm." }], encrypted_content: "e" },
          {
            type: "message",
            id: "m",
            role: "assistant",
            content: [{ type: "output_text", text: "Calling.", annotations: [] }],
          },
          { type: "function_call", id: "fc", call_id: "call_1", name: "get_time", arguments: '{"tz":"UTC"}' },
        ],
        usage,
      },
      ctx,
    );
    expect(reply.model).toBe("beta-5");
    expect(reply.content).toEqual([
      { type: "thinking", thinking: "Hmm.", signature: "" },
      { type: "text", text: "Calling." },
      { type: "tool_use", id: "call_1", name: "get_time", input: { tz: "UTC" } },
    ]);
    expect(reply.stop_reason).toBe("tool_use");
    expect(reply.usage).toMatchObject({ input_tokens: 8, cache_read_input_tokens: 4, output_tokens: 9 });
  });

  test("incomplete replies: the cap → max_tokens, the content filter → refusal", () => {
    const capped = responsesProtocol.reply(
      { status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output: [] },
      ctx,
    );
    const filtered = responsesProtocol.reply(
      { status: "incomplete", incomplete_details: { reason: "content_filter" }, output: [] },
      ctx,
    );
    expect([capped.stop_reason, filtered.stop_reason]).toEqual(["max_tokens", "refusal"]);
  });

  test("replyUsage and replyModel: the vendor's numbers (input less the cached part) and its own model name", () => {
    expect(responsesProtocol.replyUsage({ usage })).toEqual({
      input_tokens: 8,
      output_tokens: 9,
      cache_read_input_tokens: 4,
      cache_creation_input_tokens: 0,
      reasoning_tokens: 5,
    });
    expect(responsesProtocol.replyModel({ model: "beta-5-2026" })).toBe("beta-5-2026");
    expect(
      responsesProtocol.streamModel('{"type":"response.created","response":{"id":"r","model":"beta-5-2026"}}'),
    ).toBe("beta-5-2026");
  });

  test("a stream as pivot events: text, a call whose arguments come whole in its done event, the end with usage", () => {
    const events: MessagesStreamEvent[] = [];
    const m = responsesProtocol.machine({ ...ctx, inputTokens: 12 }, (e) => events.push(e));
    const push = (type: string, body: Record<string, unknown>) =>
      m.push({ event: type, data: JSON.stringify({ type, ...body }) });
    push("response.created", { response: { status: "in_progress" } });
    push("response.output_text.delta", { output_index: 0, delta: "Hi" });
    push("response.output_item.added", {
      output_index: 1,
      item: { type: "function_call", call_id: "call_9", name: "get_time", arguments: "" },
    });
    push("response.output_item.done", {
      output_index: 1,
      item: { type: "function_call", call_id: "call_9", name: "get_time", arguments: '{"a":1}' },
    });
    push("response.completed", { response: { status: "completed", usage } });
    m.end();
    expect(events.map((e) => e.type)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const call = events[4] as Extract<MessagesStreamEvent, { type: "content_block_start" }>;
    expect(call.content_block).toMatchObject({ type: "tool_use", id: "call_9", name: "get_time" });
    expect(events[5]).toMatchObject({ delta: { type: "input_json_delta", partial_json: '{"a":1}' } });
    expect(events[7]).toMatchObject({ delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9 } });
  });

  test("a stream's error event ends it with the pivot's in-band error; nothing after it counts", () => {
    const events: MessagesStreamEvent[] = [];
    const m = responsesProtocol.machine(ctx, (e) => events.push(e));
    m.push({
      event: "response.output_text.delta",
      data: JSON.stringify({ type: "response.output_text.delta", delta: "a" }),
    });
    m.push({ event: "error", data: JSON.stringify({ type: "error", code: "server_error", message: "boom" }) });
    m.push({
      event: "response.failed",
      data: JSON.stringify({
        type: "response.failed",
        response: { status: "failed", error: { code: "server_error", message: "boom" } },
      }),
    });
    m.end();
    expect(events.at(-1)).toMatchObject({ type: "error", error: { type: "api_error", message: "boom" } });
    expect(events.some((e) => e.type === "message_stop")).toBe(false);
  });
});

describe("responses protocol: passthrough reader", () => {
  const created = frame(
    "response.created",
    { response: { id: "r", model: "beta-5", status: "in_progress", usage: null } },
    0,
  );
  const delta = frame("response.output_text.delta", { item_id: "m", output_index: 0, delta: "Hello" }, 1);
  const done = (type: string) =>
    frame(type, { response: { id: "r", model: "beta-5", status: type.slice(9), output: [], usage } }, 2);

  test("raw: nothing of an event is changed", () => {
    expect(responsesProtocol.passthrough.raw({ includeUsage: false, renameModel: "x" })).toBe(true);
  });

  test("scan: usage and the whole reply from response.completed; the stream is finished and terminated there", () => {
    const tally = new UsageTally();
    const state = fresh();
    responsesProtocol.passthrough.scan(created + delta, tally, state);
    expect(state).toEqual({ finished: false, terminated: false });
    responsesProtocol.passthrough.scan(done("response.completed"), tally, state);
    expect(state.finished && state.terminated).toBe(true);
    expect(state.reply).toMatchObject({ id: "r", status: "completed" });
    expect(tally.usage).toMatchObject({ input_tokens: 8, cache_read_input_tokens: 4, output_tokens: 9 });
    expect(tally.final).toBe(true);
  });

  test("scan: response.incomplete finishes too; response.failed and error only terminate (the reply failed)", () => {
    const incomplete = fresh();
    responsesProtocol.passthrough.scan(done("response.incomplete"), new UsageTally(), incomplete);
    expect([incomplete.finished, incomplete.terminated]).toEqual([true, true]);
    const failed = fresh();
    const tally = new UsageTally();
    responsesProtocol.passthrough.scan(
      frame("error", { code: "server_error", message: "x" }, 2) + done("response.failed"),
      tally,
      failed,
    );
    expect([failed.finished, failed.terminated, failed.reply]).toEqual([false, true, undefined]);
    // What a failed response says it generated is still metered.
    expect(tally.usage.output_tokens).toBe(9);
  });

  test("inspect reads parsed events the same way, by their event name or their type", () => {
    const tally = new UsageTally();
    const state = fresh();
    const data = JSON.stringify({ type: "response.completed", response: { id: "r", status: "completed", usage } });
    const msg = { data };
    expect(
      responsesProtocol.passthrough.inspect(msg, tally, { includeUsage: true, renameModel: undefined }, state),
    ).toBe(msg);
    expect(state.finished && state.terminated).toBe(true);
    expect(tally.usage.output_tokens).toBe(9);
  });

  test("text: the deltas of a region or of one event (read only to count a reply the vendor never metered)", () => {
    const call = frame(
      "response.function_call_arguments.delta",
      { item_id: "fc", output_index: 1, delta: '{"a":1}' },
      2,
    );
    expect(responsesProtocol.passthrough.text(created + delta + call)).toBe('Hello{"a":1}');
    expect(
      responsesProtocol.passthrough.text(
        JSON.stringify({ type: "response.reasoning_summary_text.delta", delta: "Hmm" }),
      ),
    ).toBe("Hmm");
    expect(
      responsesProtocol.passthrough.text(JSON.stringify({ type: "response.output_text.done", text: "Hello" })),
    ).toBe("");
  });
});
