import { describe, expect, test } from "bun:test";
import type { MessagesRequest, MessagesStreamEvent } from "@turnpike/schema";
import { convertMessagesRequestToResponses } from "./convert-messages-request-to-responses.js";
import { convertResponsesResponseToChat } from "./convert-responses-response-to-chat.js";
import { ResponsesToMessagesMachine } from "./responses-stream-to-messages-events.js";
import { responsesUsageToTotals } from "./responses-usage.js";

const usage = {
  input_tokens: 20,
  input_tokens_details: { cached_tokens: 5 },
  output_tokens: 7,
  output_tokens_details: { reasoning_tokens: 3 },
  total_tokens: 27,
};

describe("the pivot → a Responses upstream request", () => {
  test("a tool conversation: input items in order, flat non-strict tools, the named choice, images and files", () => {
    const pivot = {
      model: "x",
      max_tokens: 300,
      messages: [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
            { type: "document", source: { type: "base64", media_type: "application/pdf", data: "BBBB" } },
            { type: "text", text: "Look" },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Checking." },
            { type: "tool_use", id: "toolu_1", name: "get_time", input: { tz: "UTC" } },
          ],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "12:00" }] },
      ],
      tools: [
        {
          name: "get_time",
          description: "Time",
          input_schema: { type: "object", properties: { tz: { type: "string" } } },
        },
      ],
      tool_choice: { type: "tool", name: "get_time" },
    } as MessagesRequest;
    const { body, warnings } = convertMessagesRequestToResponses(pivot, { upstreamModel: "vendor-5" });
    expect(warnings).toEqual([]);
    expect(body.model).toBe("vendor-5");
    expect(body.input).toEqual([
      {
        role: "user",
        content: [
          { type: "input_image", image_url: "data:image/png;base64,AAAA", detail: "auto" },
          { type: "input_file", file_data: "data:application/pdf;base64,BBBB", filename: expect.any(String) },
          { type: "input_text", text: "Look" },
        ],
      },
      { role: "assistant", content: "Checking." },
      { type: "function_call", call_id: "toolu_1", name: "get_time", arguments: '{"tz":"UTC"}' },
      { type: "function_call_output", call_id: "toolu_1", output: "12:00" },
    ]);
    expect(body.tools).toEqual([
      {
        type: "function",
        name: "get_time",
        description: "Time",
        parameters: { type: "object", properties: { tz: { type: "string" } } },
        strict: false,
      },
    ]);
    expect(body.tool_choice).toEqual({ type: "function", name: "get_time" });
    expect(body.store).toBe(false);
    expect(body.max_output_tokens).toBe(300);
  });

  test("structured output as text.format; the end-user id as safety_identifier; the chat converter's warnings name this upstream", () => {
    const pivot = {
      model: "x",
      max_tokens: 50,
      top_k: 3,
      metadata: { user_id: "u-1" },
      output_config: { format: { type: "json_schema", schema: { type: "object" } } },
      messages: [{ role: "user", content: "hi" }],
    } as MessagesRequest;
    const { body, warnings } = convertMessagesRequestToResponses(pivot, { upstreamModel: "m" });
    expect(body.text).toEqual({ format: { type: "json_schema", name: "response", schema: { type: "object" } } });
    expect(body.safety_identifier).toBe("u-1");
    expect(warnings).toEqual([{ param: "top_k", message: "not supported by Responses upstreams" }]);
  });
});

describe("a Responses reply in chat terms", () => {
  test("text, refusal, reasoning summary, calls, the finish and the usage", () => {
    const chat = convertResponsesResponseToChat({
      id: "resp_1",
      model: "m",
      status: "completed",
      output: [
        { type: "reasoning", summary: [{ type: "summary_text", text: "Plan." }] },
        {
          type: "message",
          content: [
            { type: "output_text", text: "A" },
            { type: "refusal", refusal: "No." },
            { type: "output_text", text: "B" },
          ],
        },
        { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      ],
      usage,
    });
    expect(chat).toEqual({
      id: "resp_1",
      object: "chat.completion",
      model: "m",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: "AB",
            refusal: "No.",
            reasoning_content: "Plan.",
            tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }],
          },
          finish_reason: "tool_calls",
        },
      ],
      usage: {
        prompt_tokens: 20,
        completion_tokens: 7,
        prompt_tokens_details: { cached_tokens: 5 },
        completion_tokens_details: { reasoning_tokens: 3 },
      },
    });
  });

  test("incomplete replies: length for the cap, content_filter for the filter; no output is content null", () => {
    const capped = convertResponsesResponseToChat({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      output: [],
    }) as any;
    const filtered = convertResponsesResponseToChat({
      status: "incomplete",
      incomplete_details: { reason: "content_filter" },
      output: [],
    }) as any;
    expect([capped.choices[0].finish_reason, filtered.choices[0].finish_reason]).toEqual(["length", "content_filter"]);
    expect(capped.choices[0].message.content).toBeNull();
  });

  test("usage totals: input less the cached part, output with the reasoning share", () => {
    expect(responsesUsageToTotals(usage)).toEqual({
      input_tokens: 15,
      output_tokens: 7,
      cache_read_input_tokens: 5,
      cache_creation_input_tokens: 0,
      reasoning_tokens: 3,
    });
    expect(responsesUsageToTotals(undefined)).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
  });
});

