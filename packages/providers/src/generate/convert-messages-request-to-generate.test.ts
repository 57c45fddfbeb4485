import { describe, expect, test } from "bun:test";
import type { MessagesRequest } from "@turnpike/schema";
import { convertChatRequestToMessages } from "../chat/convert-chat-request-to-messages.js";
import { GatewayError } from "../errors.js";
import { MemorySignatureStore } from "../signature-store.js";
import { convertMessagesRequestToGenerate } from "./convert-messages-request-to-generate.js";
import { SKIP_THOUGHT_SIGNATURE } from "./convert-messages-to-generate-contents.js";

const base = (extra: Partial<MessagesRequest> = {}): MessagesRequest => ({
  model: "gamma-up",
  max_tokens: 512,
  messages: [{ role: "user", content: "Hi" }],
  ...extra,
});
const params = (r: { warnings: { param: string }[] }) => r.warnings.map((w) => w.param);

describe("text, parameters, path", () => {
  test("system → systemInstruction; roles user/model; generationConfig; path pieces", () => {
    const r = convertMessagesRequestToGenerate(
      base({
        system: "Be terse.",
        messages: [
          { role: "user", content: "Hi" },
          { role: "assistant", content: "Hello." },
          { role: "user", content: [{ type: "text", text: "Weather?" }] },
        ],
        temperature: 0.7,
        top_p: 0.95,
        top_k: 40,
        stop_sequences: ["END"],
        stream: true,
      }),
    );
    expect(r.body).toEqual({
      contents: [
        { role: "user", parts: [{ text: "Hi" }] },
        { role: "model", parts: [{ text: "Hello." }] },
        { role: "user", parts: [{ text: "Weather?" }] },
      ],
      systemInstruction: { parts: [{ text: "Be terse." }] },
      generationConfig: { maxOutputTokens: 512, temperature: 0.7, topP: 0.95, topK: 40, stopSequences: ["END"] },
    });
    expect(r.model).toBe("gamma-up");
    expect(r.method).toBe("streamGenerateContent");
    expect(r.path).toBe("/v1beta/models/gamma-up:streamGenerateContent?alt=sse");
    expect(convertMessagesRequestToGenerate(base(), { upstreamModel: "gemini-2.5-pro" }).path).toBe(
      "/v1beta/models/gemini-2.5-pro:generateContent",
    );
    expect(r.warnings).toEqual([]);
  });

  test("chat-only parameters carried in the pivot: seed and penalties go to generationConfig; json_object → responseMimeType", () => {
    const pivot = convertChatRequestToMessages(
      {
        model: "g",
        messages: [{ role: "user", content: "x" }],
        seed: 5,
        presence_penalty: 0.3,
        frequency_penalty: 0.1,
        response_format: { type: "json_object" },
        logit_bias: { "1": 2 },
        user: "u",
      },
      { defaultMaxTokens: 100, target: "generate" },
    );
    expect(pivot.warnings).toEqual([]);
    const r = convertMessagesRequestToGenerate(pivot.request);
    expect(r.body.generationConfig).toEqual({
      maxOutputTokens: 100,
      seed: 5,
      presencePenalty: 0.3,
      frequencyPenalty: 0.1,
      responseMimeType: "application/json",
    });
    expect(params(r)).toEqual(["logit_bias", "user"]);
  });

  test("output_config.format → responseMimeType + responseJsonSchema", () => {
    const schema = { type: "object", properties: { a: { type: "string" } } };
    const r = convertMessagesRequestToGenerate(base({ output_config: { format: { type: "json_schema", schema } } }));
    expect(r.body.generationConfig).toMatchObject({ responseMimeType: "application/json", responseJsonSchema: schema });
  });

  test("n > 1 carried from a chat client is a 400", () => {
    expect(() => convertMessagesRequestToGenerate(base({ turnpike: { chat: { n: 2 } } }))).toThrow(GatewayError);
  });

  test("thinking: enabled budget → thinkingBudget with thoughts; adaptive → dynamic; disabled → no thinkingConfig", () => {
    expect(
      convertMessagesRequestToGenerate(base({ thinking: { type: "enabled", budget_tokens: 2048 } })).body
        .generationConfig?.thinkingConfig,
    ).toEqual({
      thinkingBudget: 2048,
      includeThoughts: true,
    });
    expect(
      convertMessagesRequestToGenerate(base({ thinking: { type: "adaptive" } })).body.generationConfig?.thinkingConfig,
    ).toEqual({ thinkingBudget: -1, includeThoughts: true });
    expect(
      convertMessagesRequestToGenerate(base({ thinking: { type: "adaptive" }, output_config: { effort: "low" } })).body
        .generationConfig?.thinkingConfig,
    ).toEqual({
      thinkingBudget: 1024,
      includeThoughts: true,
    });
    expect(
      convertMessagesRequestToGenerate(base({ thinking: { type: "disabled" } })).body.generationConfig?.thinkingConfig,
    ).toBeUndefined();
  });
});

