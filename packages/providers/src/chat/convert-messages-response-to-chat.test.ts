import { describe, expect, test } from "bun:test";
import type { MessagesResponse } from "@turnpike/schema";
import { fixtureJson } from "../test-helpers.js";
import { convertMessagesResponseToChat } from "./convert-messages-response-to-chat.js";

// Section numbers (§) in the test names refer to docs/protocols.md.
describe("messages reply → chat reply", () => {
  test("anthropic-text.json: text, stop, usage folded per §4.4", async () => {
    const res = convertMessagesResponseToChat(await fixtureJson<MessagesResponse>("anthropic-text.json"), {
      model: "alpha-opus",
      created: 1700000000,
    });
    expect(res).toEqual({
      id: "chatcmpl-01TestTextResponse",
      object: "chat.completion",
      created: 1700000000,
      model: "alpha-opus",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "Hello!", refusal: null },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 0 } },
    });
  });

  test("anthropic-tool.json: tool_use → tool_calls with JSON arguments, content null", async () => {
    const src = await fixtureJson<MessagesResponse>("anthropic-tool.json");
    const res = convertMessagesResponseToChat(src, { model: "alpha-haiku", id: "chatcmpl-x" });
    const msg = res.choices[0]!.message;
    expect(res.id).toBe("chatcmpl-x");
    expect(msg.content).toBeNull();
    expect(msg.tool_calls).toHaveLength(1);
    const call = msg.tool_calls![0] as { id: string; function: { name: string; arguments: string } };
    expect(call.id).toBe("toolu_01Q9ExVZnzZj7E2QQYHYtNUa");
    expect(call.function.name).toBe("json");
    expect(JSON.parse(call.function.arguments)).toEqual((src.content[0] as { input: unknown }).input);
    expect(res.choices[0]!.finish_reason).toBe("tool_calls");
    expect(res.usage).toEqual({
      prompt_tokens: 1151,
      completion_tokens: 87,
      total_tokens: 1238,
      prompt_tokens_details: { cached_tokens: 0 },
    });
  });

  test("cache reads and writes fold into prompt_tokens; thinking → reasoning_content and reasoning_tokens", () => {
    const res = convertMessagesResponseToChat(
      {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "up",
        content: [
          { type: "thinking", thinking: "Hmm.", signature: "sig" },
          { type: "text", text: "Yes." },
        ],
        stop_reason: "max_tokens",
        stop_sequence: null,
        usage: {
          input_tokens: 20,
          output_tokens: 40,
          cache_read_input_tokens: 1000,
          cache_creation_input_tokens: 300,
          output_tokens_details: { thinking_tokens: 25 },
        },
      },
      { model: "m" },
    );
    expect(res.choices[0]!.message.reasoning_content).toBe("Hmm.");
    expect(res.choices[0]!.message.content).toBe("Yes.");
    expect(res.choices[0]!.finish_reason).toBe("length");
    expect(res.usage).toEqual({
      prompt_tokens: 1320,
      completion_tokens: 40,
      total_tokens: 1360,
      prompt_tokens_details: { cached_tokens: 1000 },
      completion_tokens_details: { reasoning_tokens: 25 },
    });
  });

  test("refusal → content_filter", () => {
    const res = convertMessagesResponseToChat(
      {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "up",
        content: [],
        stop_reason: "refusal",
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      },
      { model: "m" },
    );
    expect(res.choices[0]!.finish_reason).toBe("content_filter");
    expect(res.choices[0]!.message.content).toBeNull();
  });
});
