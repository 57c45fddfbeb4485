import { describe, expect, test } from "bun:test";
import { chatUsageToMessages, generateUsageToMessages, messagesUsageToChat } from "./usage.js";

// Section numbers (§) in the test names refer to docs/protocols.md.
describe("usage mapping (§4.4)", () => {
  test("chat → messages: input = prompt − cached − cache writes (floor 0)", () => {
    expect(chatUsageToMessages({ prompt_tokens: 100, completion_tokens: 7, total_tokens: 107, prompt_tokens_details: { cached_tokens: 30, cache_write_tokens: 20 } })).toEqual({
      input_tokens: 50,
      output_tokens: 7,
      cache_creation_input_tokens: 20,
      cache_read_input_tokens: 30,
    });
    expect(chatUsageToMessages({ prompt_tokens: 10, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 50 } }).input_tokens).toBe(0);
    expect(chatUsageToMessages({ prompt_tokens: 10, completion_tokens: 1, prompt_cache_hit_tokens: 6, prompt_cache_miss_tokens: 4 })).toMatchObject({
      input_tokens: 4,
      cache_read_input_tokens: 6,
    });
    expect(chatUsageToMessages(undefined)).toEqual({ input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  });

  test("messages → chat: prompt = input + cache read + cache write; total = prompt + completion", () => {
    expect(messagesUsageToChat({ input_tokens: 5, output_tokens: 9, cache_read_input_tokens: 100, cache_creation_input_tokens: 50 })).toEqual({
      prompt_tokens: 155,
      completion_tokens: 9,
      total_tokens: 164,
      prompt_tokens_details: { cached_tokens: 100 },
    });
  });

  test("generate → messages: thoughts are output; cached content is a cache read", () => {
    expect(generateUsageToMessages({ promptTokenCount: 50, cachedContentTokenCount: 20, candidatesTokenCount: 10, thoughtsTokenCount: 5, totalTokenCount: 65 })).toEqual({
      input_tokens: 30,
      output_tokens: 15,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 20,
      output_tokens_details: { thinking_tokens: 5 },
    });
  });
});
