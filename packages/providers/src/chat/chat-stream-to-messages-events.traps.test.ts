/** The §4.9 traps and stream variants of docs/protocols.md §2.6, one scenario per test. */
import { describe, expect, test } from "bun:test";
import type { MessagesStreamEvent } from "@turnpike/schema";
import { run, sse } from "../test-helpers.js";
import type { UsageTotals } from "../usage.js";
import { chatStreamToMessagesEvents } from "./chat-stream-to-messages-events.js";

const ID = "chatcmpl-abc";
function chunk(delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) {
  return {
    id: ID,
    object: "chat.completion.chunk",
    created: 1,
    model: "up",
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  };
}
const usageChunk = (prompt: number, completion: number, extra: Record<string, unknown> = {}) => ({
  id: ID,
  object: "chat.completion.chunk",
  created: 1,
  model: "up",
  choices: [],
  usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, ...extra },
});
const call = (index: number, id: string | undefined, name: string | undefined, args: string) => ({
  index,
  ...(id ? { id, type: "function" } : {}),
  function: { ...(name ? { name } : {}), arguments: args },
});

function kinds(events: MessagesStreamEvent[]): string[] {
  return events.map((e) => {
    if (e.type === "content_block_start") return `start:${e.index}:${e.content_block.type}`;
    if (e.type === "content_block_delta") return `delta:${e.index}:${e.delta.type}`;
    if (e.type === "content_block_stop") return `stop:${e.index}`;
    return e.type;
  });
}
function textOf(events: MessagesStreamEvent[], kind: "text_delta" | "thinking_delta" = "text_delta"): string {
  return events
    .map((e) =>
      e.type === "content_block_delta" && e.delta.type === kind
        ? kind === "text_delta"
          ? (e.delta as { text: string }).text
          : (e.delta as { thinking: string }).thinking
        : "",
    )
    .join("");
}
function inputs(events: MessagesStreamEvent[]): { id: string; name: string; json: string }[] {
  const byIndex = new Map<number, { id: string; name: string; json: string }>();
  for (const e of events) {
    if (e.type === "content_block_start" && e.content_block.type === "tool_use") {
      byIndex.set(e.index, { id: e.content_block.id, name: e.content_block.name, json: "" });
    }
    if (e.type === "content_block_delta" && e.delta.type === "input_json_delta")
      byIndex.get(e.index)!.json += e.delta.partial_json;
  }
  return [...byIndex.values()];
}
function finalDelta(events: MessagesStreamEvent[]) {
  return events.find((e) => e.type === "message_delta") as
    | Extract<MessagesStreamEvent, { type: "message_delta" }>
    | undefined;
}
const convert = (
  msgs: ReturnType<typeof sse>,
  ctx: Parameters<typeof chatStreamToMessagesEvents>[0] = { model: "client-model" },
) => run(chatStreamToMessagesEvents(ctx), msgs);

