import type { MessagesStreamEvent } from "@turnpike/schema";
import { describe, expect, test } from "bun:test";
import { convertMessagesResponseToGenerate } from "./convert-messages-response-to-generate.js";
import { MessagesToGenerateMachine } from "./messages-events-to-generate-chunks.js";
import { decodeThoughtToken } from "./thought-token.js";

function run(events: MessagesStreamEvent[], end = false): Record<string, any>[] {
  const out: string[] = [];
  const m = new MessagesToGenerateMachine({ model: "alpha-haiku-4-5", frame: (json) => out.push(json) });
  for (const ev of events) m.push(ev);
  if (end) m.end();
  return out.map((j) => JSON.parse(j));
}

const start: MessagesStreamEvent = {
  type: "message_start",
  message: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "x",
    content: [],
    stop_reason: null,
    usage: { input_tokens: 10, output_tokens: 0 },
  },
};

describe("MessagesToGenerateMachine", () => {
  test("thoughts and text chunk by chunk; the call whole with the turn's signed thinking; the last chunk ends the reply", () => {
    const chunks = run([
      start,
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Let me see." } },
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "c2ln" } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Checking" } },
      { type: "content_block_stop", index: 1 },
      {
        type: "content_block_start",
        index: 2,
        content_block: { type: "tool_use", id: "toolu_1", name: "get", input: {} },
      },
      { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '{"q":' } },
      { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '"x"}' } },
      { type: "content_block_stop", index: 2 },
      { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 20 } },
      { type: "message_stop" },
    ]);
    expect(chunks.map((c) => c.candidates[0].content.parts[0])).toEqual([
      { text: "Let me see.", thought: true },
      { text: "Checking" },
      {
        functionCall: { id: "toolu_1", name: "get", args: { q: "x" } },
        thoughtSignature: expect.stringMatching(/^tp1\./),
      },
    ]);
    expect(decodeThoughtToken(chunks[2]!.candidates[0].content.parts[0].thoughtSignature)).toEqual([
      { type: "thinking", thinking: "Let me see.", signature: "c2ln" },
    ]);
    expect(chunks.slice(0, 2).map((c) => [c.candidates[0].finishReason, c.usageMetadata])).toEqual([
      [undefined, undefined],
      [undefined, undefined],
    ]);
    expect(chunks[2]!.candidates[0].finishReason).toBe("STOP");
    expect(chunks[2]!.usageMetadata).toEqual({ promptTokenCount: 10, candidatesTokenCount: 20, totalTokenCount: 30 });
    expect(chunks.every((c) => c.modelVersion === "alpha-haiku-4-5" && c.responseId === "msg_1")).toBe(true);
  });

  test("an error event ends the stream with the format's envelope; a stream cut before its end too", () => {
    const failed = run([
      start,
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "one" } },
      { type: "error", error: { type: "overloaded_error", message: "busy" } },
    ]);
    expect(failed.map((c) => c.error?.status ?? c.candidates[0].content.parts[0].text)).toEqual(["one", "UNAVAILABLE"]);
    const cut = run([start], true);
    expect(cut.at(-1)!.error).toMatchObject({ code: 502, status: "UNAVAILABLE" });
  });

  test("the JSON reply says the same: max tokens, refusal, thinking count apart", () => {
    const reply = convertMessagesResponseToGenerate(
      {
        id: "msg_2",
        content: [{ type: "text", text: "Par" }],
        stop_reason: "max_tokens",
        usage: {
          input_tokens: 5,
          output_tokens: 9,
          cache_read_input_tokens: 2,
          output_tokens_details: { thinking_tokens: 4 },
        },
      },
      { model: "alpha-haiku-4-5" },
    );
    expect(reply.candidates[0]!.finishReason).toBe("MAX_TOKENS");
    expect(reply.usageMetadata).toEqual({
      promptTokenCount: 7,
      candidatesTokenCount: 5,
      thoughtsTokenCount: 4,
      cachedContentTokenCount: 2,
      totalTokenCount: 16,
    });
    const refused = convertMessagesResponseToGenerate(
      { id: "m", content: [], stop_reason: "refusal", usage: { input_tokens: 1, output_tokens: 0 } },
      { model: "m" },
    );
    expect(refused.candidates[0]).toEqual({
      content: { role: "model", parts: [{ text: "" }] },
      finishReason: "SAFETY",
      index: 0,
    });
  });
});
