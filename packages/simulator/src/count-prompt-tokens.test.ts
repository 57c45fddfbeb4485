import { describe, expect, test } from "bun:test";
import { countPromptTokens, countPromptTokensSliced, MEDIA_TOKENS } from "./count-prompt-tokens";
import { tok } from "./test-support";
import type { Protocol } from "./simulator-options";

const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const toolT = tok("get_weather") + tok("Weather now") + tok(JSON.stringify(schema));

describe("countPromptTokens: the documented formula", () => {
  test("messages: system + 3 per message + every text, tool call, tool result, thinking + media + tools", () => {
    const body = {
      system: [{ type: "text", text: "Be brief." }],
      tools: [{ name: "get_weather", description: "Weather now", input_schema: schema }],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Weather in Paris?" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "Let me look.", signature: "s" },
            { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
          ],
        },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "18C" }] }],
        },
      ],
    };
    const expected =
      3 +
      tok("Be brief.") +
      3 +
      tok("Weather in Paris?") +
      MEDIA_TOKENS +
      3 +
      tok("Let me look.") +
      tok("get_weather") +
      tok('{"city":"Paris"}') +
      3 +
      tok("18C") +
      toolT;
    expect(countPromptTokens("messages", body)).toBe(expected);
  });

  test("chat: 3 per message (system included) + texts, tool call names and arguments, tools", () => {
    const body = {
      tools: [{ type: "function", function: { name: "get_weather", description: "Weather now", parameters: schema } }],
      messages: [
        { role: "system", content: "Be brief." },
        {
          role: "user",
          content: [
            { type: "text", text: "Weather in Paris?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
        },
        { role: "tool", tool_call_id: "c", content: "18C" },
      ],
    };
    const expected =
      3 +
      tok("Be brief.") +
      3 +
      tok("Weather in Paris?") +
      MEDIA_TOKENS +
      3 +
      tok("get_weather") +
      tok('{"city":"Paris"}') +
      3 +
      tok("18C") +
      toolT;
    expect(countPromptTokens("chat", body)).toBe(expected);
  });

  test("generate: systemInstruction + 3 per content + parts + declarations", () => {
    const body = {
      systemInstruction: { parts: [{ text: "Be brief." }] },
      tools: [{ functionDeclarations: [{ name: "get_weather", description: "Weather now", parameters: schema }] }],
      contents: [
        {
          role: "user",
          parts: [{ text: "Weather in Paris?" }, { inlineData: { mimeType: "image/png", data: "AAAA" } }],
        },
        { role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } } }] },
        { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { output: "18C" } } }] },
      ],
    };
    const expected =
      3 +
      tok("Be brief.") +
      3 +
      tok("Weather in Paris?") +
      MEDIA_TOKENS +
      3 +
      tok("get_weather") +
      tok('{"city":"Paris"}') +
      3 +
      tok("18C") +
      toolT;
    expect(countPromptTokens("generate", body)).toBe(expected);
  });

  test("a plain conversation counts the same in all three protocols", () => {
    const m = countPromptTokens("messages", {
      system: "Be brief.",
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello" },
        { role: "user", content: "Bye" },
      ],
    });
    const c = countPromptTokens("chat", {
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello" },
        { role: "user", content: "Bye" },
      ],
    });
    const g = countPromptTokens("generate", {
      systemInstruction: { parts: [{ text: "Be brief." }] },
      contents: [
        { role: "user", parts: [{ text: "Hi" }] },
        { role: "model", parts: [{ text: "Hello" }] },
        { role: "user", parts: [{ text: "Bye" }] },
      ],
    });
    expect(m).toBe(3 + tok("Be brief.") + 3 * 3 + tok("Hi") + tok("Hello") + tok("Bye"));
    expect(c).toBe(m);
    expect(g).toBe(m);
  });

  test("special-token text counts as plain text instead of throwing", () => {
    expect(countPromptTokens("chat", { messages: [{ role: "user", content: "<|endoftext|>" }] })).toBe(
      3 + tok("<|endoftext|>"),
    );
  });

  test("a non-object body counts 0", () => {
    expect(countPromptTokens("messages", null)).toBe(0);
  });
});

describe("countPromptTokensSliced: a large body's count in pieces, the same number", () => {
  const tools = [
    { type: "function", function: { name: "get_weather", description: "Weather now", parameters: schema } },
  ];
  const said = (i: number) => `turn ${i}: the weather in Paris, and then some`;
  const N = 1000;
  const bodies: [Protocol, Record<string, unknown>][] = [
    [
      "messages",
      {
        system: [{ type: "text", text: "Be brief." }],
        tools: [{ name: "get_weather", description: "Weather now", input_schema: schema }],
        messages: Array.from({ length: N }, (_, i) => ({
          role: i % 2 ? "assistant" : "user",
          content: i % 2 ? [{ type: "tool_use", id: `t${i}`, name: "get_weather", input: { i } }] : said(i),
        })),
      },
    ],
    [
      "chat",
      {
        tools,
        messages: [
          { role: "system", content: "Be brief." },
          ...Array.from({ length: N }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: said(i) })),
        ],
      },
    ],
    [
      "generate",
      {
        systemInstruction: { parts: [{ text: "Be brief." }] },
        tools: [{ functionDeclarations: [{ name: "get_weather", description: "Weather now", parameters: schema }] }],
        contents: Array.from({ length: N }, (_, i) => ({ role: i % 2 ? "model" : "user", parts: [{ text: said(i) }] })),
      },
    ],
    [
      "responses",
      {
        instructions: "Be brief.",
        tools: [{ type: "function", name: "get_weather", parameters: schema }],
        input: Array.from({ length: N }, (_, i) =>
          i % 4 === 1
            ? { type: "function_call", call_id: `c${i}`, name: "get_weather", arguments: `{"i":${i}}` }
            : i % 4 === 2
              ? { type: "function_call_output", call_id: `c${i - 1}`, output: said(i) }
              : { role: i % 4 === 3 ? "assistant" : "user", content: said(i) },
        ),
      },
    ],
  ];

  for (const [protocol, body] of bodies) {
    test(`${protocol}: ${N} turns counted 256 at a time, a pause before each piece`, async () => {
      let pauses = 0;
      const n = await countPromptTokensSliced(protocol, body, async () => {
        pauses++;
      });
      expect(n).toBe(countPromptTokens(protocol, body));
      expect(n).toBeGreaterThan(N * 3);
      // A Responses body is read as its chat request first: one more pause.
      expect(pauses).toBe(Math.ceil(N / 256) + (protocol === "responses" ? 1 : 0));
    });
  }

  test("the wrapped countTokens request of generateContent, a string input and a non-object body", async () => {
    const none = async () => {};
    const inner = bodies[2]![1];
    expect(await countPromptTokensSliced("generate", { generateContentRequest: inner }, none)).toBe(
      countPromptTokens("generate", { generateContentRequest: inner }),
    );
    const text = { instructions: "Be brief.", input: "Weather in Paris?" };
    expect(await countPromptTokensSliced("responses", text, none)).toBe(countPromptTokens("responses", text));
    expect(await countPromptTokensSliced("chat", null, none)).toBe(0);
  });
});
