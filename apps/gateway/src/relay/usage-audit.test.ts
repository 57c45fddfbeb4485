import { describe, expect, test } from "bun:test";
import { usageTextLooksTrue } from "./usage-audit";

const MAX = 1_000_000;

describe("usageTextLooksTrue", () => {
  test("frames whose usage is null or absent are not parsed, and pass", () => {
    expect(usageTextLooksTrue('{"choices":[],"usage":null}', MAX)).toBe(true);
    expect(usageTextLooksTrue('{"choices":[],"usage" :  null}', MAX)).toBe(true);
    expect(usageTextLooksTrue('{"type":"ping"}', MAX)).toBe(true);
    // Text that does not parse is for its reader to judge.
    expect(usageTextLooksTrue('{"usage":{"input_tokens":-1', MAX)).toBe(true);
  });

  test("counts that cannot be true are caught, at the top and one level down, in every protocol's field", () => {
    expect(usageTextLooksTrue('{"usage":{"prompt_tokens":12,"completion_tokens":5}}', MAX)).toBe(true);
    expect(usageTextLooksTrue('{"usage":{"prompt_tokens":-12,"completion_tokens":5}}', MAX)).toBe(false);
    expect(usageTextLooksTrue('{"usage" : {"prompt_tokens":1.5}}', MAX)).toBe(false);
    expect(usageTextLooksTrue('{"type":"message_start","message":{"usage":{"input_tokens":1e15}}}', MAX)).toBe(false);
    expect(usageTextLooksTrue('{"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":-3}}', MAX)).toBe(false);
    expect(usageTextLooksTrue('{"usage":null,"x":{"usage":"lots"}}', MAX)).toBe(false);
  });
});
