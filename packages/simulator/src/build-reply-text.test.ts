import { describe, expect, test } from "bun:test";
import { firstWords, padReply, splitEvenly, splitPieces } from "./build-reply-text";
import { buildToolArguments } from "./build-tool-arguments";

describe("reply text", () => {
  test("splitPieces keeps the text and puts whitespace before words", () => {
    expect(splitPieces("Hello big  world.", 3)).toEqual(["Hello", " big", "  world."]);
    expect(splitPieces("a b c d e", 2)).toEqual(["a b c", " d e"]);
    expect(splitPieces("one two", 5)).toEqual(["one", " two"]);
    expect(splitPieces(" lead and trail ", 10).join("")).toBe(" lead and trail ");
    expect(splitPieces("", 3)).toEqual([]);
  });

  test("padReply reaches max(words, 20) words and ends with a full stop", () => {
    expect(padReply("a b", 3).split(" ")).toHaveLength(20);
    const long = padReply("a b", 50);
    expect(long.split(" ")).toHaveLength(50);
    expect(long).toEndWith(".");
  });

  test("firstWords", () => {
    expect(firstWords("  one two three ", 2)).toBe("one two …");
    expect(firstWords("", 2)).toBe("(no text)");
  });

  test("splitEvenly joins back and never splits a surrogate pair", () => {
    const s = '{"a":"😀😀😀"}';
    for (let n = 1; n <= 8; n++) {
      const parts = splitEvenly(s, n);
      expect(parts.join("")).toBe(s);
      // encodeURIComponent throws on a lone surrogate.
      for (const p of parts) expect(() => encodeURIComponent(p)).not.toThrow();
    }
  });
});

describe("buildToolArguments", () => {
  test("required properties only, a sample per type", () => {
    const schema = {
      type: "object",
      required: ["s", "e", "i", "n", "b", "a", "o", "d", "u"],
      properties: {
        s: { type: "string" },
        e: { type: "string", enum: ["x", "y"] },
        i: { type: "integer", minimum: 3 },
        n: { type: "number" },
        b: { type: "boolean" },
        a: { type: "array", items: { type: "string" } },
        o: {
          type: "object",
          properties: { inner: { type: "integer" }, skip: { type: "string" } },
          required: ["inner"],
        },
        d: { type: "string", format: "date" },
        u: { anyOf: [{ type: "integer" }, { type: "null" }] },
        optional: { type: "string" },
      },
    };
    expect(buildToolArguments(schema)).toEqual({
      s: "sample s",
      e: "x",
      i: 3,
      n: 1.5,
      b: true,
      a: ["sample a"],
      o: { inner: 1 },
      d: "2025-01-01",
      u: 1,
    });
  });

  test("no schema or no required list: {}", () => {
    expect(buildToolArguments(undefined)).toEqual({});
    expect(buildToolArguments({ type: "object", properties: { a: { type: "string" } } })).toEqual({});
  });
});
