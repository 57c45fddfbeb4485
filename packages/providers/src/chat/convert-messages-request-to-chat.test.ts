import { describe, expect, test } from "bun:test";
import type { ChatRequest, MessagesRequest } from "@turnpike/schema";
import { GatewayError } from "../errors.js";
import { convertChatRequestToMessages } from "./convert-chat-request-to-messages.js";
import { convertMessagesRequestToChat } from "./convert-messages-request-to-chat.js";

const opts = { upstreamModel: "gpt-up" };
const base = (extra: Partial<MessagesRequest> = {}): MessagesRequest => ({
  model: "client-model",
  max_tokens: 256,
  messages: [{ role: "user", content: "Hi" }],
  ...extra,
});
const params = (r: { warnings: { param: string }[] }) => r.warnings.map((w) => w.param);

describe("text and parameters", () => {
  test("system blocks → one system message first; max_tokens → max_completion_tokens; stream asks for usage", () => {
    const r = convertMessagesRequestToChat(
      base({
        system: [
          { type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } },
          { type: "text", text: "Use French." },
        ],
        stream: true,
        stop_sequences: ["END"],
        temperature: 0.3,
      }),
      opts,
    );
    expect(r.body).toEqual({
      model: "gpt-up",
      messages: [
        { role: "system", content: "Be brief.\n\nUse French." },
        { role: "user", content: "Hi" },
      ],
      max_completion_tokens: 256,
      temperature: 0.3,
      stop: ["END"],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  test("max_tokens field can be chosen for vendors that only read max_tokens", () => {
    const r = convertMessagesRequestToChat(base(), { ...opts, maxTokensField: "max_tokens" });
    expect(r.body.max_tokens).toBe(256);
    expect(r.body.max_completion_tokens).toBeUndefined();
  });

  test("top_k has no chat equivalent: warning; more than 4 stop sequences: first 4 and a warning", () => {
    const r = convertMessagesRequestToChat(base({ top_k: 40, stop_sequences: ["a", "b", "c", "d", "e"] }), opts);
    expect(r.body.stop).toEqual(["a", "b", "c", "d"]);
    expect(params(r)).toEqual(["top_k", "stop_sequences"]);
  });

  test("metadata.user_id → user; thinking budget → reasoning_effort; output_config.format → json_schema response_format", () => {
    const schema = { type: "object", properties: { a: { type: "string" } } };
    const r = convertMessagesRequestToChat(
      base({
        metadata: { user_id: "u-9" },
        thinking: { type: "enabled", budget_tokens: 3000 },
        output_config: { format: { type: "json_schema", schema } },
      }),
      opts,
    );
    expect(r.body.user).toBe("u-9");
    expect(r.body.reasoning_effort).toBe("high");
    expect(r.body.response_format).toEqual({ type: "json_schema", json_schema: { name: "response", schema } });
    expect(
      convertMessagesRequestToChat(base({ thinking: { type: "enabled", budget_tokens: 1024 } }), opts).body
        .reasoning_effort,
    ).toBe("low");
    expect(
      convertMessagesRequestToChat(base({ thinking: { type: "adaptive" }, output_config: { effort: "medium" } }), opts)
        .body.reasoning_effort,
    ).toBe("medium");
    expect(
      convertMessagesRequestToChat(base({ thinking: { type: "disabled" } }), opts).body.reasoning_effort,
    ).toBeUndefined();
  });

  test("a chat request survives the pivot: chat-only parameters are restored exactly", () => {
    const chat: ChatRequest = {
      model: "client",
      messages: [
        { role: "system", content: "S" },
        { role: "user", content: "Q" },
      ],
      seed: 42,
      frequency_penalty: 0.4,
      presence_penalty: -0.2,
      logit_bias: { "1": 5 },
      logprobs: true,
      top_logprobs: 3,
      user: "end-user",
      response_format: { type: "json_object" },
      reasoning_effort: "minimal",
      stream: true,
      stream_options: { include_usage: false, include_obfuscation: false },
      max_completion_tokens: 2000,
      temperature: 0.7,
      n: 1,
    };
    const pivot = convertChatRequestToMessages(chat, { defaultMaxTokens: 4096, target: "chat" }).request;
    const back = convertMessagesRequestToChat(pivot, opts).body;
    expect(back).toEqual({
      model: "gpt-up",
      messages: [
        { role: "system", content: "S" },
        { role: "user", content: "Q" },
      ],
      max_completion_tokens: 2000,
      temperature: 0.7,
      stream: true,
      stream_options: { include_usage: true, include_obfuscation: false },
      reasoning_effort: "minimal",
      response_format: { type: "json_object" },
      user: "end-user",
      seed: 42,
      frequency_penalty: 0.4,
      presence_penalty: -0.2,
      logit_bias: { "1": 5 },
      logprobs: true,
      top_logprobs: 3,
      n: 1,
    });
  });

  test("messages-only fields are warned about (service_tier, container, cache_control)", () => {
    const r = convertMessagesRequestToChat(
      base({
        service_tier: "auto",
        container: "c1",
        messages: [{ role: "user", content: [{ type: "text", text: "x", cache_control: { type: "ephemeral" } }] }],
      }),
      opts,
    );
    expect(params(r).sort()).toEqual(["cache_control", "container", "service_tier"]);
  });
});

describe("tools", () => {
  const tools: MessagesRequest["tools"] = [
    {
      name: "get_weather",
      description: "Weather",
      input_schema: { type: "object", properties: { city: { type: "string" } } },
    },
    { type: "web_search_20250305", name: "web_search" },
  ];

  test("definitions → functions; server tools warned; tool_choice forms; disable_parallel_tool_use → parallel_tool_calls false", () => {
    const r = convertMessagesRequestToChat(
      base({ tools, tool_choice: { type: "any", disable_parallel_tool_use: true } }),
      opts,
    );
    expect(r.body.tools).toEqual([
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "Weather",
          parameters: { type: "object", properties: { city: { type: "string" } } },
        },
      },
    ]);
    expect(r.body.tool_choice).toBe("required");
    expect(r.body.parallel_tool_calls).toBe(false);
    expect(params(r)).toEqual(["tools[1]"]);
    expect(
      convertMessagesRequestToChat(base({ tools, tool_choice: { type: "tool", name: "get_weather" } }), opts).body
        .tool_choice,
    ).toEqual({
      type: "function",
      function: { name: "get_weather" },
    });
    expect(convertMessagesRequestToChat(base({ tools, tool_choice: { type: "none" } }), opts).body.tool_choice).toBe(
      "none",
    );
    expect(convertMessagesRequestToChat(base({ tools, tool_choice: { type: "auto" } }), opts).body.tool_choice).toBe(
      "auto",
    );
  });

  test("a name over 64 characters is shortened and the mapping returned", () => {
    const long = "mcp__some_server__a_tool_with_an_extremely_long_descriptive_name_indeed";
    const r = convertMessagesRequestToChat(base({ tools: [{ name: long, input_schema: { type: "object" } }] }), opts);
    const sent = (r.body.tools![0] as { function: { name: string } }).function.name;
    expect(sent.length).toBe(64);
    expect(sent).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(r.toolNames).toEqual({ [sent]: long });
  });

  test("tool_use → tool_calls (content null); tool_result → one tool message each, before the user's text; is_error prefixes the text", () => {
    const r = convertMessagesRequestToChat(
      base({
        messages: [
          { role: "user", content: "Weather and time?" },
          {
            role: "assistant",
            content: [
              { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
              { type: "tool_use", id: "toolu_2", name: "now", input: {} },
            ],
          },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "18C" }] },
              { type: "tool_result", tool_use_id: "toolu_2", content: "clock broken", is_error: true },
              { type: "text", text: "Thanks" },
            ],
          },
        ],
      }),
      opts,
    );
    expect(r.body.messages).toEqual([
      { role: "user", content: "Weather and time?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
          { id: "toolu_2", type: "function", function: { name: "now", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "toolu_1", content: "18C" },
      { role: "tool", tool_call_id: "toolu_2", content: "Error: clock broken" },
      { role: "user", content: "Thanks" },
    ]);
  });

  test("an image inside a tool result goes in a following user message (tool messages are text only)", () => {
    const r = convertMessagesRequestToChat(
      base({
        messages: [
          { role: "user", content: "shot?" },
          { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "screenshot", input: {} }] },
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                tool_use_id: "t1",
                content: [
                  { type: "text", text: "here" },
                  { type: "image", source: { type: "base64", media_type: "image/png", data: "AAA" } },
                ],
              },
            ],
          },
        ],
      }),
      opts,
    );
    expect(r.body.messages.slice(2)).toEqual([
      { role: "tool", tool_call_id: "t1", content: "here" },
      { role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAA" } }] },
    ]);
  });
});