describe("tools", () => {
  test("composed and referenced schemas travel whole in parametersJsonSchema, never in the OpenAPI-subset parameters", () => {
    // Claude Code's SendMessage shape, and a $ref/$defs/const/oneOf schema.
    const composed = {
      type: "object" as const,
      properties: {
        to: { type: "string", allOf: [{ pattern: "^[a-z]" }, { pattern: "[0-9]$" }] },
        item: { $ref: "#/$defs/item" },
      },
      required: ["to"],
      $defs: { item: { oneOf: [{ const: "a" }, { type: "integer", exclusiveMinimum: 0 }] } },
    };
    const r = convertMessagesRequestToGenerate(base({ tools: [{ name: "send", input_schema: composed }] }));
    const [decl] = r.body.tools?.[0]?.functionDeclarations ?? [];
    expect(decl).toEqual({ name: "send", parametersJsonSchema: composed });
    expect(decl && "parameters" in decl).toBe(false);
    expect(r.warnings).toEqual([]);
  });

  test("definitions → functionDeclarations with the client's JSON Schema; tool_choice → functionCallingConfig", () => {
    const weatherSchema = {
      type: "object" as const,
      properties: { city: { type: "string" } },
      required: ["city"],
      additionalProperties: false,
    };
    const r = convertMessagesRequestToGenerate(
      base({
        tools: [
          { name: "get_weather", description: "Weather", input_schema: weatherSchema },
          { name: "now", input_schema: { type: "object", properties: {} } },
          { type: "bash_20250124", name: "bash" },
        ],
        tool_choice: { type: "tool", name: "get_weather", disable_parallel_tool_use: true },
      }),
    );
    expect(r.body.tools).toEqual([
      {
        functionDeclarations: [
          { name: "get_weather", description: "Weather", parametersJsonSchema: weatherSchema },
          { name: "now", parametersJsonSchema: { type: "object", properties: {} } },
        ],
      },
    ]);
    expect(r.body.toolConfig).toEqual({
      functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_weather"] },
    });
    expect(params(r)).toEqual(["tools[2]", "tool_choice.disable_parallel_tool_use"]);
    // A chat client's parallel_tool_calls: false gets one warning, under the name it sent.
    const chat = convertChatRequestToMessages(
      {
        model: "m",
        tools: [{ type: "function", function: { name: "now", parameters: { type: "object" } } }],
        parallel_tool_calls: false,
        messages: [{ role: "user", content: "Hi" }],
      },
      { defaultMaxTokens: 100, target: "generate" },
    );
    expect(params(convertMessagesRequestToGenerate(chat.request))).toEqual(["parallel_tool_calls"]);
    const tools = [{ name: "now", input_schema: { type: "object" as const } }];
    expect(convertMessagesRequestToGenerate(base({ tools, tool_choice: { type: "auto" } })).body.toolConfig).toEqual({
      functionCallingConfig: { mode: "AUTO" },
    });
    expect(convertMessagesRequestToGenerate(base({ tools, tool_choice: { type: "any" } })).body.toolConfig).toEqual({
      functionCallingConfig: { mode: "ANY" },
    });
    expect(convertMessagesRequestToGenerate(base({ tools, tool_choice: { type: "none" } })).body.toolConfig).toEqual({
      functionCallingConfig: { mode: "NONE" },
    });
  });

  test("tool calls and results: names recovered from call ids, output/error wrapping, stored signature or skip value on the first call", () => {
    const signatures = new MemorySignatureStore();
    signatures.set("toolu_1", "sig-real");
    const r = convertMessagesRequestToGenerate(
      base({
        messages: [
          { role: "user", content: "Weather and time?" },
          {
            role: "assistant",
            content: [
              { type: "text", text: "Checking." },
              { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
              { type: "tool_use", id: "toolu_2", name: "now", input: {} },
            ],
          },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "toolu_1", content: "18C" },
              {
                type: "tool_result",
                tool_use_id: "toolu_2",
                content: [{ type: "text", text: "no clock" }],
                is_error: true,
              },
            ],
          },
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_3", name: "now", input: {} }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_3", content: "12:00" }] },
        ],
      }),
      { signatures },
    );
    expect(r.body.contents).toEqual([
      { role: "user", parts: [{ text: "Weather and time?" }] },
      {
        role: "model",
        parts: [
          { text: "Checking." },
          { functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "sig-real" },
          { functionCall: { name: "now", args: {} } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "get_weather", response: { output: "18C" } } },
          { functionResponse: { name: "now", response: { error: "no clock" } } },
        ],
      },
      { role: "model", parts: [{ functionCall: { name: "now", args: {} }, thoughtSignature: SKIP_THOUGHT_SIGNATURE }] },
      { role: "user", parts: [{ functionResponse: { name: "now", response: { output: "12:00" } } }] },
    ]);
  });

  test("a tool_result whose id has no earlier tool_use is a 400", () => {
    expect(() =>
      convertMessagesRequestToGenerate(
        base({ messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "x", content: "r" }] }] }),
      ),
    ).toThrow(/no earlier tool_use block has the id "x"/);
  });

  test("a name Gemini rejects (leading digit) is prefixed and mapped back", () => {
    const r = convertMessagesRequestToGenerate(
      base({ tools: [{ name: "3d_render", input_schema: { type: "object", properties: { a: { type: "string" } } } }] }),
    );
    expect(r.body.tools![0]!.functionDeclarations[0]!.name).toBe("_3d_render");
    expect(r.toolNames).toEqual({ _3d_render: "3d_render" });
  });
});

