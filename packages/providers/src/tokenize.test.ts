import { describe, expect, test } from "bun:test";
import { EXACT_COUNT_CHARS, EXACT_COUNT_TEXTS, IMAGE_TOKENS, countTextTokens, countTokens } from "./tokenize.js";

describe("countTokens (o200k_base)", () => {
  test("a one-word prompt: 3 priming + 3 per message + the word", () => {
    expect(countTextTokens("Hello")).toBe(1);
    expect(countTokens({ model: "m", max_tokens: 1, messages: [{ role: "user", content: "Hello" }] })).toBe(7);
  });

  test("system, tool_use input JSON, tool_result content and tool definitions all count", () => {
    const plain = countTokens({ model: "m", max_tokens: 1, messages: [{ role: "user", content: "Hi" }] });
    const withSystem = countTokens({
      model: "m",
      max_tokens: 1,
      system: "You are terse.",
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(withSystem - plain).toBe(countTextTokens("You are terse."));
    const tool = {
      name: "get_weather",
      description: "Weather for a city",
      input_schema: { type: "object" as const, properties: { city: { type: "string" } } },
    };
    const withTool = countTokens({
      model: "m",
      max_tokens: 1,
      messages: [{ role: "user", content: "Hi" }],
      tools: [tool],
    });
    expect(withTool - plain).toBe(
      8 +
        countTextTokens("get_weather") +
        countTextTokens("Weather for a city") +
        countTextTokens(JSON.stringify(tool.input_schema)),
    );
    const turn = countTokens({
      model: "m",
      max_tokens: 1,
      messages: [
        { role: "assistant", content: [{ type: "tool_use", id: "t", name: "get_weather", input: { city: "Paris" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "18C and sunny" }] },
      ],
    });
    expect(turn).toBe(
      3 +
        3 +
        countTextTokens("get_weather") +
        countTextTokens('{"city":"Paris"}') +
        3 +
        countTextTokens("18C and sunny"),
    );
  });

  test("images count a fixed amount; special-token text is plain text", () => {
    const n = countTokens({
      model: "m",
      max_tokens: 1,
      messages: [
        {
          role: "user",
          content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }],
        },
      ],
    });
    expect(n).toBe(3 + 3 + IMAGE_TOKENS);
    expect(countTextTokens("<|endoftext|>")).toBeGreaterThan(1);
  });

  test("beyond its first quarter megabyte a prompt is estimated at the rate measured on it", () => {
    const words = Array.from({ length: 400_000 }, (_, i) => `w${((i * 7919) % 100_003).toString(36)}`).join(" ");
    expect(words.length).toBeGreaterThan(2 * EXACT_COUNT_CHARS);
    const estimated = countTokens({ model: "m", max_tokens: 1, messages: [{ role: "user", content: words }] });
    const exact = 3 + 3 + countTextTokens(words);
    expect(Math.abs(estimated - exact) / exact).toBeLessThan(0.02);
    // Under the budget the count is exact.
    const small = words.slice(0, 10_000);
    expect(countTokens({ model: "m", max_tokens: 1, messages: [{ role: "user", content: small }] })).toBe(
      3 + 3 + countTextTokens(small),
    );
  });

  test("beyond its first 4,096 texts a prompt of many short turns is estimated at the rate measured on them", () => {
    const turns = Array.from({ length: 30_000 }, (_, i) => ({
      role: i % 2 ? ("assistant" as const) : ("user" as const),
      content: `turn ${i} hi`,
    }));
    expect(turns.length).toBeGreaterThan(4 * EXACT_COUNT_TEXTS);
    const estimated = countTokens({ model: "m", max_tokens: 1, messages: turns });
    const exact = 3 + turns.reduce((n, t) => n + 3 + countTextTokens(t.content), 0);
    expect(Number.isInteger(estimated)).toBe(true);
    expect(Math.abs(estimated - exact) / exact).toBeLessThan(0.02);
    // Within the budget the count is exact.
    const few = turns.slice(0, 1000);
    expect(countTokens({ model: "m", max_tokens: 1, messages: few })).toBe(
      3 + few.reduce((n, t) => n + 3 + countTextTokens(t.content), 0),
    );
  });

  test("a run of one letter or one mark a megabyte long is counted (in slices), text around it exactly", () => {
    // Whole, a 64 KB run took the encoder 3 s; sliced it is linear, and one letter still counts 8 to a token.
    expect(countTextTokens("x".repeat(1024 * 1024))).toBe(131_072);
    expect(countTextTokens(`Hello there ${"!".repeat(300_000)} and goodbye`)).toBeGreaterThan(
      countTextTokens("Hello there and goodbye"),
    );
    expect(countTextTokens(`a ${"x".repeat(300)} b`)).toBe(
      countTextTokens("a ") +
        countTextTokens("x".repeat(256)) +
        countTextTokens("x".repeat(44)) +
        countTextTokens(" b"),
    );
  });
});
