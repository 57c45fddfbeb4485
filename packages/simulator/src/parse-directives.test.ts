import { describe, expect, test } from "bun:test";
import { parseDirectives } from "./parse-directives";

describe("parseDirectives", () => {
  test("no directive: the text comes back trimmed", () => {
    expect(parseDirectives("  just text ")).toEqual({ directives: {}, rest: "just text" });
  });

  test("keys with values, bare keys, quoted values with escapes, several blocks anywhere", () => {
    const p = parseDirectives(
      'Hi [sim error=529 think] there [sim text="say \\"hi\\" ] ok" chunks=3 latency=5 first_byte=7 retry_after=2] end',
    );
    expect(p.directives).toEqual({
      error: 529,
      think: true,
      text: 'say "hi" ] ok',
      chunks: 3,
      latencyMs: 5,
      firstByteMs: 7,
      retryAfter: 2,
    });
    expect(p.rest).toBe("Hi there end");
    expect(p.problem).toBeUndefined();
  });

  test("modes of midstream_error and refusal, with their defaults", () => {
    expect(parseDirectives("[sim midstream_error refusal]").directives).toEqual({
      midstreamError: "error",
      refusal: "reply",
    });
    expect(parseDirectives("[sim midstream_error=reset refusal=prompt]").directives).toEqual({
      midstreamError: "reset",
      refusal: "prompt",
    });
    expect(parseDirectives("[sim midstream_error=boom]").problem).toContain("must be one of error, close, reset");
  });

  test("tools, variant and replay", () => {
    expect(parseDirectives("[sim tools=2 variant=whole-tool-call replay=openai-text]").directives).toEqual({
      tools: 2,
      variant: "whole-tool-call",
      replay: "openai-text",
    });
  });

  test("problems: unknown key, bad number, unterminated block", () => {
    expect(parseDirectives("[sim eror=500]").problem).toStartWith('unknown simulator directive "eror"');
    expect(parseDirectives("[sim error=abc]").problem).toBe(
      '[sim error=…] needs a whole number from 400 to 599, got "abc"',
    );
    expect(parseDirectives("[sim chunks=0]").problem).toContain("from 1 to");
    expect(parseDirectives('[sim text="open').problem).toStartWith("unterminated simulator directive");
  });

  test("[simple] and similar words are not directives", () => {
    expect(parseDirectives("a [simple] thing [sim]").directives).toEqual({});
    expect(parseDirectives("a [simple] thing").rest).toBe("a [simple] thing");
  });
});
