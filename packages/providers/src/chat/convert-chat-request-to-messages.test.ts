import { describe, expect, test } from "bun:test";
import type { ChatRequest } from "@turnpike/schema";
import { GatewayError } from "../errors.js";
import { convertChatRequestToMessages } from "./convert-chat-request-to-messages.js";

const opts = { defaultMaxTokens: 4096 };
const base = (extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: "client-model",
  messages: [{ role: "user", content: "Hi" }],
  ...extra,
});
const params = (r: { warnings: { param: string }[] }) => r.warnings.map((w) => w.param);

function expect400(fn: () => unknown, param: string, text: string): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(GatewayError);
    const err = e as GatewayError;
    expect(err.status).toBe(400);
    expect(err.type).toBe("invalid_request_error");
    expect(err.param).toBe(param);
    expect(err.message).toContain(text);
    return;
  }
  throw new Error("expected a 400");
}

describe("text, system, multi-turn", () => {
  test("system and developer messages anywhere are joined in order; a late one is warned about", () => {
    const r = convertChatRequestToMessages(
      base({
        messages: [
          { role: "system", content: "Be brief." },
          { role: "developer", content: [{ type: "text", text: "Answer in French." }] },
          { role: "user", content: "Hi" },
          { role: "assistant", content: "Salut." },
          { role: "system", content: "Now English." },
          { role: "user", content: "Again" },
        ],
      }),
      opts,
    );
    expect(r.request.system).toBe("Be brief.\n\nAnswer in French.\n\nNow English.");
    expect(r.request.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Hi" }] },
      { role: "assistant", content: [{ type: "text", text: "Salut." }] },
      { role: "user", content: [{ type: "text", text: "Again" }] },
    ]);
    expect(params(r)).toEqual(["messages[4].role"]);
  });

  test("max tokens: max_completion_tokens, else max_tokens, else the default", () => {
    expect(
      convertChatRequestToMessages(base({ max_completion_tokens: 100, max_tokens: 50 }), opts).request.max_tokens,
    ).toBe(100);
    expect(convertChatRequestToMessages(base({ max_tokens: 50 }), opts).request.max_tokens).toBe(50);
    expect(convertChatRequestToMessages(base(), opts).request.max_tokens).toBe(4096);
  });

  test("temperature > 1 is clamped with a warning; top_p with temperature is dropped with a warning", () => {
    const r = convertChatRequestToMessages(base({ temperature: 1.5, top_p: 0.9 }), opts);
    expect(r.request.temperature).toBe(1);
    expect(r.request.top_p).toBeUndefined();
    expect(params(r)).toEqual(["temperature", "top_p"]);
    const alone = convertChatRequestToMessages(base({ top_p: 0.9 }), opts);
    expect(alone.request.top_p).toBe(0.9);
    expect(alone.warnings).toEqual([]);
    const nulls = convertChatRequestToMessages(base({ temperature: null, top_p: null, stream: null }), opts);
    expect(nulls.request).toEqual({
      model: "client-model",
      max_tokens: 4096,
      messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
    });
  });

  test("for a generateContent target the sampling values are kept as sent", () => {
    const r = convertChatRequestToMessages(base({ temperature: 1.5, top_p: 0.9, seed: 3 }), {
      ...opts,
      target: "generate",
    });
    expect(r.request.temperature).toBe(1.5);
    expect(r.request.top_p).toBe(0.9);
    expect(r.warnings).toEqual([]);
  });

  test("stop: string → [string]; whitespace-only sequences dropped with a warning", () => {
    expect(convertChatRequestToMessages(base({ stop: "END" }), opts).request.stop_sequences).toEqual(["END"]);
    const r = convertChatRequestToMessages(base({ stop: ["END", "\n", ""] }), opts);
    expect(r.request.stop_sequences).toEqual(["END"]);
    expect(params(r)).toEqual(["stop"]);
  });

  test("chat-only parameters ride in turnpike.chat, with a warning each for a messages upstream", () => {
    const r = convertChatRequestToMessages(
      base({
        seed: 7,
        frequency_penalty: 0.5,
        presence_penalty: 0,
        logit_bias: { "50256": -100 },
        logprobs: true,
        top_logprobs: 2,
        user: "u-1",
        response_format: { type: "json_object" },
        stream: true,
        stream_options: { include_usage: true },
      }),
      opts,
    );
    expect(r.request.turnpike).toEqual({
      chat: {
        seed: 7,
        frequency_penalty: 0.5,
        presence_penalty: 0,
        logit_bias: { "50256": -100 },
        logprobs: true,
        top_logprobs: 2,
        user: "u-1",
        response_format: { type: "json_object" },
        stream_options: { include_usage: true },
      },
    });
    expect(r.request.metadata).toEqual({ user_id: "u-1" });
    expect(r.request.stream).toBe(true);
    expect(params(r).sort()).toEqual([
      "frequency_penalty",
      "logit_bias",
      "logprobs",
      "response_format",
      "seed",
      "top_logprobs",
    ]);
  });

  test("response_format json_schema → output_config.format", () => {
    const schema = { type: "object", properties: { city: { type: "string" } } };
    const r = convertChatRequestToMessages(
      base({ response_format: { type: "json_schema", json_schema: { name: "city", schema } } }),
      opts,
    );
    expect(r.request.output_config).toEqual({ format: { type: "json_schema", schema } });
    expect(r.warnings).toEqual([]);
  });

  test("n > 1 toward a non-chat upstream is a 400", () => {
    expect400(() => convertChatRequestToMessages(base({ n: 3 }), opts), "n", "only n=1");
    expect(convertChatRequestToMessages(base({ n: 1 }), opts).warnings).toEqual([]);
  });

  test("unknown and unsupported top-level fields are warned about, never dropped silently", () => {
    const r = convertChatRequestToMessages({ ...base(), store: true, enable_thinking: true } as ChatRequest, opts);
    expect(params(r)).toEqual(["store", "enable_thinking"]);
  });

  test("an empty assistant message is omitted with a warning; message names are warned about", () => {
    const r = convertChatRequestToMessages(
      base({
        messages: [
          { role: "user", content: "a", name: "bob" },
          { role: "assistant", content: "" },
          { role: "user", content: "b" },
        ],
      }),
      opts,
    );
    expect(r.request.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      },
    ]);
    expect(params(r)).toEqual(["messages[0].name", "messages[1]"]);
  });
});

