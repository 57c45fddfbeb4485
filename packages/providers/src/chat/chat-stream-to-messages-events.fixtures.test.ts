import { describe, expect, test } from "bun:test";
import type { MessagesStreamEvent } from "@turnpike/schema";
import { fixtureChunks, run } from "../test-helpers.js";
import type { UsageTotals } from "../usage.js";
import { chatStreamToMessagesEvents } from "./chat-stream-to-messages-events.js";

/** The tool input a client would assemble from input_json_delta fragments, per block index. */
function toolInputs(events: MessagesStreamEvent[]): Record<number, string> {
  const out: Record<number, string> = {};
  for (const e of events) {
    if (e.type === "content_block_start" && e.content_block.type === "tool_use") out[e.index] = "";
    if (e.type === "content_block_delta" && e.delta.type === "input_json_delta") out[e.index] += e.delta.partial_json;
  }
  return out;
}

describe("chat stream → messages events, recorded fixtures", () => {
  test("openai-tool.chunks.txt: exact event sequence, reassembled arguments, real usage", async () => {
    let billed: UsageTotals | undefined;
    const events = await run(
      chatStreamToMessagesEvents({ model: "beta-4.1-nano", inputTokens: 58, onUsage: (u) => (billed = u) }),
      await fixtureChunks("openai-tool.chunks.txt"),
    );
    expect(events.map((e) => e.type)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      // the fixture has no [DONE] line: EOF after a finish_reason still completes the message
      "message_stop",
    ]);
    const start = events[0] as Extract<MessagesStreamEvent, { type: "message_start" }>;
    expect(start.message.model).toBe("beta-4.1-nano");
    expect(start.message.usage).toEqual({
      input_tokens: 58,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    expect(events[1]).toEqual({
      type: "content_block_start",
      index: 0,
      content_block: { type: "tool_use", id: "call_PieqNSej6kM9hgYbcQdbZSaC", name: "get_weather", input: {} },
    });
    expect(JSON.parse(toolInputs(events)[0]!)).toEqual({ location: "Paris" });
    // <unknown>: the schema's MessageDeltaUsage type has no output_tokens_details (MessagesUsage does).
    expect<unknown>(events[5]).toEqual({
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: {
        input_tokens: 61,
        output_tokens: 15,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens_details: { thinking_tokens: 0 },
      },
    });
    expect(billed).toEqual({
      input_tokens: 61,
      output_tokens: 15,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
      reasoning_tokens: 0,
    });
  });

  test("openai-tool.chunks.txt followed by [DONE] ends with message_stop", async () => {
    const chunks = [...(await fixtureChunks("openai-tool.chunks.txt")), { data: "[DONE]" }];
    const events = await run(chatStreamToMessagesEvents({ model: "m" }), chunks);
    expect(events.at(-1)).toEqual({ type: "message_stop" });
    expect(events.filter((e) => e.type === "message_delta")).toHaveLength(1);
  });

  test('openai-text.chunks.txt: role chunk with content "" opens no block; text reassembles; usage from the usage chunk', async () => {
    const chunks = [...(await fixtureChunks("openai-text.chunks.txt")), { data: "[DONE]" }];
    const events = await run(chatStreamToMessagesEvents({ model: "beta" }), chunks);
    expect(events.map((e) => e.type)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const text = events
      .map((e) => (e.type === "content_block_delta" && e.delta.type === "text_delta" ? e.delta.text : ""))
      .join("");
    expect(text).toBe("**Holiday.");
    const delta = events[6] as Extract<MessagesStreamEvent, { type: "message_delta" }>;
    expect(delta.delta.stop_reason).toBe("end_turn");
    // <unknown>: the schema's MessageDeltaUsage type has no output_tokens_details (MessagesUsage does).
    expect<unknown>(delta.usage).toEqual({
      input_tokens: 16,
      output_tokens: 300,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens_details: { thinking_tokens: 0 },
    });
  });
});
