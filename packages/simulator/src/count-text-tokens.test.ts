import { describe, expect, test } from "bun:test";
import { countTextTokens } from "./count-text-tokens";

describe("countTextTokens", () => {
  test("a megabyte-long run of one letter is counted (in slices): one letter counts 8 to a token", () => {
    expect(countTextTokens("x".repeat(1024 * 1024))).toBe(131_072);
  });

  test("text around a long run is counted exactly; short text as a whole", () => {
    expect(countTextTokens(`a ${"x".repeat(300)} b`)).toBe(
      countTextTokens("a ") +
        countTextTokens("x".repeat(256)) +
        countTextTokens("x".repeat(44)) +
        countTextTokens(" b"),
    );
    expect(countTextTokens("Hello, world")).toBe(3);
  });
});
