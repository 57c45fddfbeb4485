import { describe, expect, test } from "bun:test";
import { type MessagesRequest, validateMessagesRequest } from "./index.js";

const base = { model: "alpha-sonnet-4-6", max_tokens: 1024, messages: [{ role: "user", content: "Hello" }] };
const withBody = (extra: Record<string, unknown>): Record<string, unknown> => ({ ...base, ...extra });
const userBlocks = (...content: unknown[]): Record<string, unknown> =>
  withBody({ messages: [{ role: "user", content }] });

/** The issues of a body that must fail, as `path → message` pairs. */
function issuesOf(body: unknown): { path: string; message: string }[] {
  const r = validateMessagesRequest(body);
  if (r.ok) throw new Error(`expected the body to fail: ${JSON.stringify(body)}`);
  return r.issues;
}

describe("valid messages requests", () => {
  const valid: [string, Record<string, unknown>][] = [
    ["minimal", base],
    ["max_tokens 0 (cache warm-up)", withBody({ max_tokens: 0 })],
    ["system string", withBody({ system: "Be brief." })],
    [
      "system text blocks with cache_control",
      withBody({ system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral", ttl: "1h" } }] }),
    ],
    [
      "sampling and stop",
      withBody({
        temperature: 0.2,
        top_k: 40,
        stop_sequences: ["\n\nHuman:"],
        stream: true,
        metadata: { user_id: "u-1" },
        service_tier: "auto",
      }),
    ],
    ["top_p alone", withBody({ top_p: 0.9 })],
    [
      "every input block type",
      withBody({
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "Look", cache_control: { type: "ephemeral" } },
              { type: "image", source: { type: "base64", media_type: "image/webp", data: "UklGR" } },
              { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
              { type: "image", source: { type: "file", file_id: "file_01" } },
              {
                type: "document",
                source: { type: "base64", media_type: "application/pdf", data: "JVBERi0" },
                title: "Spec",
                citations: { enabled: true },
              },
              { type: "document", source: { type: "text", media_type: "text/plain", data: "Plain" } },
              { type: "document", source: { type: "content", content: [{ type: "text", text: "Chunk" }] } },
              { type: "document", source: { type: "url", url: "https://example.com/a.pdf" } },
            ],
          },
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "Let me check.", signature: "EqQB" },
              { type: "redacted_thinking", data: "EmwKAhgB" },
              { type: "text", text: "Checking." },
              { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris" } },
            ],
          },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "toolu_01", content: "18°C" },
              { type: "tool_result", tool_use_id: "toolu_02", content: [{ type: "text", text: "ok" }], is_error: true },
              { type: "tool_result", tool_use_id: "toolu_03" },
            ],
          },
          { role: "assistant", content: "Prefill" },
        ],
      }),
    ],
    [
      "server-tool blocks pass through",
      userBlocks(
        { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "x" } },
        { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] },
        { type: "bash_code_execution_tool_result", tool_use_id: "srvtoolu_2", content: {} },
        { type: "search_result", source: "https://x", title: "X", content: [{ type: "text", text: "x" }] },
      ),
    ],
    [
      "client and server tools with every tool_choice form",
      withBody({
        tools: [
          {
            name: "get_weather",
            description: "Weather",
            input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
          },
          {
            type: "custom",
            name: "noop",
            input_schema: { type: "object" },
            strict: true,
            cache_control: { type: "ephemeral" },
          },
          { type: "web_search_20250305", name: "web_search", max_uses: 3 },
          { type: "bash_20250124", name: "bash" },
        ],
        tool_choice: { type: "any", disable_parallel_tool_use: true },
      }),
    ],
    ["tool_choice tool", withBody({ tool_choice: { type: "tool", name: "get_weather" } })],
    ["tool_choice none", withBody({ tool_choice: { type: "none" } })],
    [
      "thinking enabled",
      withBody({ max_tokens: 4096, thinking: { type: "enabled", budget_tokens: 1024, display: "omitted" } }),
    ],
    ["thinking adaptive with effort", withBody({ thinking: { type: "adaptive" }, output_config: { effort: "xhigh" } })],
    ["thinking disabled", withBody({ thinking: { type: "disabled" } })],
    ["structured output", withBody({ output_config: { format: { type: "json_schema", schema: { type: "object" } } } })],
    [
      "pass-through fields",
      withBody({
        container: "cntr_1",
        cache_control: { type: "ephemeral" },
        inference_geo: "us",
        service_tier: "standard_only",
      }),
    ],
    ["unknown top-level field survives", withBody({ some_future_field: { a: 1 } })],
    [
      "turnpike.chat extension",
      withBody({
        turnpike: {
          chat: {
            seed: 7,
            response_format: {
              type: "json_schema",
              json_schema: { name: "x", schema: { type: "object" }, strict: true },
            },
            frequency_penalty: 0.5,
            presence_penalty: -0.5,
            logit_bias: { "50256": -100 },
            logprobs: true,
            top_logprobs: 5,
            n: 2,
            user: "u-1",
            parallel_tool_calls: false,
            reasoning_effort: "low",
            stream_options: { include_usage: true },
          },
        },
      }),
    ],
  ];
  test.each(valid)("%s", (_name, body) => {
    const r = validateMessagesRequest(body);
    expect(r.ok ? [] : r.issues).toEqual([]);
  });

  test("the value is the body itself, typed", () => {
    const r = validateMessagesRequest(base);
    if (!r.ok) throw new Error("expected ok");
    const value: MessagesRequest = r.value;
    expect(value).toBe(base as unknown as MessagesRequest); // same object: nothing copied or defaulted
  });
});

