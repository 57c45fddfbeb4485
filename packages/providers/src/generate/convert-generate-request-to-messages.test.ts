import { validateGenerateRequest, type GenerateRequest } from "@turnpike/schema";
import { describe, expect, test } from "bun:test";
import { GatewayError } from "../errors.js";
import { convertGenerateRequestToMessages, openApiToJsonSchema } from "./convert-generate-request-to-messages.js";
import { encodeThoughtToken } from "./thought-token.js";

const opts = { model: "alpha-haiku-4-5", defaultMaxTokens: 4096, target: "messages", stream: false } as const;
const hi: GenerateRequest = { contents: [{ role: "user", parts: [{ text: "Hi" }] }] };

describe("convertGenerateRequestToMessages", () => {
  test("system instruction, turns, default output cap; nothing lost, no warning", () => {
    const { request, warnings } = convertGenerateRequestToMessages(
      {
        systemInstruction: { parts: [{ text: "Be brief." }, { text: "Be kind." }] },
        contents: [
          { role: "user", parts: [{ text: "Hi" }] },
          { role: "model", parts: [{ text: "Hello" }] },
          {
            role: "user",
            parts: [{ text: "Again" }, { inlineData: { mimeType: "application/pdf", data: "JVBERi0=" } }],
          },
        ],
      },
      opts,
    );
    expect(request).toEqual({
      model: "alpha-haiku-4-5",
      max_tokens: 4096,
      system: "Be brief.\n\nBe kind.",
      messages: [
        { role: "user", content: [{ type: "text", text: "Hi" }] },
        { role: "assistant", content: [{ type: "text", text: "Hello" }] },
        {
          role: "user",
          content: [
            { type: "text", text: "Again" },
            { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } },
          ],
        },
      ],
    });
    expect(warnings).toEqual([]);
  });

  test("function calls keep their ids, made up when absent; responses answer by id, else by name; results before text", () => {
    const { request } = convertGenerateRequestToMessages(
      {
        contents: [
          { role: "user", parts: [{ text: "Go" }] },
          {
            role: "model",
            parts: [{ functionCall: { id: "toolu_1", name: "a", args: { x: 1 } } }, { functionCall: { name: "b" } }],
          },
          {
            role: "user",
            parts: [
              { text: "done" },
              { functionResponse: { name: "b", response: { error: "boom" } } },
              { functionResponse: { id: "toolu_1", name: "a", response: { rows: 2 } } },
            ],
          },
        ],
      },
      opts,
    );
    expect(request.messages[1]!.content).toEqual([
      { type: "tool_use", id: "toolu_1", name: "a", input: { x: 1 } },
      { type: "tool_use", id: "call_1_1", name: "b", input: {} },
    ]);
    expect(request.messages[2]!.content).toEqual([
      { type: "tool_result", tool_use_id: "call_1_1", content: "boom", is_error: true },
      { type: "tool_result", tool_use_id: "toolu_1", content: '{"rows":2}' },
      { type: "text", text: "done" },
    ]);
  });

  test("a response that answers no call is a 400 naming the part", () => {
    const bad: GenerateRequest = {
      contents: [{ role: "user", parts: [{ functionResponse: { name: "a", response: {} } }] }],
    };
    expect(() => convertGenerateRequestToMessages(bad, opts)).toThrow(GatewayError);
    expect(() => convertGenerateRequestToMessages(bad, opts)).toThrow("contents[0].parts[0].functionResponse");
  });

  test("tool modes: ANY with one name forces it, several name a warning, VALIDATED reads as AUTO", () => {
    const tools = [{ functionDeclarations: [{ name: "a" }, { name: "b" }] }];
    const one = convertGenerateRequestToMessages(
      { ...hi, tools, toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["b"] } } },
      opts,
    );
    expect(one.request.tool_choice).toEqual({ type: "tool", name: "b" });
    const two = convertGenerateRequestToMessages(
      { ...hi, tools, toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["a", "b"] } } },
      opts,
    );
    expect([two.request.tool_choice, two.warnings.map((w) => w.param)]).toEqual([
      { type: "any" },
      ["toolConfig.functionCallingConfig.allowedFunctionNames"],
    ]);
    const validated = convertGenerateRequestToMessages(
      { ...hi, tools, toolConfig: { functionCallingConfig: { mode: "VALIDATED" } } },
      opts,
    );
    expect(validated.request.tool_choice).toEqual({ type: "auto" });
    expect(one.request.tools).toEqual([
      { name: "a", input_schema: { type: "object", properties: {} } },
      { name: "b", input_schema: { type: "object", properties: {} } },
    ]);
  });

  test("parametersJsonSchema: composed keywords kept whole; a root without type gets it; a root of another type is named", () => {
    const composed = {
      type: "object" as const,
      properties: { to: { type: "string", allOf: [{ pattern: "^a" }, { pattern: "z$" }] }, r: { $ref: "#/$defs/r" } },
      $defs: { r: { oneOf: [{ const: 1 }, { type: "string" }] } },
    };
    const untyped = { properties: { q: { type: "string" } }, required: ["q"] };
    const union = { anyOf: [{ type: "object", properties: { a: { type: "string" } } }, { type: "object" }] };
    const text = { type: "string" };
    const { request, warnings } = convertGenerateRequestToMessages(
      {
        ...hi,
        tools: [
          {
            functionDeclarations: [
              { name: "composed", parametersJsonSchema: composed },
              { name: "untyped", parametersJsonSchema: untyped },
              { name: "union", parametersJsonSchema: union },
              { name: "text", parametersJsonSchema: text },
            ],
          },
        ],
      },
      opts,
    );
    expect(request.tools).toEqual([
      { name: "composed", input_schema: composed },
      { name: "untyped", input_schema: { ...untyped, type: "object" } },
      { name: "union", input_schema: { ...union, type: "object" } },
      { name: "text", input_schema: { type: "object", properties: {} } },
    ]);
    expect(warnings.map((w) => w.param)).toEqual(["tools[0].functionDeclarations[3].parametersJsonSchema"]);
  });

  test("thinking: budget, level, off, dynamic; the cap raised above a budget; sampling rules of a messages upstream", () => {
    const think = (thinkingConfig: object, extra: object = {}) =>
      convertGenerateRequestToMessages(
        { ...hi, generationConfig: { maxOutputTokens: 1000, thinkingConfig, ...extra } },
        opts,
      );
    const budget = think({ thinkingBudget: 2048, includeThoughts: true }, { temperature: 0.2 });
    expect([budget.request.thinking, budget.request.max_tokens, budget.request.temperature]).toEqual([
      { type: "enabled", budget_tokens: 2048 },
      3048,
      undefined,
    ]);
    expect(budget.warnings.map((w) => w.param)).toEqual([
      "generationConfig.maxOutputTokens",
      "generationConfig.temperature",
    ]);
    expect(think({ thinkingLevel: "HIGH" }).request.thinking).toEqual({
      type: "enabled",
      budget_tokens: 4096,
      display: "omitted",
    });
    expect(think({ thinkingBudget: 0 }).request.thinking).toEqual({ type: "disabled" });
    expect(think({ thinkingBudget: -1, includeThoughts: true }).request.thinking).toEqual({ type: "adaptive" });
    expect(think({ includeThoughts: true }).request.thinking).toBeUndefined();
  });

  test("structured output: a schema (JSON Schema or the OpenAPI subset), or JSON mode", () => {
    const schema = {
      type: "OBJECT",
      properties: { n: { type: "INTEGER", nullable: true } },
      required: ["n"],
      propertyOrdering: ["n"],
    };
    const a = convertGenerateRequestToMessages(
      { ...hi, generationConfig: { responseMimeType: "application/json", responseSchema: schema } },
      opts,
    );
    expect(a.request.output_config).toEqual({
      format: {
        type: "json_schema",
        schema: { type: "object", properties: { n: { type: ["integer", "null"] } }, required: ["n"] },
      },
    });
    const b = convertGenerateRequestToMessages(
      { ...hi, generationConfig: { responseMimeType: "application/json" } },
      { ...opts, target: "chat" },
    );
    expect(b.request.turnpike).toEqual({ chat: { response_format: { type: "json_object" } } });
    expect(openApiToJsonSchema({ type: "ARRAY", items: { type: "STRING" } })).toEqual({
      type: "array",
      items: { type: "string" },
    });
  });

  test("what cannot be carried: warnings for knobs, a 400 for cached content", () => {
    // Fields only the vendor knows, as a client sends them: typed by the validator that lets them pass.
    const checked = validateGenerateRequest({
      ...hi,
      tools: [{ googleSearch: {} }],
      safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
      generationConfig: { seed: 3, responseModalities: ["TEXT"] },
      labels: { a: "b" },
    });
    if (!checked.ok) throw new Error(checked.issues[0]?.message);
    const { warnings } = convertGenerateRequestToMessages(checked.value, opts);
    expect(warnings.map((w) => w.param).sort()).toEqual([
      "generationConfig.responseModalities",
      "generationConfig.seed",
      "labels",
      "safetySettings",
      "tools[0].googleSearch",
    ]);
    expect(() => convertGenerateRequestToMessages({ ...hi, cachedContent: "cachedContents/x" }, opts)).toThrow(
      "cachedContent",
    );
  });

  test("signatures: a vendor's is a warning, the skip value nothing, Turnpike's token the turn's thinking back (toward messages only)", () => {
    const token = encodeThoughtToken([{ type: "thinking", thinking: "Hmm.", signature: "c2ln" }])!;
    const body = (sig: string): GenerateRequest => ({
      contents: [
        { role: "user", parts: [{ text: "Go" }] },
        {
          role: "model",
          parts: [
            { text: "Hmm.", thought: true },
            { functionCall: { id: "toolu_1", name: "a" }, thoughtSignature: sig },
          ],
        },
        { role: "user", parts: [{ functionResponse: { id: "toolu_1", name: "a", response: { output: "ok" } } }] },
      ],
    });
    const ours = convertGenerateRequestToMessages(body(token), opts);
    expect(ours.request.messages[1]!.content).toEqual([
      { type: "thinking", thinking: "Hmm.", signature: "c2ln" },
      { type: "tool_use", id: "toolu_1", name: "a", input: {} },
    ]);
    expect(ours.warnings).toEqual([]);
    expect(
      convertGenerateRequestToMessages(body(token), { ...opts, target: "chat" }).request.messages[1]!.content,
    ).toEqual([{ type: "tool_use", id: "toolu_1", name: "a", input: {} }]);
    expect(
      convertGenerateRequestToMessages(body("skip_thought_signature_validator"), opts).warnings.map((w) => w.param),
    ).toEqual(["thought"]);
    expect(convertGenerateRequestToMessages(body("dmVuZG9y"), opts).warnings.map((w) => w.param)).toEqual([
      "thought",
      "thoughtSignature",
    ]);
  });
});