describe("images, documents, thinking", () => {
  test("images → data URL / http URL; PDF → file part; text document → text", () => {
    const r = convertMessagesRequestToChat(
      base({
        messages: [
          {
            role: "user",
            content: [
              { type: "image", source: { type: "base64", media_type: "image/webp", data: "UklG" } },
              { type: "image", source: { type: "url", url: "https://x.test/a.png" } },
              {
                type: "document",
                source: { type: "base64", media_type: "application/pdf", data: "JVBE" },
                title: "r.pdf",
              },
              { type: "document", source: { type: "text", media_type: "text/plain", data: "body" }, title: "Notes" },
              { type: "text", text: "Summarize" },
            ],
          },
        ],
      }),
      opts,
    );
    expect(r.body.messages[0]).toEqual({
      role: "user",
      content: [
        { type: "image_url", image_url: { url: "data:image/webp;base64,UklG" } },
        { type: "image_url", image_url: { url: "https://x.test/a.png" } },
        { type: "file", file: { file_data: "data:application/pdf;base64,JVBE", filename: "r.pdf" } },
        { type: "text", text: "Notes\n\nbody" },
        { type: "text", text: "Summarize" },
      ],
    });
  });

  test("a file-id image source is a 400", () => {
    expect(() =>
      convertMessagesRequestToChat(
        base({ messages: [{ role: "user", content: [{ type: "image", source: { type: "file", file_id: "f1" } }] }] }),
        opts,
      ),
    ).toThrow(GatewayError);
  });

  test("signed thinking blocks are not sent (warning); unsigned ones go back as reasoning_content", () => {
    const r = convertMessagesRequestToChat(
      base({
        messages: [
          { role: "user", content: "q" },
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "deep", signature: "EqQB" },
              { type: "text", text: "a" },
            ],
          },
          { role: "user", content: "q2" },
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "from deepseek", signature: "" },
              { type: "text", text: "b" },
            ],
          },
          { role: "user", content: "q3" },
        ],
      }),
      opts,
    );
    expect(r.body.messages[1]).toEqual({ role: "assistant", content: "a" });
    expect(r.body.messages[3]).toEqual({ role: "assistant", content: "b", reasoning_content: "from deepseek" });
    expect(params(r)).toEqual(["thinking"]);
  });
});

describe("reasoning support", () => {
  test("a model that does not reason gets no reasoning_effort, and a warning", () => {
    const r = convertMessagesRequestToChat(
      base({ thinking: { type: "enabled", budget_tokens: 2048 }, max_tokens: 4000 }),
      { ...opts, supportsReasoning: false },
    );
    expect(r.body.reasoning_effort).toBeUndefined();
    expect(params(r)).toEqual(["thinking"]);
  });
});