describe("messages format rules", () => {
  test("max_tokens is required", () => {
    const { max_tokens: _, ...body } = base;
    expect(issuesOf(body)).toEqual([{ path: "max_tokens", message: "max_tokens: required integer, got nothing" }]);
  });

  test("max_tokens must be a non-negative integer", () => {
    expect(issuesOf(withBody({ max_tokens: 10.5 }))).toEqual([
      { path: "max_tokens", message: "max_tokens: must be an integer, got 10.5" },
    ]);
    expect(issuesOf(withBody({ max_tokens: -1 }))).toEqual([
      { path: "max_tokens", message: "max_tokens: must be at least 0, got -1" },
    ]);
    expect(issuesOf(withBody({ max_tokens: "100" }))).toEqual([
      { path: "max_tokens", message: 'max_tokens: must be an integer, got "100"' },
    ]);
  });

  test("temperature is between 0 and 1", () => {
    expect(issuesOf(withBody({ temperature: 1.5 }))).toEqual([
      { path: "temperature", message: "temperature: must be between 0 and 1, got 1.5" },
    ]);
  });

  test("temperature and top_p are not both set", () => {
    expect(issuesOf(withBody({ temperature: 0.5, top_p: 0.9 }))).toEqual([
      {
        path: "top_p",
        message: "top_p: cannot be combined with temperature, got temperature 0.5 and top_p 0.9; set only one",
      },
    ]);
  });

  test("text blocks are non-empty, wherever they are", () => {
    expect(issuesOf(userBlocks({ type: "text", text: "" }))).toEqual([
      { path: "messages[0].content[0].text", message: 'messages[0].content[0].text: must be non-empty, got ""' },
    ]);
    expect(issuesOf(withBody({ system: [{ type: "text", text: "" }] }))).toEqual([
      { path: "system[0].text", message: 'system[0].text: must be non-empty, got ""' },
    ]);
    expect(
      issuesOf(userBlocks({ type: "tool_result", tool_use_id: "t", content: [{ type: "text", text: "" }] })),
    ).toEqual([
      {
        path: "messages[0].content[0].content[0].text",
        message: 'messages[0].content[0].content[0].text: must be non-empty, got ""',
      },
    ]);
  });

  test("roles are user, assistant or system (mid-conversation system messages); system messages hold text only", () => {
    const agent = withBody({
      messages: [
        { role: "user", content: "Fix the bug" },
        {
          role: "system",
          content: [
            {
              type: "text",
              text: "Available agent types: explore",
              cache_control: { type: "ephemeral", scope: "global" },
            },
          ],
        },
      ],
    });
    expect(validateMessagesRequest(agent).ok).toBe(true);
    expect(issuesOf(withBody({ messages: [{ role: "tool", content: "x" }] }))).toEqual([
      {
        path: "messages[0].role",
        message:
          'messages[0].role: must be one of "user", "assistant", "system", got "tool"; the first system prompt goes in the top-level "system" field',
      },
    ]);
    expect(
      issuesOf(
        withBody({
          messages: [
            { role: "system", content: [{ type: "image", source: { type: "url", url: "https://x.example/a.png" } }] },
          ],
        }),
      ),
    ).toEqual([
      {
        path: "messages[0].content[0].type",
        message: 'messages[0].content[0].type: a system message holds text blocks only, got "image"',
      },
    ]);
  });

  test("an unknown block type is open: it validates (passthrough forwards it, a translation refuses it)", () => {
    expect(validateMessagesRequest(userBlocks({ type: "text", text: "a" }, { type: "imagex", source: {} })).ok).toBe(
      true,
    );
  });

  test("a known block type with a wrong field is still checked as that block", () => {
    const [issue] = issuesOf(userBlocks({ type: "tool_use", id: "t1", name: "f", input: "not an object" }));
    expect(issue?.message).toBe('messages[0].content[0].input: must be an object, got "not an object"');
  });

  test("a block without type", () => {
    const [issue] = issuesOf(userBlocks({ text: "hi" }));
    expect(issue?.path).toBe("messages[0].content[0].type");
    expect(issue?.message).toStartWith('messages[0].content[0].type: required, one of "text", "image"');
    expect(issue?.message).toEndWith(", got nothing");
  });

  test("image media types are the four the format allows", () => {
    expect(
      issuesOf(userBlocks({ type: "image", source: { type: "base64", media_type: "image/bmp", data: "Qk0" } })),
    ).toEqual([
      {
        path: "messages[0].content[0].source.media_type",
        message:
          'messages[0].content[0].source.media_type: must be one of "image/jpeg", "image/png", "image/gif", "image/webp", got "image/bmp"',
      },
    ]);
  });

  test("an unknown image source type", () => {
    expect(issuesOf(userBlocks({ type: "image", source: { type: "path", path: "/tmp/a.png" } }))).toEqual([
      {
        path: "messages[0].content[0].source",
        message:
          'messages[0].content[0].source: unknown image source type "path", expected one of "base64", "url", "file"',
      },
    ]);
  });

  test("content is a string or blocks", () => {
    expect(issuesOf(withBody({ messages: [{ role: "user", content: 42 }] }))).toEqual([
      {
        path: "messages[0].content",
        message: "messages[0].content: must be a string or array of content blocks, got 42",
      },
    ]);
  });

  test("messages is non-empty", () => {
    expect(issuesOf(withBody({ messages: [] }))).toEqual([
      { path: "messages", message: "messages: must have at least 1 item, got 0" },
    ]);
  });

  test("tool_use input is an object", () => {
    expect(
      issuesOf(
        withBody({
          messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: "{}" }] }],
        }),
      ),
    ).toEqual([
      { path: "messages[0].content[0].input", message: 'messages[0].content[0].input: must be an object, got "{}"' },
    ]);
  });

  test("a client tool needs an object input_schema; a custom-typed one too", () => {
    expect(
      issuesOf(withBody({ tools: [{ name: "f" }, { type: "custom", name: "g", input_schema: { type: "array" } }] })),
    ).toEqual([
      { path: "tools[0].input_schema", message: "tools[0].input_schema: required object, got nothing" },
      { path: "tools[1].input_schema.type", message: 'tools[1].input_schema.type: must be "object", got "array"' },
    ]);
  });

  test("tool_choice tool needs a name; unknown tool_choice types are named", () => {
    expect(issuesOf(withBody({ tool_choice: { type: "tool" } }))).toEqual([
      { path: "tool_choice.name", message: "tool_choice.name: required string, got nothing" },
    ]);
    expect(issuesOf(withBody({ tool_choice: { type: "required" } }))).toEqual([
      {
        path: "tool_choice",
        message: 'tool_choice: unknown tool_choice type "required", expected one of "auto", "any", "tool", "none"',
      },
    ]);
    expect(issuesOf(withBody({ tool_choice: "auto" }))).toEqual([
      { path: "tool_choice", message: 'tool_choice: must be an object, got "auto"' },
    ]);
  });

  test("thinking budget: at least 1024 and below max_tokens", () => {
    expect(issuesOf(withBody({ thinking: { type: "enabled", budget_tokens: 512 } }))).toEqual([
      { path: "thinking.budget_tokens", message: "thinking.budget_tokens: must be at least 1024, got 512" },
    ]);
    expect(issuesOf(withBody({ max_tokens: 2000, thinking: { type: "enabled", budget_tokens: 2000 } }))).toEqual([
      {
        path: "thinking.budget_tokens",
        message: "thinking.budget_tokens: must be less than max_tokens (2000), got 2000",
      },
    ]);
    expect(issuesOf(withBody({ thinking: { type: "enabled" } }))).toEqual([
      { path: "thinking.budget_tokens", message: "thinking.budget_tokens: required integer, got nothing" },
    ]);
  });

  test("output_config.effort and thinking.display are open: a newer value validates", () => {
    expect(validateMessagesRequest(withBody({ output_config: { effort: "extreme" } })).ok).toBe(true);
    expect(validateMessagesRequest(withBody({ thinking: { type: "adaptive", display: "updates" } })).ok).toBe(true);
    expect(issuesOf(withBody({ output_config: { effort: 3 } }))).toEqual([
      { path: "output_config.effort", message: "output_config.effort: must be a string or null, got 3" },
    ]);
  });

  test("turnpike.chat fields keep their chat ranges", () => {
    expect(issuesOf(withBody({ turnpike: { chat: { presence_penalty: 3, top_logprobs: 21 } } }))).toEqual([
      {
        path: "turnpike.chat.presence_penalty",
        message: "turnpike.chat.presence_penalty: must be between -2 and 2, got 3",
      },
      { path: "turnpike.chat.top_logprobs", message: "turnpike.chat.top_logprobs: must be between 0 and 20, got 21" },
    ]);
  });

  test("several problems are all reported, in body order", () => {
    const body = { model: "", messages: [{ role: "user", content: [{ type: "text", text: "" }] }], temperature: 2 };
    expect(issuesOf(body).map((i) => i.message)).toEqual([
      'model: must be non-empty, got ""',
      "max_tokens: required integer, got nothing",
      'messages[0].content[0].text: must be non-empty, got ""',
      "temperature: must be between 0 and 1, got 2",
    ]);
  });

  test("a body that is not an object", () => {
    expect(issuesOf("hello")).toEqual([{ path: "", message: 'request body: must be an object, got "hello"' }]);
    expect(issuesOf(null)).toEqual([{ path: "", message: "request body: must be an object, got null" }]);
  });
});
