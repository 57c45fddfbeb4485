import { describe, expect, test } from "bun:test";
import type { ChatChunk, MessagesStreamEvent } from "@turnpike/schema";
import { messagesSSEToEvents } from "../messages/messages-sse-to-events.js";
import { fixtureChunks, run } from "../test-helpers.js";
import type { UsageTotals } from "../usage.js";
import { messagesEventsToChatChunks } from "./messages-events-to-chat-chunks.js";

/** Frames → parsed chunks (and the literal markers `[DONE]` / `: ping`). */
function parse(frames: string[]): (ChatChunk | { error: Record<string, unknown> } | "[DONE]" | ": ping")[] {
  return frames.map((f) => {
    if (f === "data: [DONE]\n\n") return "[DONE]";
    if (f === ": ping\n\n") return ": ping";
    expect(f.startsWith("data: ")).toBe(true);
    expect(f.endsWith("\n\n")).toBe(true);
    return JSON.parse(f.slice(6));
  });
}
const chunks = (frames: string[]) =>
  parse(frames).filter((c): c is ChatChunk => typeof c === "object" && "choices" in c);
const deltas = (frames: string[]) => chunks(frames).flatMap((c) => c.choices.map((ch) => ch.delta));

const start = (id = "msg_1", input = 10): MessagesStreamEvent => ({
  type: "message_start",
  message: {
    id,
    type: "message",
    role: "assistant",
    model: "up",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: input, output_tokens: 1 },
  },
});
const text = (index: number, t: string): MessagesStreamEvent => ({
  type: "content_block_delta",
  index,
  delta: { type: "text_delta", text: t },
});
const stop = (index: number): MessagesStreamEvent => ({ type: "content_block_stop", index });
const delta = (
  reason: "end_turn" | "tool_use" | "max_tokens",
  output: number,
  extra: Record<string, number> = {},
): MessagesStreamEvent => ({
  type: "message_delta",
  delta: { stop_reason: reason, stop_sequence: null },
  usage: { output_tokens: output, ...extra },
});

