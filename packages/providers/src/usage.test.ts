import { describe, expect, test } from "bun:test";
import {
  chatUsageToMessages,
  generateUsageToMessages,
  messagesUsageFields,
  messagesUsageToChat,
  totalsToMessagesUsage,
} from "./usage.js";

// Section numbers (§) in the test names refer to docs/protocols.md.
describe("usage mapping (§4.4)", () => {
  test("chat → messages: input = prompt − cached − cache writes (floor 0)", () => {
    expect(
      chatUsageToMessages({
        prompt_tokens: 100,
        completion_tokens: 7,
        total_tokens: 107,
        prompt_tokens_details: { cached_tokens: 30, cache_write_tokens: 20 },
      }),
    ).toEqual({
      input_tokens: 50,
      output_tokens: 7,
      cache_creation_input_tokens: 20,
      cache_read_input_tokens: 30,
      // Writes of unknown TTL are reported as five-minute writes (§1.6).
      cache_creation: { ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 0 },
    });
    expect(
      chatUsageToMessages({ prompt_tokens: 10, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 50 } })
        .input_tokens,
    ).toBe(0);
    expect(
      chatUsageToMessages({
        prompt_tokens: 10,
        completion_tokens: 1,
        prompt_cache_hit_tokens: 6,
        prompt_cache_miss_tokens: 4,
      }),
    ).toMatchObject({
      input_tokens: 4,
      cache_read_input_tokens: 6,
    });
    expect(chatUsageToMessages(undefined)).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
  });

  test("messages → chat: prompt = input + cache read + cache write; total = prompt + completion", () => {
    expect(
      messagesUsageToChat({
        input_tokens: 5,
        output_tokens: 9,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 50,
      }),
    ).toEqual({
      prompt_tokens: 155,
      completion_tokens: 9,
      total_tokens: 164,
      prompt_tokens_details: { cached_tokens: 100 },
    });
  });

  test("generate → messages: thoughts are output; cached content is a cache read", () => {
    expect(
      generateUsageToMessages({
        promptTokenCount: 50,
        cachedContentTokenCount: 20,
        candidatesTokenCount: 10,
        thoughtsTokenCount: 5,
        totalTokenCount: 65,
      }),
    ).toEqual({
      input_tokens: 30,
      output_tokens: 15,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 20,
      output_tokens_details: { thinking_tokens: 5 },
    });
  });
});

describe("cache writes by TTL (§1.6)", () => {
  test("the one-hour share is read from cache_creation and written back beside the five-minute share", () => {
    const read = messagesUsageFields({
      input_tokens: 5,
      output_tokens: 2,
      cache_creation_input_tokens: 300,
      cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 },
    });
    expect(read.cache_creation_1h_input_tokens).toBe(200);
    expect(
      totalsToMessagesUsage({
        input_tokens: 5,
        output_tokens: 2,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 300,
        cache_creation_1h_input_tokens: 200,
      }).cache_creation,
    ).toEqual({
      ephemeral_5m_input_tokens: 100,
      ephemeral_1h_input_tokens: 200,
    });
    expect(
      messagesUsageFields({ input_tokens: 5, output_tokens: 2, cache_creation: { ephemeral_1h_input_tokens: 0 } })
        .cache_creation_1h_input_tokens,
    ).toBeUndefined();
  });
});
