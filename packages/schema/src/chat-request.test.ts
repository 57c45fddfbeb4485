import { describe, expect, test } from "bun:test";
import { type ChatRequest, validateChatRequest } from "./index.js";

const base = { model: "beta-4o", messages: [{ role: "user", content: "Hello" }] };
const withBody = (extra: Record<string, unknown>): Record<string, unknown> => ({ ...base, ...extra });
const withMessages = (...messages: unknown[]): Record<string, unknown> => withBody({ messages });

function issuesOf(body: unknown): { path: string; message: string }[] {
  const r = validateChatRequest(body);
  if (r.ok) throw new Error(`expected the body to fail: ${JSON.stringify(body)}`);
  return r.issues;
}

describe("valid chat requests", () => {
  const toolCall = { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } };
  const valid: [string, Record<string, unknown>][] = [
    ["minimal", base],
    [
      "every message role",
      withMessages(
        { role: "system", content: "Be brief.", name: "sys" },
        { role: "developer", content: [{ type: "text", text: "Use metric units." }] },
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "high" } },
            { type: "input_audio", input_audio: { data: "UklGR", format: "wav" } },
            { type: "file", file: { file_id: "file-1", filename: "a.pdf" } },
          ],
        },
        { role: "assistant", content: null, tool_calls: [toolCall], reasoning_content: "Need weather." },
        { role: "tool", tool_call_id: "call_1", content: "18°C" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "18°C." },
            { type: "refusal", refusal: "No more." },
          ],
          refusal: null,
        },
        { role: "function", name: "get_weather", content: "18°C" },
        { role: "assistant", content: "ok", function_call: { name: "f", arguments: "{}" } },
      ),
    ],
    [
      "assistant without content but with tool_calls",
      withMessages({ role: "user", content: "x" }, { role: "assistant", tool_calls: [toolCall] }),
    ],
    [
      "sampling and limits",
      withBody({
        temperature: 2,
        top_p: 0.5,
        n: 2,
        max_tokens: 100,
        max_completion_tokens: 200,
        seed: 42,
        frequency_penalty: -2,
        presence_penalty: 2,
        logit_bias: { "50256": -100 },
        logprobs: true,
        top_logprobs: 20,
        user: "u-1",
        reasoning_effort: "minimal",
      }),
    ],
    [
      "null for unset parameters (LangChain style)",
      withBody({ temperature: null, top_p: null, n: null, max_tokens: null, stop: null, seed: null, stream: null }),
    ],
    ["stop as a string", withBody({ stop: "\n" })],
    ["stop as four strings", withBody({ stop: ["a", "b", "c", "d"] })],
    [
      "streaming with usage",
      withBody({ stream: true, stream_options: { include_usage: true, include_obfuscation: false } }),
    ],
    ["stream_options null without stream", withBody({ stream_options: null })],
    [
      "tools and every tool_choice form",
      withBody({
        tools: [
          {
            type: "function",
            function: { name: "get_weather", description: "d", parameters: { type: "object" }, strict: true },
          },
          { type: "custom", custom: { name: "sql", format: { type: "text" } } },
        ],
        parallel_tool_calls: false,
        tool_choice: { type: "function", function: { name: "get_weather" } },
      }),
    ],
    ["tool_choice none", withBody({ tool_choice: "none" })],
    ["tool_choice required", withBody({ tool_choice: "required" })],
    [
      "tool_choice allowed_tools",
      withBody({
        tool_choice: {
          type: "allowed_tools",
          allowed_tools: { mode: "auto", tools: [{ type: "function", function: { name: "f" } }] },
        },
      }),
    ],
    ["tool_choice custom", withBody({ tool_choice: { type: "custom", custom: { name: "sql" } } })],
    ["response_format text", withBody({ response_format: { type: "text" } })],
    ["response_format json_object", withBody({ response_format: { type: "json_object" } })],
    [
      "response_format json_schema",
      withBody({
        response_format: {
          type: "json_schema",
          json_schema: { name: "city", schema: { type: "object" }, strict: true },
        },
      }),
    ],
    [
      "metadata, store, modalities, service_tier",
      withBody({ metadata: { team: "a" }, store: true, modalities: ["text"], service_tier: "flex" }),
    ],
    [
      "legacy functions",
      withBody({ functions: [{ name: "f", parameters: { type: "object" } }], function_call: { name: "f" } }),
    ],
    ["vendor extra fields survive", withBody({ reasoning_split: true, top_k: 20, extra_body: { x: 1 } })],
  ];
  test.each(valid)("%s", (_name, body) => {
    const r = validateChatRequest(body);
    expect(r.ok ? [] : r.issues).toEqual([]);
  });

  test("the value is the body itself, typed", () => {
    const r = validateChatRequest(base);
    if (!r.ok) throw new Error("expected ok");
    const value: ChatRequest = r.value;
    expect(value.messages[0]?.role).toBe("user");
  });
});