describe("tool calls", () => {
  test("trap 1: a whole tool call in one chunk keeps its arguments (xAI / Gemini-compat style)", async () => {
    const events = await convert(
      sse(
        chunk({ role: "assistant", tool_calls: [call(0, "call_1", "get_weather", '{"city":"Paris"}')] }),
        chunk({}, "tool_calls"),
        usageChunk(10, 5),
        "[DONE]",
      ),
    );
    expect(kinds(events)).toEqual([
      "message_start",
      "start:0:tool_use",
      "delta:0:input_json_delta",
      "stop:0",
      "message_delta",
      "message_stop",
    ]);
    expect(inputs(events)).toEqual([{ id: "call_1", name: "get_weather", json: '{"city":"Paris"}' }]);
  });

  test("trap 9: tool indexes starting at 1 still give block index 0", async () => {
    const events = await convert(
      sse(
        chunk({ tool_calls: [call(1, "toolu_x", "json", "")] }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: '{"a":1}' } }] }),
        chunk({}, "tool_calls"),
        "[DONE]",
      ),
    );
    expect(kinds(events)).toEqual([
      "message_start",
      "start:0:tool_use",
      "delta:0:input_json_delta",
      "stop:0",
      "message_delta",
      "message_stop",
    ]);
    expect(inputs(events)[0]!.json).toBe('{"a":1}');
  });

  test("parallel calls sent one after the other stream sequentially, blocks 0 and 1", async () => {
    const events = await convert(
      sse(
        chunk({ tool_calls: [call(0, "call_a", "f", "")] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: "1}" } }] }),
        chunk({ tool_calls: [call(1, "call_b", "g", "")] }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: '{"y":2}' } }] }),
        chunk({}, "tool_calls"),
        "[DONE]",
      ),
    );
    expect(kinds(events)).toEqual([
      "message_start",
      "start:0:tool_use",
      "delta:0:input_json_delta",
      "delta:0:input_json_delta",
      "stop:0",
      "start:1:tool_use",
      "delta:1:input_json_delta",
      "stop:1",
      "message_delta",
      "message_stop",
    ]);
    expect(inputs(events)).toEqual([
      { id: "call_a", name: "f", json: '{"x":1}' },
      { id: "call_b", name: "g", json: '{"y":2}' },
    ]);
  });

  test("interleaved parallel fragments are buffered: blocks stay sequential and each input is whole", async () => {
    const events = await convert(
      sse(
        chunk({ tool_calls: [call(0, "call_a", "f", '{"x":')] }),
        chunk({ tool_calls: [call(1, "call_b", "g", '{"y":')] }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: "2}" } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: "1}" } }] }),
        chunk({}, "tool_calls"),
        "[DONE]",
      ),
    );
    // no block is reopened and no delta goes to a closed block
    const starts = events.filter((e) => e.type === "content_block_start").map((e) => (e as { index: number }).index);
    expect(starts).toEqual([0, 1]);
    let open = -1;
    for (const e of events) {
      if (e.type === "content_block_start") open = e.index;
      if (e.type === "content_block_delta") expect(e.index).toBe(open);
      if (e.type === "content_block_stop") open = -1;
    }
    expect(inputs(events)).toEqual([
      { id: "call_a", name: "f", json: '{"x":1}' },
      { id: "call_b", name: "g", json: '{"y":2}' },
    ]);
  });

  test("a delta without index is matched by id; a reused index with a new id is a new call", async () => {
    const events = await convert(
      sse(
        chunk({ tool_calls: [call(0, "call_a", "f", '{"a":1}')] }),
        chunk({ tool_calls: [call(0, "call_b", "g", '{"b":2}')] }),
        chunk({ tool_calls: [{ id: "call_b", function: { arguments: "" } }] }),
        chunk({}, "tool_calls"),
        "[DONE]",
      ),
    );
    expect(inputs(events)).toEqual([
      { id: "call_a", name: "f", json: '{"a":1}' },
      { id: "call_b", name: "g", json: '{"b":2}' },
    ]);
  });

  test("type omitted (Azure / Mistral) and an id with characters the messages format rejects", async () => {
    const events = await convert(
      sse(
        chunk({
          tool_calls: [{ index: 0, id: "functions.Bash:0", function: { name: "Bash", arguments: '{"cmd":"ls"}' } }],
        }),
        chunk({}, "tool_calls"),
        "[DONE]",
      ),
    );
    expect(inputs(events)).toEqual([{ id: "functions_Bash_0", name: "Bash", json: '{"cmd":"ls"}' }]);
  });

  test("a call without an id gets a generated toolu_ id", async () => {
    const events = await convert(
      sse(
        chunk({ tool_calls: [{ index: 0, function: { name: "f", arguments: "{}" } }] }),
        chunk({}, "tool_calls"),
        "[DONE]",
      ),
    );
    expect(inputs(events)[0]!.id).toMatch(/^toolu_[A-Za-z0-9]{24}$/);
  });

  test("trap 3: end_turn from the upstream is corrected to tool_use when a tool block was emitted", async () => {
    const events = await convert(
      sse(chunk({ content: "", tool_calls: [call(0, "c1", "f", "{}")] }), chunk({}, "stop"), "[DONE]"),
    );
    expect(kinds(events)).toEqual([
      "message_start",
      "start:0:tool_use",
      "delta:0:input_json_delta",
      "stop:0",
      "message_delta",
      "message_stop",
    ]);
    expect(finalDelta(events)!.delta.stop_reason).toBe("tool_use");
  });

  test("text before a tool call: text block 0, tool block 1", async () => {
    const events = await convert(
      sse(
        chunk({ content: "Let me check." }),
        chunk({ tool_calls: [call(0, "c1", "f", '{"q":1}')] }),
        chunk({}, "tool_calls"),
        "[DONE]",
      ),
    );
    expect(kinds(events)).toEqual([
      "message_start",
      "start:0:text",
      "delta:0:text_delta",
      "stop:0",
      "start:1:tool_use",
      "delta:1:input_json_delta",
      "stop:1",
      "message_delta",
      "message_stop",
    ]);
  });

  test("tool names shortened for the upstream are given back to the client", async () => {
    const events = await convert(
      sse(chunk({ tool_calls: [call(0, "c1", "short_1234abcd", "{}")] }), chunk({}, "tool_calls"), "[DONE]"),
      {
        model: "m",
        toolNames: { short_1234abcd: "a_very_long_original_name" },
      },
    );
    expect(inputs(events)[0]!.name).toBe("a_very_long_original_name");
  });
});