describe("tools", () => {
  const tools: ChatRequest["tools"] = [
    {
      type: "function",
      function: {
        name: "get_weather",
        description: "Weather",
        parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
    },
    { type: "function", function: { name: "now" } },
  ];

  test("definitions, tool_choice forms and parallel_tool_calls", () => {
    const r = convertChatRequestToMessages(base({ tools, tool_choice: "required", parallel_tool_calls: false }), opts);
    expect(r.request.tools).toEqual([
      {
        name: "get_weather",
        description: "Weather",
        input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
      { name: "now", input_schema: { type: "object" } },
    ]);
    expect(r.request.tool_choice).toEqual({ type: "any", disable_parallel_tool_use: true });
    expect(convertChatRequestToMessages(base({ tools, tool_choice: "auto" }), opts).request.tool_choice).toEqual({
      type: "auto",
    });
    expect(convertChatRequestToMessages(base({ tools, tool_choice: "none" }), opts).request.tool_choice).toEqual({
      type: "none",
    });
    expect(
      convertChatRequestToMessages(base({ tools, tool_choice: { type: "function", function: { name: "now" } } }), opts)
        .request.tool_choice,
    ).toEqual({
      type: "tool",
      name: "now",
    });
    expect(convertChatRequestToMessages(base({ tools, parallel_tool_calls: false }), opts).request.tool_choice).toEqual(
      { type: "auto", disable_parallel_tool_use: true },
    );
  });

  test("allowed_tools offers only the subset", () => {
    const r = convertChatRequestToMessages(
      base({
        tools,
        tool_choice: {
          type: "allowed_tools",
          allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "now" } }] },
        },
      }),
      opts,
    );
    expect(r.request.tools!.map((t) => t.name)).toEqual(["now"]);
    expect(r.request.tool_choice).toEqual({ type: "any" });
  });

  test("a named tool_choice for a function not in tools is a 400", () => {
    expect400(
      () =>
        convertChatRequestToMessages(
          base({ tools, tool_choice: { type: "function", function: { name: "nope" } } }),
          opts,
        ),
      "tool_choice",
      '"nope"',
    );
  });

  test("assistant tool calls and tool results: consecutive tool messages merge into one user turn, results before text", () => {
    const r = convertChatRequestToMessages(
      base({
        tools,
        messages: [
          { role: "user", content: "Weather in Paris and the time?" },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
              { id: "functions.now:1", type: "function", function: { name: "now", arguments: "" } },
            ],
          },
          { role: "tool", tool_call_id: "call_1", content: "18C" },
          { role: "tool", tool_call_id: "functions.now:1", content: [{ type: "text", text: "12:00" }] },
          { role: "user", content: "Thanks" },
        ],
      }),
      opts,
    );
    expect(r.request.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather in Paris and the time?" }] },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } },
          { type: "tool_use", id: "functions_now_1", name: "now", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "call_1", content: "18C" },
          { type: "tool_result", tool_use_id: "functions_now_1", content: "12:00" },
          { type: "text", text: "Thanks" },
        ],
      },
    ]);
  });

  test('a tool-only assistant turn with content "" becomes tool_use blocks only (trap 11)', () => {
    const r = convertChatRequestToMessages(
      base({
        messages: [
          { role: "user", content: "x" },
          {
            role: "assistant",
            content: "",
            tool_calls: [{ id: "c", type: "function", function: { name: "now", arguments: "{}" } }],
          },
          { role: "tool", tool_call_id: "c", content: "" },
        ],
      }),
      opts,
    );
    expect(r.request.messages[1]).toEqual({
      role: "assistant",
      content: [{ type: "tool_use", id: "c", name: "now", input: {} }],
    });
    expect(r.request.messages[2]).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "c" }] });
  });

  test("invalid JSON arguments are kept under _raw_arguments", () => {
    const r = convertChatRequestToMessages(
      base({
        messages: [
          { role: "user", content: "x" },
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "c", type: "function", function: { name: "now", arguments: "{not json" } }],
          },
          { role: "tool", tool_call_id: "c", content: "err" },
        ],
      }),
      opts,
    );
    expect(r.request.messages[1]!.content).toEqual([
      { type: "tool_use", id: "c", name: "now", input: { _raw_arguments: "{not json" } },
    ]);
  });

  test("a tool message without a matching call is a 400 (trap 10)", () => {
    expect400(
      () =>
        convertChatRequestToMessages(
          base({
            messages: [
              { role: "user", content: "x" },
              { role: "tool", tool_call_id: "ghost", content: "r" },
            ],
          }),
          opts,
        ),
      "messages[1].tool_call_id",
      '"ghost"',
    );
  });

  test("custom tools are a 400", () => {
    expect400(
      () => convertChatRequestToMessages(base({ tools: [{ type: "custom", custom: { name: "grammar" } }] }), opts),
      "tools[0]",
      "custom",
    );
  });

  test("legacy functions / function_call / function role", () => {
    const r = convertChatRequestToMessages(
      base({
        functions: [{ name: "now" }],
        function_call: { name: "now" },
        messages: [
          { role: "user", content: "time?" },
          { role: "assistant", content: null, function_call: { name: "now", arguments: "{}" } },
          { role: "function", name: "now", content: "12:00" },
        ],
      }),
      opts,
    );
    expect(r.request.tools).toEqual([{ name: "now", input_schema: { type: "object" } }]);
    expect(r.request.tool_choice).toEqual({ type: "tool", name: "now" });
    const call = r.request.messages[1]!.content[0] as { type: string; id: string };
    expect(call.type).toBe("tool_use");
    expect(r.request.messages[2]!.content).toEqual([{ type: "tool_result", tool_use_id: call.id, content: "12:00" }]);
  });
});

