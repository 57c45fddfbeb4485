import { describe, expect, test } from "bun:test";
import { indexOfQuoted } from "./sse-scan";

describe("indexOfQuoted", () => {
  const text = 'data: {"type":"x","text":"usage is high","usage":{"input_tokens":1},"usageMetadata":null}';
  test("finds what a search for the quote and the word finds, not the word without its quote", () => {
    expect(indexOfQuoted(text, 'usage"')).toBe(text.indexOf('"usage"'));
    expect(indexOfQuoted(text, "usage")).toBe(text.indexOf('"usage'));
    expect(indexOfQuoted('{"text":"no usage"}', "usage")).toBe(-1);
    expect(indexOfQuoted(text, 'usage":{')).toBe(text.indexOf('"usage":{'));
  });
  test("from: a quote at `from` counts, one before it does not", () => {
    const at = text.indexOf('"usage"');
    expect(indexOfQuoted(text, "usage", at)).toBe(at);
    expect(indexOfQuoted(text, "usage", at + 1)).toBe(text.indexOf('"usageMetadata"'));
    for (let from = 0; from < text.length; from++)
      expect(indexOfQuoted(text, "usage", from)).toBe(text.indexOf('"usage', from));
    expect(indexOfQuoted('"usage"', "usage", 0)).toBe(0);
  });
  test("-1 when the key is absent", () => {
    expect(indexOfQuoted(text, 'finish_reason":"')).toBe(-1);
    expect(indexOfQuoted("usage", "usage")).toBe(-1);
  });
});