describe("messages events → chat chunks, recorded fixtures", () => {
  test("anthropic-tool.chunks.txt: role chunk, tool header at ordinal 0, argument fragments, finish, usage chunk, [DONE]", async () => {
    let billed: UsageTotals | undefined;
    const events = await run(
      messagesSSEToEvents(),
      await fixtureChunks("anthropic-tool.chunks.txt", { withEventLines: true }),
    );
    const frames = await run(
      messagesEventsToChatChunks({
        model: "alpha-haiku",
        includeUsage: true,
        created: 1700000000,
        onUsage: (u) => (billed = u),
      }),
      events,
    );
    const out = parse(frames);
    expect(out.at(-1)).toBe("[DONE]");
    expect(out).toContain(": ping");
    const cs = chunks(frames);
    for (const c of cs) {
      expect(c.id).toBe("chatcmpl-01K2JbSUMYhez5RHoK9ZCj9U");
      expect(c.object).toBe("chat.completion.chunk");
      expect(c.model).toBe("alpha-haiku");
      expect(c.created).toBe(1700000000);
    }
    // A tool-only reply: content null from the start, as the JSON reply has it.
    expect(cs[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: null });
    expect(cs[1]!.choices[0]!.delta).toEqual({
      tool_calls: [
        { index: 0, id: "toolu_01KFbKqPYSuAKujiL6mTfzYA", type: "function", function: { name: "json", arguments: "" } },
      ],
    });
    const args = deltas(frames)
      .flatMap((d) => d.tool_calls ?? [])
      .map((t) => t.function?.arguments ?? "")
      .join("");
    expect(JSON.parse(args)).toEqual({
      elements: [{ location: "San Francisco", temperature: 58, condition: "sunny" }],
    });
    // the empty first fragment is skipped
    expect(
      deltas(frames)
        .flatMap((d) => d.tool_calls ?? [])
        .every((t) => t.id !== undefined || t.function?.arguments !== ""),
    ).toBe(true);
    const finish = cs.find((c) => c.choices[0]?.finish_reason);
    expect(finish!.choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: "tool_calls" });
    expect(cs.at(-1)).toMatchObject({
      choices: [],
      usage: {
        prompt_tokens: 849,
        completion_tokens: 47,
        total_tokens: 896,
        prompt_tokens_details: { cached_tokens: 0 },
      },
    });
    expect(billed).toEqual({
      input_tokens: 849,
      output_tokens: 47,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
  });

  test("anthropic-text.chunks.txt without include_usage: no usage chunk, but usage is still reported for billing", async () => {
    let billed: UsageTotals | undefined;
    const events = await run(
      messagesSSEToEvents(),
      await fixtureChunks("anthropic-text.chunks.txt", { withEventLines: true }),
    );
    const frames = await run(
      messagesEventsToChatChunks({ model: "alpha", includeUsage: false, onUsage: (u) => (billed = u) }),
      events,
    );
    const cs = chunks(frames);
    expect(cs.some((c) => c.choices.length === 0)).toBe(false);
    expect(
      deltas(frames)
        .map((d) => d.content ?? "")
        .join(""),
    ).toBe(
      "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
    );
    expect(cs.at(-1)!.choices[0]!.finish_reason).toBe("stop");
    expect(parse(frames).at(-1)).toBe("[DONE]");
    expect(billed).toEqual({
      input_tokens: 12,
      output_tokens: 30,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
  });
});

describe("messages events → chat chunks, variants", () => {
  test("trap 9: a text block before tools shifts block indexes, but tool ordinals stay 0, 1", async () => {
    const events: MessagesStreamEvent[] = [
      start(),
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      text(0, "Checking."),
      stop(0),
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "toolu_a", name: "f", input: {} },
      },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"a":1}' } },
      stop(1),
      {
        type: "content_block_start",
        index: 2,
        content_block: { type: "tool_use", id: "toolu_b", name: "g", input: {} },
      },
      { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '{"b":2}' } },
      stop(2),
      delta("tool_use", 30),
      { type: "message_stop" },
    ];
    const frames = await run(messagesEventsToChatChunks({ model: "m", includeUsage: false }), events);
    const calls = deltas(frames).flatMap((d) => d.tool_calls ?? []);
    expect(calls).toEqual([
      { index: 0, id: "toolu_a", type: "function", function: { name: "f", arguments: "" } },
      { index: 0, function: { arguments: '{"a":1}' } },
      { index: 1, id: "toolu_b", type: "function", function: { name: "g", arguments: "" } },
      { index: 1, function: { arguments: '{"b":2}' } },
    ]);
  });

  test('a call without arguments (only partial_json "") gets arguments "{}", as the JSON reply has', async () => {
    const events: MessagesStreamEvent[] = [
      start(),
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "toolu_a", name: "now", input: {} },
      },
      { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "" } },
      stop(0),
      delta("tool_use", 1),
      { type: "message_stop" },
    ];
    const frames = await run(messagesEventsToChatChunks({ model: "m", includeUsage: false }), events);
    expect(deltas(frames).flatMap((d) => d.tool_calls ?? [])).toEqual([
      { index: 0, id: "toolu_a", type: "function", function: { name: "now", arguments: "" } },
      { index: 0, function: { arguments: "{}" } },
    ]);
  });

  test("a refusal (no blocks): the role chunk says content null, then the finish", async () => {
    const events: MessagesStreamEvent[] = [
      start(),
      { type: "message_delta", delta: { stop_reason: "refusal", stop_sequence: null }, usage: { output_tokens: 1 } },
      { type: "message_stop" },
    ];
    const frames = await run(messagesEventsToChatChunks({ model: "m", includeUsage: false }), events);
    expect(chunks(frames).map((c) => c.choices[0])).toEqual([
      { index: 0, delta: { role: "assistant", content: null }, logprobs: null, finish_reason: null },
      { index: 0, delta: {}, logprobs: null, finish_reason: "content_filter" },
    ]);
  });

  test("thinking streams as reasoning_content; signature deltas produce nothing", async () => {
    const events: MessagesStreamEvent[] = [
      start(),
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "I am thinking..." } },
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "EqQB" } },
      stop(0),
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      text(1, "Answer"),
      stop(1),
      delta("end_turn", 20, { output_tokens: 20 }),
      { type: "message_stop" },
    ];
    const frames = await run(messagesEventsToChatChunks({ model: "m", includeUsage: false }), events);
    // The role chunk goes with the first block (thinking here, so content null until the text).
    expect(deltas(frames)).toEqual([
      { role: "assistant", content: null },
      { reasoning_content: "I am thinking..." },
      { content: "Answer" },
      {},
    ]);
  });

  test("mid-stream error: data {error} frame then [DONE], no finish chunk", async () => {
    let billed: UsageTotals | undefined;
    const events: MessagesStreamEvent[] = [
      start("msg_1", 25),
      text(0, "part"),
      { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
    ];
    const frames = await run(
      messagesEventsToChatChunks({ model: "m", includeUsage: true, onUsage: (u) => (billed = u) }),
      events,
    );
    const out = parse(frames);
    expect(out.slice(-2)).toEqual([
      {
        error: { message: "Overloaded", type: "service_unavailable_error", param: null, code: "server_is_overloaded" },
      },
      "[DONE]",
    ]);
    expect(chunks(frames).some((c) => c.choices[0]?.finish_reason)).toBe(false);
    expect(billed!.input_tokens).toBe(25);
  });

  test("trap 8: a duplicate message_start with the same id is ignored; another id is an error", async () => {
    const same = await run(messagesEventsToChatChunks({ model: "m", includeUsage: false }), [
      start("msg_1"),
      start("msg_1"),
      text(0, "a"),
      delta("end_turn", 2),
      { type: "message_stop" },
    ]);
    expect(deltas(same).filter((d) => d.role === "assistant")).toHaveLength(1);
    const other = await run(messagesEventsToChatChunks({ model: "m", includeUsage: false }), [
      start("msg_1"),
      text(0, "a"),
      start("msg_2"),
      text(0, "b"),
    ]);
    const out = parse(other);
    expect(out.at(-2)).toMatchObject({ error: { type: "server_error" } });
    expect(out.at(-1)).toBe("[DONE]");
    expect(
      deltas(other)
        .map((d) => d.content)
        .filter(Boolean),
    ).toEqual(["a"]);
  });

  test("message_delta without input fields keeps message_start's input and cache counts (Bedrock style)", async () => {
    const s: MessagesStreamEvent = {
      type: "message_start",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "up",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 100, output_tokens: 1, cache_read_input_tokens: 400, cache_creation_input_tokens: 50 },
      },
    };
    const frames = await run(messagesEventsToChatChunks({ model: "m", includeUsage: true }), [
      s,
      text(0, "x"),
      delta("end_turn", 7),
      { type: "message_stop" },
    ]);
    expect(chunks(frames).at(-1)!.usage).toEqual({
      prompt_tokens: 550,
      completion_tokens: 7,
      total_tokens: 557,
      prompt_tokens_details: { cached_tokens: 400 },
    });
  });

  test("max_tokens → finish_reason length", async () => {
    const frames = await run(messagesEventsToChatChunks({ model: "m", includeUsage: false }), [
      start(),
      text(0, "cut"),
      delta("max_tokens", 5),
      { type: "message_stop" },
    ]);
    expect(chunks(frames).at(-1)!.choices[0]!.finish_reason).toBe("length");
  });

  test("EOF before message_delta is an interrupted stream: error frame + [DONE]; EOF after it completes", async () => {
    const cut = parse(
      await run(messagesEventsToChatChunks({ model: "m", includeUsage: false }), [start(), text(0, "half")]),
    );
    expect(cut.at(-2)).toMatchObject({
      error: { type: "server_error", message: "The upstream stream ended before the reply was complete" },
    });
    const nearly = parse(
      await run(messagesEventsToChatChunks({ model: "m", includeUsage: true }), [
        start(),
        text(0, "all"),
        delta("end_turn", 3),
      ]),
    );
    expect(nearly.at(-2)).toMatchObject({ choices: [], usage: { completion_tokens: 3 } });
    expect(nearly.at(-1)).toBe("[DONE]");
  });

  test("a given id and created are used on every chunk", async () => {
    const frames = await run(
      messagesEventsToChatChunks({ model: "m", includeUsage: false, id: "chatcmpl-fixed", created: 42 }),
      [start(), text(0, "a"), delta("end_turn", 1), { type: "message_stop" }],
    );
    expect(new Set(chunks(frames).map((c) => `${c.id}@${c.created}`))).toEqual(new Set(["chatcmpl-fixed@42"]));
  });
});