describe("images, files, audio", () => {
  test("data URL → base64 source; http URL → url source; image/jpg is read as image/jpeg", () => {
    const r = convertChatRequestToMessages(
      base({
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "What is this?" },
              { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
              { type: "image_url", image_url: { url: "https://example.com/cat.jpg", detail: "low" } },
              { type: "image_url", image_url: { url: "data:image/jpg;base64,/9j/4AA=" } },
            ],
          },
        ],
      }),
      opts,
    );
    expect(r.request.messages[0]!.content).toEqual([
      { type: "text", text: "What is this?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
      { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
      { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "/9j/4AA=" } },
    ]);
  });

  test("an image type outside jpeg/png/gif/webp is a 400 that names the type", () => {
    expect400(
      () =>
        convertChatRequestToMessages(
          base({
            messages: [
              { role: "user", content: [{ type: "image_url", image_url: { url: "data:image/bmp;base64,Qk0=" } }] },
            ],
          }),
          opts,
        ),
      "messages[0].content[0].image_url.url",
      'image media type "image/bmp" is not supported',
    );
  });

  test("file parts: PDF → document; text/plain → text document; file_id → 400", () => {
    const r = convertChatRequestToMessages(
      base({
        messages: [
          {
            role: "user",
            content: [
              { type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" } },
              { type: "file", file: { file_data: `data:text/plain;base64,${btoa("hello")}` } },
            ],
          },
        ],
      }),
      opts,
    );
    expect(r.request.messages[0]!.content).toEqual([
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" }, title: "a.pdf" },
      { type: "document", source: { type: "text", media_type: "text/plain", data: "hello" } },
    ]);
    expect400(
      () =>
        convertChatRequestToMessages(
          base({ messages: [{ role: "user", content: [{ type: "file", file: { file_id: "file-abc" } }] }] }),
          opts,
        ),
      "messages[0].content[0].file.file_id",
      "file ids",
    );
  });

  test("audio input is a 400", () => {
    expect400(
      () =>
        convertChatRequestToMessages(
          base({
            messages: [
              { role: "user", content: [{ type: "input_audio", input_audio: { data: "AAA", format: "wav" } }] },
            ],
          }),
          opts,
        ),
      "messages[0].content[0]",
      "audio",
    );
  });
});

