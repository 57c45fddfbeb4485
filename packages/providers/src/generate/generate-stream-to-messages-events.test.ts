import { describe, expect, test } from "bun:test";
import type { MessagesStreamEvent } from "@turnpike/schema";
import { SSEDecoderStream } from "@turnpike/schema/sse";
import { MemorySignatureStore } from "../signature-store.js";
import { drain, fixtureChunks, run, sse } from "../test-helpers.js";
import type { UsageTotals } from "../usage.js";
import { generateStreamToMessagesEvents } from "./generate-stream-to-messages-events.js";

const kinds = (events: MessagesStreamEvent[]) =>
  events.map((e) =>
    e.type === "content_block_start"
      ? `start:${e.index}:${e.content_block.type}`
      : e.type === "content_block_delta"
        ? `delta:${e.index}:${e.delta.type}`
        : e.type === "content_block_stop"
          ? `stop:${e.index}`
          : e.type,
  );
const finalDelta = (events: MessagesStreamEvent[]) =>
  events.find((e) => e.type === "message_delta") as Extract<MessagesStreamEvent, { type: "message_delta" }>;
const candidate = (parts: unknown[], finishReason?: string, usage?: Record<string, number>) => ({
  candidates: [{ content: { role: "model", parts }, index: 0, ...(finishReason ? { finishReason } : {}) }],
  ...(usage ? { usageMetadata: usage } : {}),
  responseId: "resp1",
});