describe("a Responses stream as pivot events", () => {
  function run(events: Record<string, unknown>[], end = true): MessagesStreamEvent[] {
    const out: MessagesStreamEvent[] = [];
    const m = new ResponsesToMessagesMachine({ model: "m", inputTokens: 20 }, (e) => out.push(e));
    for (const e of events) m.push({ event: String(e.type), data: JSON.stringify(e) });
    if (end) m.end();
    return out;
  }

  test("reasoning, text, two interleaved calls: thinking, text and tool_use blocks in order, arguments whole", () => {
    const out = run([
      { type: "response.created", response: {} },
      { type: "response.reasoning_summary_text.delta", output_index: 0, delta: "Hm" },
      { type: "response.output_text.delta", output_index: 1, delta: "Ok" },
      {
        type: "response.output_item.added",
        output_index: 2,
        item: { type: "function_call", call_id: "c1", name: "a", arguments: "" },
      },
      { type: "response.function_call_arguments.delta", output_index: 2, delta: '{"x":' },
      { type: "response.function_call_arguments.delta", output_index: 2, delta: "1}" },
      { type: "response.function_call_arguments.done", output_index: 2, arguments: '{"x":1}' },
      {
        type: "response.output_item.added",
        output_index: 3,
        item: { type: "function_call", call_id: "c2", name: "b", arguments: "" },
      },
      {
        type: "response.output_item.done",
        output_index: 3,
        item: { type: "function_call", call_id: "c2", name: "b", arguments: "{}" },
      },
      { type: "response.completed", response: { status: "completed", usage } },
    ]);
    const starts = out
      .filter(
        (e): e is Extract<MessagesStreamEvent, { type: "content_block_start" }> => e.type === "content_block_start",
      )
      .map((e) => e.content_block);
    expect(starts.map((b) => b.type)).toEqual(["thinking", "text", "tool_use", "tool_use"]);
    expect(starts.slice(2)).toMatchObject([
      { id: "c1", name: "a" },
      { id: "c2", name: "b" },
    ]);
    const args = out.flatMap((e) =>
      e.type === "content_block_delta" && e.delta.type === "input_json_delta" ? [[e.index, e.delta.partial_json]] : [],
    );
    expect(args).toEqual([
      [2, '{"x":'],
      [2, "1}"],
      [3, "{}"],
    ]);
    const delta = out.find((e) => e.type === "message_delta");
    expect(delta).toMatchObject({
      delta: { stop_reason: "tool_use" },
      usage: { input_tokens: 15, cache_read_input_tokens: 5, output_tokens: 7 },
    });
    expect(out.at(-1)?.type).toBe("message_stop");
  });

  test("response.incomplete at the cap ends as max_tokens", () => {
    const out = run([
      { type: "response.output_text.delta", output_index: 0, delta: "Once upon" },
      {
        type: "response.incomplete",
        response: { status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, usage },
      },
    ]);
    expect(out.find((e) => e.type === "message_delta")).toMatchObject({ delta: { stop_reason: "max_tokens" } });
  });

  test("response.failed without an error event: the in-band error carries the response's own message", () => {
    const out = run([
      { type: "response.output_text.delta", output_index: 0, delta: "a" },
      {
        type: "response.failed",
        response: { status: "failed", error: { code: "server_error", message: "It broke." } },
      },
    ]);
    expect(out.at(-1)).toMatchObject({ type: "error", error: { message: "It broke." } });
    expect(out.some((e) => e.type === "message_stop")).toBe(false);
  });

  test("a stream cut before its terminal event is an interrupted reply, not a finished one", () => {
    const out = run([{ type: "response.output_text.delta", output_index: 0, delta: "a" }]);
    expect(out.at(-1)).toMatchObject({ type: "error", error: { type: "api_error" } });
    expect(out.some((e) => e.type === "message_stop")).toBe(false);
  });
});
