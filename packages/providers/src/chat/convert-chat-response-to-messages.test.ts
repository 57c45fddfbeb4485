import { describe, expect, test } from "bun:test";
import { fixtureJson } from "../test-helpers.js";
import { convertChatResponseToMessages } from "./convert-chat-response-to-messages.js";

const reply = (message: Record<string, unknown>, finish: string, extra: Record<string, unknown> = {}) => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "up",
  choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish, ...extra }],
  usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 },
});

describe("chat reply → messages reply", () => {
  test("openai-text.json: text, end_turn, exact usage", async () => {
    const res = convertChatResponseToMessages(await fixtureJson("openai-text.json"), { model: "beta-nano" });
    expect(res).toEqual({
      id: "msg_chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU",
      type: "message",
      role: "assistant",
      model: "beta-nano",
      content: [{ type: "text", text: "**Holiday Name:** Galaxy Day" }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: {
        input_tokens: 16,
        output_tokens: 363,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens_details: { thinking_tokens: 0 },
      },
    });
  });

  test("openai-tool.json: content null + tool_calls → one tool_use block, tool_use", async () => {
    const res = convertChatResponseToMessages(await fixtureJson("openai-tool.json"), { model: "beta-4o" });
    expect(res.content).toEqual([
      { type: "tool_use", id: "call_qOfTGgDrItLORNfC6VwUbyLL", name: "get_weather", input: { location: "Shanghai" } },
    ]);
    expect(res.stop_reason).toBe("tool_use");
    expect(res.usage).toMatchObject({ input_tokens: 91, output_tokens: 14 });
  });

  test("cached tokens and DeepSeek reasoning_content", () => {
    const res = convertChatResponseToMessages(
      {
        ...reply({ content: "42", reasoning_content: "Let me compute." }, "stop"),
        usage: {
          prompt_tokens: 1000,
          completion_tokens: 60,
          total_tokens: 1060,
          prompt_tokens_details: { cached_tokens: 900 },
          completion_tokens_details: { reasoning_tokens: 50 },
        },
      },
      { model: "m" },
    );
    expect(res.content).toEqual([
      { type: "thinking", thinking: "Let me compute.", signature: "" },
      { type: "text", text: "42" },
    ]);
    expect(res.usage).toEqual({
      input_tokens: 100,
      output_tokens: 60,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 900,
      output_tokens_details: { thinking_tokens: 50 },
    });
  });

  test("finish reasons: length, content_filter; a tool call decides tool_use even when the upstream says stop", () => {
    expect(convertChatResponseToMessages(reply({ content: "cut" }, "length"), { model: "m" }).stop_reason).toBe(
      "max_tokens",
    );
    expect(convertChatResponseToMessages(reply({ content: "" }, "content_filter"), { model: "m" }).stop_reason).toBe(
      "refusal",
    );
    const t = convertChatResponseToMessages(
      reply(
        {
          content: null,
          tool_calls: [{ id: "functions.f:0", type: "function", function: { name: "f", arguments: "" } }],
        },
        "stop",
      ),
      { model: "m" },
    );
    expect(t.stop_reason).toBe("tool_use");
    expect(t.content).toEqual([{ type: "tool_use", id: "functions_f_0", name: "f", input: {} }]);
  });

  test("stop sequences: reported when the upstream names it, or leaves it at the end of the text (then cut); else end_turn", () => {
    const named = convertChatResponseToMessages(reply({ content: "Once upon" }, "stop", { stop_reason: "END" }), {
      model: "m",
      stopSequences: ["END"],
    });
    expect([named.stop_reason, named.stop_sequence]).toEqual(["stop_sequence", "END"]);
    const left = convertChatResponseToMessages(reply({ content: "Once upon END" }, "stop"), {
      model: "m",
      stopSequences: ["END"],
    });
    expect([left.stop_reason, left.stop_sequence, (left.content[0] as { text: string }).text]).toEqual([
      "stop_sequence",
      "END",
      "Once upon ",
    ]);
    const unknown = convertChatResponseToMessages(reply({ content: "Once upon" }, "stop"), {
      model: "m",
      stopSequences: ["END"],
    });
    expect([unknown.stop_reason, unknown.stop_sequence]).toEqual(["end_turn", null]);
  });

  test("a refusal becomes text with stop_reason refusal", () => {
    const res = convertChatResponseToMessages(reply({ content: null, refusal: "I can't help with that." }, "stop"), {
      model: "m",
    });
    expect(res.content).toEqual([{ type: "text", text: "I can't help with that." }]);
    expect(res.stop_reason).toBe("refusal");
  });

  test("an empty text reply has no empty text block", () => {
    expect(convertChatResponseToMessages(reply({ content: "" }, "stop"), { model: "m" }).content).toEqual([]);
  });
});