describe("content and finish", () => {
  test("trap 2: tool_calls: [] beside content is treated as absent (text_delta, not input_json_delta)", async () => {
    const events = await convert(
      sse(
        chunk({ content: "Hello", tool_calls: [] }),
        chunk({ content: " world", tool_calls: [] }),
        chunk({}, "stop"),
        "[DONE]",
      ),
    );
    expect(kinds(events)).toEqual([
      "message_start",
      "start:0:text",
      "delta:0:text_delta",
      "delta:0:text_delta",
      "stop:0",
      "message_delta",
      "message_stop",
    ]);
    expect(textOf(events)).toBe("Hello world");
    expect(finalDelta(events)!.delta.stop_reason).toBe("end_turn");
  });

  test("trap 4: content and finish_reason in one chunk (fake streaming): the content is kept", async () => {
    const events = await convert(
      sse(
        chunk({ role: "assistant", content: "All at once." }, "stop", {
          usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
        }),
        "[DONE]",
      ),
    );
    expect(textOf(events)).toBe("All at once.");
    expect(finalDelta(events)!.usage).toEqual({
      input_tokens: 7,
      output_tokens: 3,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
  });

  test("the final tool fragment, finish_reason and usage in one chunk", async () => {
    const events = await convert(
      sse(
        chunk({ tool_calls: [call(0, "c1", "f", '{"a":')] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: "1}" } }] }, "tool_calls", {
          usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 },
        }),
        "[DONE]",
      ),
    );
    expect(inputs(events)[0]!.json).toBe('{"a":1}');
    expect(finalDelta(events)!.usage.output_tokens).toBe(9);
  });

  test("trap 5: message_delta is held until the usage chunk that follows the finish", async () => {
    const events = await convert(sse(chunk({ content: "Hi" }), chunk({}, "stop"), usageChunk(16, 2), "[DONE]"));
    const i = events.findIndex((e) => e.type === "message_delta");
    expect(kinds(events).slice(i)).toEqual(["message_delta", "message_stop"]);
    expect(finalDelta(events)!.usage).toEqual({
      input_tokens: 16,
      output_tokens: 2,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
  });

  test("trap 6: usage on every chunk is remembered, not taken as the end; the last numbers win", async () => {
    const u = (p: number, c: number) => ({ usage: { prompt_tokens: p, completion_tokens: c, total_tokens: p + c } });
    const events = await convert(
      sse(
        chunk({ content: "a" }, null, u(5, 1)),
        chunk({ content: "b" }, null, u(5, 2)),
        chunk({ content: "c" }, null, u(5, 3)),
        chunk({}, "stop", u(5, 3)),
        "[DONE]",
      ),
    );
    expect(textOf(events)).toBe("abc");
    expect(finalDelta(events)!.usage.output_tokens).toBe(3);
  });

  test("cached and reasoning tokens map to cache_read and uncached input (§4.4)", async () => {
    let billed: UsageTotals | undefined;
    const events = await convert(
      sse(
        chunk({ content: "x" }),
        chunk({}, "stop"),
        usageChunk(1000, 50, {
          prompt_tokens_details: { cached_tokens: 800 },
          completion_tokens_details: { reasoning_tokens: 30 },
        }),
        "[DONE]",
      ),
      { model: "m", onUsage: (x) => (billed = x) },
    );
    // <unknown>: the schema's MessageDeltaUsage type has no output_tokens_details (MessagesUsage does).
    expect<unknown>(finalDelta(events)!.usage).toEqual({
      input_tokens: 200,
      output_tokens: 50,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 800,
      output_tokens_details: { thinking_tokens: 30 },
    });
    expect(billed).toEqual({
      input_tokens: 200,
      output_tokens: 50,
      cache_read_input_tokens: 800,
      cache_creation_input_tokens: 0,
      reasoning_tokens: 30,
    });
  });

  test('Azure prompt-filter chunks (choices: [], id "") are skipped', async () => {
    const filter = {
      id: "",
      object: "",
      created: 0,
      model: "",
      choices: [],
      prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }],
    };
    const events = await convert(
      sse(filter, chunk({ role: "assistant", content: "" }), chunk({ content: "ok" }), chunk({}, "stop"), "[DONE]"),
    );
    expect(kinds(events)).toEqual([
      "message_start",
      "start:0:text",
      "delta:0:text_delta",
      "stop:0",
      "message_delta",
      "message_stop",
    ]);
  });

  test("reasoning_content (DeepSeek) and reasoning (OpenRouter) become a thinking block before the text", async () => {
    const events = await convert(
      sse(
        chunk({ reasoning_content: "Let me " }),
        chunk({ reasoning: "think." }),
        chunk({ content: "Answer." }),
        chunk({}, "stop"),
        "[DONE]",
      ),
    );
    expect(kinds(events)).toEqual([
      "message_start",
      "start:0:thinking",
      "delta:0:thinking_delta",
      "delta:0:thinking_delta",
      "stop:0",
      "start:1:text",
      "delta:1:text_delta",
      "stop:1",
      "message_delta",
      "message_stop",
    ]);
    expect(textOf(events, "thinking_delta")).toBe("Let me think.");
    expect(events[1]).toEqual({
      type: "content_block_start",
      index: 0,
      content_block: { type: "thinking", thinking: "", signature: "" },
    });
  });

  test("one chunk with reasoning, content and a tool call is split in that order", async () => {
    const events = await convert(
      sse(
        chunk({ reasoning_content: "hmm", content: "ok", tool_calls: [call(0, "c1", "f", "{}")] }, "tool_calls"),
        "[DONE]",
      ),
    );
    expect(
      events
        .filter((e) => e.type === "content_block_start")
        .map((e) => (e as { content_block: { type: string } }).content_block.type),
    ).toEqual(["thinking", "text", "tool_use"]);
  });

  test("finish reasons: length → max_tokens, content_filter → refusal", async () => {
    const a = await convert(sse(chunk({ content: "cut" }), chunk({}, "length"), "[DONE]"));
    expect(finalDelta(a)!.delta.stop_reason).toBe("max_tokens");
    const b = await convert(sse(chunk({ content: "no" }), chunk({}, "content_filter"), "[DONE]"));
    expect(finalDelta(b)!.delta.stop_reason).toBe("refusal");
  });

  test("a stop sequence named by the upstream (vLLM stop_reason) is reported", async () => {
    const named = {
      id: ID,
      object: "chat.completion.chunk",
      created: 1,
      model: "up",
      choices: [{ index: 0, delta: {}, finish_reason: "stop", stop_reason: "END" }],
    };
    const events = await convert(sse(chunk({ content: "done" }), named, "[DONE]"), {
      model: "m",
      stopSequences: ["END", "STOP"],
    });
    expect(finalDelta(events)!.delta).toEqual({ stop_reason: "stop_sequence", stop_sequence: "END" });
  });

  test("message_start carries the pre-counted input; message_delta the upstream's real numbers", async () => {
    const events = await convert(sse(chunk({ content: "x" }), chunk({}, "stop"), usageChunk(40, 1), "[DONE]"), {
      model: "client",
      inputTokens: 37,
    });
    const start = events[0] as Extract<MessagesStreamEvent, { type: "message_start" }>;
    expect(start.message.usage.input_tokens).toBe(37);
    expect(start.message.model).toBe("client");
    expect(start.message.id).toBe("msg_chatcmpl-abc");
    expect(finalDelta(events)!.usage.input_tokens).toBe(40);
  });
});

