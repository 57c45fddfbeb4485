import { describe, expect, test } from "bun:test";
import { MemorySignatureStore } from "../signature-store.js";
import { fixtureJson } from "../test-helpers.js";
import { convertGenerateResponseToMessages } from "./convert-generate-response-to-messages.js";

describe("generateContent reply → messages reply", () => {
  test("google-text.json: text, end_turn, output = candidates + thoughts", async () => {
    const res = convertGenerateResponseToMessages(await fixtureJson("google-text.json"), { model: "gamma-pro" });
    expect(res).toEqual({
      id: "msg_Un6LacrVMcjUxs0PmJfWoQc",
      type: "message",
      role: "assistant",
      model: "gamma-pro",
      content: [
        { type: "text", text: "There are **3** r's in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y." },
      ],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: {
        input_tokens: 9,
        output_tokens: 272,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens_details: { thinking_tokens: 244 },
      },
    });
  });

  test("google-tool.json: STOP with a functionCall → tool_use with a generated id", async () => {
    const res = convertGenerateResponseToMessages(await fixtureJson("google-tool.json"), { model: "g" });
    expect(res.stop_reason).toBe("tool_use");
    expect(res.content).toHaveLength(1);
    expect(res.content[0]).toMatchObject({ type: "tool_use", name: "weather", input: { location: "San Francisco" } });
    expect((res.content[0] as { id: string }).id).toMatch(/^toolu_[A-Za-z0-9]{24}$/);
    expect(res.usage).toMatchObject({ input_tokens: 29, output_tokens: 908 });
  });

  test("thought parts → a thinking block; the functionCall's signature is stored under its id", () => {
    const signatures = new MemorySignatureStore();
    const res = convertGenerateResponseToMessages(
      {
        candidates: [
          {
            content: {
              role: "model",
              parts: [
                { text: "Plan: ", thought: true },
                { text: "call the tool.", thought: true },
                { text: "Calling." },
                { functionCall: { name: "f", args: { a: 1 } }, thoughtSignature: "sig-f" },
              ],
            },
            finishReason: "STOP",
          },
        ],
        usageMetadata: {
          promptTokenCount: 10,
          cachedContentTokenCount: 4,
          candidatesTokenCount: 5,
          thoughtsTokenCount: 6,
        },
      },
      { model: "g", signatures },
    );
    expect(res.content.slice(0, 2)).toEqual([
      { type: "thinking", thinking: "Plan: call the tool.", signature: "" },
      { type: "text", text: "Calling." },
    ]);
    expect(signatures.get((res.content[2] as { id: string }).id)).toBe("sig-f");
    expect(res.usage).toEqual({
      input_tokens: 6,
      output_tokens: 11,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 4,
      output_tokens_details: { thinking_tokens: 6 },
    });
  });

  test("a blocked prompt → refusal with no content; MAX_TOKENS → max_tokens", () => {
    const blocked = convertGenerateResponseToMessages(
      { promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 3 } },
      { model: "g" },
    );
    expect([blocked.stop_reason, blocked.content]).toEqual(["refusal", []]);
    const cut = convertGenerateResponseToMessages(
      { candidates: [{ content: { parts: [{ text: "abc" }] }, finishReason: "MAX_TOKENS" }] },
      { model: "g" },
    );
    expect(cut.stop_reason).toBe("max_tokens");
  });

  test("a stop sequence left at the end of the text is reported and cut", () => {
    const res = convertGenerateResponseToMessages(
      { candidates: [{ content: { parts: [{ text: "one two###" }] }, finishReason: "STOP" }] },
      { model: "g", stopSequences: ["###"] },
    );
    expect([res.stop_reason, res.stop_sequence, res.content]).toEqual([
      "stop_sequence",
      "###",
      [{ type: "text", text: "one two" }],
    ]);
  });
});