describe("chat completions rules", () => {
  test("temperature is between 0 and 2", () => {
    expect(issuesOf(withBody({ temperature: 2.5 }))).toEqual([
      { path: "temperature", message: "temperature: must be between 0 and 2, got 2.5" },
    ]);
  });

  test("a top-level system field is rejected with the fix", () => {
    expect(issuesOf(withBody({ system: "Be brief." }))).toEqual([
      {
        path: "system",
        message:
          'system: not a chat completions field, got "Be brief."; send the system prompt as the first message, {"role": "system", "content": "…"}',
      },
    ]);
  });

  test("stream_options only with stream: true", () => {
    expect(issuesOf(withBody({ stream_options: { include_usage: true } }))).toEqual([
      { path: "stream_options", message: "stream_options: only allowed when stream is true, got stream not set" },
    ]);
    expect(issuesOf(withBody({ stream: false, stream_options: { include_usage: true } }))).toEqual([
      { path: "stream_options", message: "stream_options: only allowed when stream is true, got stream false" },
    ]);
  });

  test("n is at least 1", () => {
    expect(issuesOf(withBody({ n: 0 }))).toEqual([{ path: "n", message: "n: must be at least 1, got 0" }]);
  });

  test("stop has at most 4 sequences", () => {
    expect(issuesOf(withBody({ stop: ["a", "b", "c", "d", "e"] }))).toEqual([
      { path: "stop", message: "stop: must have at most 4 items, got 5" },
    ]);
    expect(issuesOf(withBody({ stop: 5 }))).toEqual([
      { path: "stop", message: "stop: must be a string, array of strings or null, got 5" },
    ]);
  });

  test("an unknown role is named", () => {
    expect(issuesOf(withMessages({ role: "bot", content: "hi" }))).toEqual([
      {
        path: "messages[0]",
        message:
          'messages[0]: unknown role "bot", expected one of "system", "developer", "user", "assistant", "tool", "function"',
      },
    ]);
  });

  test("the message's own fields are checked once its role is known", () => {
    expect(issuesOf(withMessages({ role: "tool", content: "18°C" }))).toEqual([
      { path: "messages[0].tool_call_id", message: "messages[0].tool_call_id: required string, got nothing" },
    ]);
    expect(
      issuesOf(withMessages({ role: "user", content: [{ type: "image_url", image_url: "https://x/a.png" }] })),
    ).toEqual([
      {
        path: "messages[0].content[0].image_url",
        message: 'messages[0].content[0].image_url: must be an object, got "https://x/a.png"',
      },
    ]);
    // An unknown part type is open (passthrough forwards it; a translation refuses it, naming it).
    expect(
      validateChatRequest(withMessages({ role: "user", content: [{ type: "image", url: "https://x/a.png" }] })).ok,
    ).toBe(true);
  });

  test("tool messages are text only", () => {
    const [issue] = issuesOf(
      withMessages({
        role: "tool",
        tool_call_id: "c",
        content: [{ type: "image_url", image_url: { url: "https://x" } }],
      }),
    );
    expect(issue).toEqual({
      path: "messages[0].content[0].type",
      message: 'messages[0].content[0].type: must be "text", got "image_url"',
    });
  });

  test("tool_choice strings and objects", () => {
    expect(issuesOf(withBody({ tool_choice: "any" }))).toEqual([
      { path: "tool_choice", message: 'tool_choice: must be one of "none", "auto", "required", got "any"' },
    ]);
    expect(issuesOf(withBody({ tool_choice: { type: "function" } }))).toEqual([
      { path: "tool_choice.function", message: "tool_choice.function: required object, got nothing" },
    ]);
  });

  test("function names follow the vendor's pattern", () => {
    expect(issuesOf(withBody({ tools: [{ type: "function", function: { name: "get weather" } }] }))).toEqual([
      {
        path: "tools[0].function.name",
        message: 'tools[0].function.name: must be 1 to 64 characters of a-z, A-Z, 0-9, _ or -, got "get weather"',
      },
    ]);
  });

  test("response_format forms", () => {
    expect(issuesOf(withBody({ response_format: { type: "json" } }))).toEqual([
      {
        path: "response_format",
        message:
          'response_format: unknown response_format type "json", expected one of "text", "json_object", "json_schema"',
      },
    ]);
    expect(issuesOf(withBody({ response_format: { type: "json_schema" } }))).toEqual([
      { path: "response_format.json_schema", message: "response_format.json_schema: required object, got nothing" },
    ]);
  });

  test("ranges of penalties, logit_bias and top_logprobs", () => {
    expect(issuesOf(withBody({ frequency_penalty: -3, logit_bias: { "50256": 101 }, top_logprobs: 21 }))).toEqual([
      { path: "frequency_penalty", message: "frequency_penalty: must be between -2 and 2, got -3" },
      { path: 'logit_bias["50256"]', message: 'logit_bias["50256"]: must be between -100 and 100, got 101' },
      { path: "top_logprobs", message: "top_logprobs: must be between 0 and 20, got 21" },
    ]);
  });

  test("reasoning_effort is open: a newer value validates, a non-string does not", () => {
    expect(validateChatRequest(withBody({ reasoning_effort: "huge" })).ok).toBe(true);
    expect(issuesOf(withBody({ reasoning_effort: 2 }))).toEqual([
      { path: "reasoning_effort", message: "reasoning_effort: must be a string or null, got 2" },
    ]);
  });

  test("schema problems and format rules are reported together", () => {
    expect(issuesOf({ model: "m", messages: [], system: "x", temperature: -1 }).map((i) => i.path)).toEqual([
      "messages",
      "temperature",
      "system",
    ]);
  });
});