describe("ends and errors", () => {
  test("mid-stream error: in-band error event, no message_delta, no message_stop", async () => {
    let billed: UsageTotals | undefined;
    const err = {
      error: {
        message: "The server is overloaded",
        type: "service_unavailable_error",
        param: null,
        code: "server_is_overloaded",
      },
    };
    const events = await convert(sse(chunk({ content: "partial" }), err, chunk({ content: "ignored" }), "[DONE]"), {
      model: "m",
      inputTokens: 12,
      onUsage: (u) => (billed = u),
    });
    expect(kinds(events)).toEqual(["message_start", "start:0:text", "delta:0:text_delta", "error"]);
    expect(events.at(-1)).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "The server is overloaded" },
    });
    // usage is still reported for billing: the pre-count plus the relayed text, marked estimated
    expect(billed).toMatchObject({ input_tokens: 12, estimated: true });
    expect(billed!.output_tokens).toBeGreaterThan(0);
  });

  test("an `event: error` SSE message is an in-band error too", async () => {
    const events = await convert([
      { event: "error", data: JSON.stringify({ error: { message: "bad", type: "invalid_request_error" } }) },
    ]);
    expect(events).toEqual([{ type: "error", error: { type: "invalid_request_error", message: "bad" } }]);
  });

  test("[DONE] without any finish_reason: end_turn (or tool_use) is synthesized (§4.5 step 5)", async () => {
    const a = await convert(sse(chunk({ content: "hello" }), "[DONE]"));
    expect(kinds(a).slice(-3)).toEqual(["stop:0", "message_delta", "message_stop"]);
    expect(finalDelta(a)!.delta.stop_reason).toBe("end_turn");
    const b = await convert(sse(chunk({ tool_calls: [call(0, "c", "f", '{"a":1}')] }), "[DONE]"));
    expect(finalDelta(b)!.delta.stop_reason).toBe("tool_use");
    expect(inputs(b)[0]!.json).toBe('{"a":1}');
  });

  test("EOF with neither finish_reason nor [DONE] is an interrupted stream: in-band api_error, no message_stop", async () => {
    const events = await convert(sse(chunk({ content: "half an ans" })));
    expect(kinds(events)).toEqual(["message_start", "start:0:text", "delta:0:text_delta", "error"]);
    const last = events.at(-1) as Extract<MessagesStreamEvent, { type: "error" }>;
    expect(last.error.type).toBe("api_error");
    expect(last.error.message).toContain("ended before the reply was complete");
  });

  test("EOF after finish_reason but before the usage chunk: message_delta with the estimate, then message_stop", async () => {
    let billed: UsageTotals | undefined;
    const events = await convert(sse(chunk({ content: "Hello there" }), chunk({}, "stop")), {
      model: "m",
      inputTokens: 9,
      onUsage: (u) => (billed = u),
    });
    expect(kinds(events).slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(finalDelta(events)!.usage.input_tokens).toBe(9);
    expect(billed!.estimated).toBe(true);
    expect(billed!.output_tokens).toBe(2); // "Hello there" in o200k_base
  });

  test("nothing is emitted after message_stop", async () => {
    const events = await convert(sse(chunk({ content: "a" }), chunk({}, "stop"), "[DONE]", chunk({ content: "late" })));
    expect(events.at(-1)).toEqual({ type: "message_stop" });
    expect(textOf(events)).toBe("a");
  });

  test("the usage getter reports progress before the end", async () => {
    const stream = chatStreamToMessagesEvents({ model: "m", inputTokens: 3 });
    await run(stream, sse(chunk({ content: "x" }), chunk({}, "stop"), usageChunk(4, 2)));
    expect(stream.usage).toEqual({
      input_tokens: 4,
      output_tokens: 2,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
  });
});