describe("images and documents", () => {
  test("base64 image/PDF → inlineData; text document → text; Files-API URL → fileData", () => {
    const r = convertMessagesRequestToGenerate(
      base({
        messages: [
          {
            role: "user",
            content: [
              { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBO" } },
              { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBE" } },
              { type: "document", source: { type: "text", media_type: "text/plain", data: "notes" } },
              {
                type: "image",
                source: { type: "url", url: "https://generativelanguage.googleapis.com/v1beta/files/abc123" },
              },
            ],
          },
        ],
      }),
    );
    expect(r.body.contents[0]!.parts).toEqual([
      { inlineData: { mimeType: "image/png", data: "iVBO" } },
      { inlineData: { mimeType: "application/pdf", data: "JVBE" } },
      { text: "notes" },
      { fileData: { fileUri: "https://generativelanguage.googleapis.com/v1beta/files/abc123" } },
    ]);
  });

  test("an ordinary http image URL is a 400 asking for base64 (the gateway does not fetch URLs)", () => {
    try {
      convertMessagesRequestToGenerate(
        base({
          messages: [
            { role: "user", content: [{ type: "image", source: { type: "url", url: "https://example.com/cat.png" } }] },
          ],
        }),
      );
      throw new Error("expected a 400");
    } catch (e) {
      expect(e).toBeInstanceOf(GatewayError);
      expect((e as GatewayError).status).toBe(400);
      expect((e as GatewayError).param).toBe("messages[0].content[0].source.url");
      expect((e as GatewayError).message).toContain("send the content as base64");
    }
  });

  test("thinking history is not replayed: one warning", () => {
    const r = convertMessagesRequestToGenerate(
      base({
        messages: [
          { role: "user", content: "q" },
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "t", signature: "s" },
              { type: "text", text: "a" },
            ],
          },
          { role: "user", content: "q2" },
        ],
      }),
    );
    expect(r.body.contents[1]).toEqual({ role: "model", parts: [{ text: "a" }] });
    expect(params(r)).toEqual(["thinking"]);
  });
});