describe("generateContent stream → messages events, recorded fixtures", () => {
  test("google-tool.chunks.txt: one whole tool_use block, tool_use stop reason, usage with thoughts as output", async () => {
    const signatures = new MemorySignatureStore();
    let billed: UsageTotals | undefined;
    const events = await run(
      generateStreamToMessagesEvents({
        model: "gamma-3-pro",
        inputTokens: 30,
        signatures,
        onUsage: (u) => (billed = u),
      }),
      await fixtureChunks("google-tool.chunks.txt"),
    );
    expect(kinds(events)).toEqual([
      "message_start",
      "start:0:tool_use",
      "delta:0:input_json_delta",
      "stop:0",
      "message_delta",
      "message_stop",
    ]);
    const startBlock = events[1] as Extract<MessagesStreamEvent, { type: "content_block_start" }>;
    expect(startBlock.content_block).toMatchObject({ type: "tool_use", name: "weather", input: {} });
    expect((startBlock.content_block as { id: string }).id).toMatch(/^toolu_/);
    expect(events[2]).toMatchObject({
      delta: { type: "input_json_delta", partial_json: '{"location":"San Francisco"}' },
    });
    // <unknown>: the schema's MessageDeltaUsage type has no output_tokens_details (MessagesUsage does).
    expect<unknown>(finalDelta(events)).toEqual({
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: {
        input_tokens: 29,
        output_tokens: 60,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens_details: { thinking_tokens: 45 },
      },
    });
    expect(billed).toEqual({
      input_tokens: 29,
      output_tokens: 60,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
      reasoning_tokens: 45,
    });
  });

  test("google-text.chunks.txt: text fragments into one block, the trailing empty part opens nothing, end_turn", async () => {
    const events = await run(
      generateStreamToMessagesEvents({ model: "gamma" }),
      await fixtureChunks("google-text.chunks.txt"),
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
    const text = events
      .map((e) => (e.type === "content_block_delta" && e.delta.type === "text_delta" ? e.delta.text : ""))
      .join("");
    expect(text).toBe('There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y');
    // <unknown>: the schema's MessageDeltaUsage type has no output_tokens_details (MessagesUsage does).
    expect<unknown>(finalDelta(events).usage).toEqual({
      input_tokens: 9,
      output_tokens: 208,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens_details: { thinking_tokens: 185 },
    });
    expect((events[0] as Extract<MessagesStreamEvent, { type: "message_start" }>).message.id).toBe(
      "msg_bH6LaZW8Fp_3nsEPqtaSwQ4",
    );
  });

  test("CRLF-framed bytes through the shared SSE decoder (Gemini uses CRLF)", async () => {
    const lines = (await Bun.file(new URL("../__fixtures__/google-text.chunks.txt", import.meta.url)).text())
      .split("\n")
      .filter(Boolean);
    const bytes = new TextEncoder().encode(lines.map((l) => `data: ${l}\r\n\r\n`).join(""));
    const stream = new ReadableStream<Uint8Array>({
      start: (c) => (c.enqueue(bytes.slice(0, 333)), c.enqueue(bytes.slice(333)), c.close()),
    })
      .pipeThrough(new SSEDecoderStream())
      .pipeThrough(generateStreamToMessagesEvents({ model: "g" }));
    const out = await drain(stream);
    expect(out.at(-1)).toEqual({ type: "message_stop" });
    expect(finalDelta(out).delta.stop_reason).toBe("end_turn");
  });
});

describe("generateContent stream → messages events, variants", () => {
  test("thought parts become a thinking block with the Gemini signature; then text", async () => {
    const events = await run(
      generateStreamToMessagesEvents({ model: "g" }),
      sse(
        candidate([{ text: "Considering", thought: true }]),
        candidate([{ text: " options.", thought: true, thoughtSignature: "sigA" }]),
        candidate([{ text: "Done." }], "STOP", { promptTokenCount: 5, candidatesTokenCount: 2, thoughtsTokenCount: 7 }),
      ),
    );
    expect(kinds(events)).toEqual([
      "message_start",
      "start:0:thinking",
      "delta:0:thinking_delta",
      "delta:0:thinking_delta",
      "delta:0:signature_delta",
      "stop:0",
      "start:1:text",
      "delta:1:text_delta",
      "stop:1",
      "message_delta",
      "message_stop",
    ]);
    expect(events[4]).toEqual({
      type: "content_block_delta",
      index: 0,
      delta: { type: "signature_delta", signature: "sigA" },
    });
    expect(finalDelta(events).usage.output_tokens).toBe(9);
  });

  test("parallel function calls: one block each; the signature is stored under the first call's generated id", async () => {
    const signatures = new MemorySignatureStore();
    const events = await run(
      generateStreamToMessagesEvents({ model: "g", signatures }),
      sse(
        candidate(
          [
            { functionCall: { name: "a", args: { x: 1 } }, thoughtSignature: "sig1" },
            { functionCall: { name: "b", args: {} } },
          ],
          "STOP",
        ),
      ),
    );
    const starts = events.filter((e) => e.type === "content_block_start") as Extract<
      MessagesStreamEvent,
      { type: "content_block_start" }
    >[];
    expect(starts.map((s) => s.index)).toEqual([0, 1]);
    const ids = starts.map((s) => (s.content_block as { id: string }).id);
    expect(signatures.get(ids[0]!)).toBe("sig1");
    expect(signatures.get(ids[1]!)).toBeUndefined();
    const args = events
      .filter((e) => e.type === "content_block_delta")
      .map((e) => (e as { delta: { partial_json: string } }).delta.partial_json);
    expect(args).toEqual(['{"x":1}', "{}"]);
  });

  test("MAX_TOKENS → max_tokens; SAFETY → refusal", async () => {
    const a = await run(
      generateStreamToMessagesEvents({ model: "g" }),
      sse(candidate([{ text: "cut" }], "MAX_TOKENS")),
    );
    expect(finalDelta(a).delta.stop_reason).toBe("max_tokens");
    const b = await run(generateStreamToMessagesEvents({ model: "g" }), sse(candidate([], "SAFETY")));
    expect(finalDelta(b).delta.stop_reason).toBe("refusal");
  });

  test("a blocked prompt (promptFeedback, no candidates) ends as a refusal with no blocks", async () => {
    const events = await run(
      generateStreamToMessagesEvents({ model: "g" }),
      sse({
        promptFeedback: { blockReason: "PROHIBITED_CONTENT" },
        usageMetadata: { promptTokenCount: 11, totalTokenCount: 11 },
      }),
    );
    expect(kinds(events)).toEqual(["message_start", "message_delta", "message_stop"]);
    expect(finalDelta(events)).toEqual({
      type: "message_delta",
      delta: { stop_reason: "refusal", stop_sequence: null },
      usage: { input_tokens: 11, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
  });

  test("cachedContentTokenCount is a cache read, subtracted from input", async () => {
    const events = await run(
      generateStreamToMessagesEvents({ model: "g" }),
      sse(
        candidate([{ text: "x" }], "STOP", {
          promptTokenCount: 1000,
          cachedContentTokenCount: 600,
          candidatesTokenCount: 4,
        }),
      ),
    );
    expect(finalDelta(events).usage).toEqual({
      input_tokens: 400,
      output_tokens: 4,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 600,
    });
  });

  test("an error object in the stream: in-band error of the mapped type, no message_stop", async () => {
    const events = await run(
      generateStreamToMessagesEvents({ model: "g" }),
      sse(candidate([{ text: "par" }]), {
        error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" },
      }),
    );
    expect(kinds(events)).toEqual(["message_start", "start:0:text", "delta:0:text_delta", "error"]);
    expect(events.at(-1)).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "The model is overloaded." },
    });
  });

  test("EOF without a finishReason is an interrupted stream", async () => {
    const events = await run(generateStreamToMessagesEvents({ model: "g" }), sse(candidate([{ text: "half" }])));
    expect(events.at(-1)).toMatchObject({ type: "error", error: { type: "api_error" } });
    expect(events.some((e) => e.type === "message_stop")).toBe(false);
  });

  test("function names changed for Gemini are given back to the client", async () => {
    const events = await run(
      generateStreamToMessagesEvents({ model: "g", toolNames: { _1tool: "1tool" } }),
      sse(candidate([{ functionCall: { name: "_1tool", args: {} } }], "STOP")),
    );
    expect((events[1] as { content_block: { name: string } }).content_block.name).toBe("1tool");
  });
});