describe("reasoning", () => {
  test("reasoning_effort → thinking budget buckets; max_tokens raised above the budget", () => {
    const r = convertChatRequestToMessages(base({ reasoning_effort: "medium", max_completion_tokens: 1000 }), opts);
    expect(r.request.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(r.request.max_tokens).toBe(3048);
    expect(params(r)).toEqual(["max_tokens"]);
    expect(convertChatRequestToMessages(base({ reasoning_effort: "low" }), opts).request.thinking).toEqual({
      type: "enabled",
      budget_tokens: 1024,
    });
    expect(convertChatRequestToMessages(base({ reasoning_effort: "high" }), opts).request.thinking).toEqual({
      type: "enabled",
      budget_tokens: 4096,
    });
    expect(convertChatRequestToMessages(base({ reasoning_effort: "minimal" }), opts).request.thinking).toEqual({
      type: "enabled",
      budget_tokens: 1024,
    });
    expect(convertChatRequestToMessages(base({ reasoning_effort: "none" }), opts).request.thinking).toEqual({
      type: "disabled",
    });
  });

  test("with thinking on, a non-default temperature and a low top_p are dropped with warnings", () => {
    const r = convertChatRequestToMessages(base({ reasoning_effort: "low", temperature: 0.2 }), opts);
    expect(r.request.temperature).toBeUndefined();
    expect(params(r)).toEqual(["temperature"]);
    const p = convertChatRequestToMessages(base({ reasoning_effort: "low", top_p: 0.5 }), opts);
    expect(p.request.top_p).toBeUndefined();
    expect(params(p)).toEqual(["top_p"]);
  });

  test("forced tool_choice + reasoning: thinking is dropped with a warning, the forced tool kept", () => {
    const r = convertChatRequestToMessages(
      base({
        reasoning_effort: "high",
        tools: [{ type: "function", function: { name: "now" } }],
        tool_choice: "required",
      }),
      opts,
    );
    expect(r.request.thinking).toBeUndefined();
    expect(r.request.tool_choice).toEqual({ type: "any" });
    expect(params(r)).toEqual(["reasoning_effort"]);
    expect(r.request.turnpike?.chat?.reasoning_effort).toBe("high");
  });

  test("reasoning_content in history is not replayed (it would be an unsigned thinking block): warning", () => {
    const r = convertChatRequestToMessages(
      base({
        messages: [
          { role: "user", content: "a" },
          { role: "assistant", content: "b", reasoning_content: "thought" },
          { role: "user", content: "c" },
        ],
      }),
      opts,
    );
    expect(r.request.messages[1]).toEqual({ role: "assistant", content: [{ type: "text", text: "b" }] });
    expect(params(r)).toEqual(["messages[1].reasoning_content"]);
  });
});
