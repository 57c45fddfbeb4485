import { describe, expect, test } from "bun:test";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { CountTokensResponse, validateCountTokensRequest } from "./index.js";

describe("count_tokens", () => {
  test("a body without max_tokens is valid", () => {
    const r = validateCountTokensRequest({
      model: "alpha-sonnet-4-6",
      system: "Be brief.",
      messages: [{ role: "user", content: "Hello" }],
      tools: [{ name: "f", input_schema: { type: "object" } }],
      tool_choice: { type: "auto" },
      thinking: { type: "adaptive" },
    });
    expect(r.ok ? [] : r.issues).toEqual([]);
  });

  test("the same block rules apply", () => {
    const r = validateCountTokensRequest({
      model: "m",
      messages: [{ role: "user", content: [{ type: "text", text: "" }] }],
    });
    expect(r.ok ? [] : r.issues).toEqual([
      { path: "messages[0].content[0].text", message: 'messages[0].content[0].text: must be non-empty, got ""' },
    ]);
  });

  test("model and messages are required", () => {
    const r = validateCountTokensRequest({});
    expect(r.ok ? [] : r.issues).toEqual([
      { path: "model", message: "model: required string, got nothing" },
      { path: "messages", message: "messages: required array, got nothing" },
    ]);
  });

  test("the response is {input_tokens}", () => {
    const check = TypeCompiler.Compile(CountTokensResponse);
    expect(check.Check({ input_tokens: 2095 })).toBe(true);
    expect(check.Check({ tokens: 2095 })).toBe(false);
  });
});
