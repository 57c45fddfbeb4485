import { describe, expect, test } from "bun:test";
import { anthropicLimitHeaders, chatLimitHeaders, formatDuration } from "../formats/rate-limit-headers";
import { RateLimiter } from "./limiter-store";

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe("requests per minute", () => {
  test("admits rpm requests at once, then refuses with the wait until one refills", () => {
    const c = clock();
    const rl = new RateLimiter(c.now);
    const limits = { rpm: 3, tpm: null };
    expect(rl.admit("k", limits, 10).requests!.remaining).toBe(2);
    expect(rl.admit("k", limits, 10).requests!.remaining).toBe(1);
    expect(rl.admit("k", limits, 10).ok).toBe(true);
    const refused = rl.admit("k", limits, 10);
    expect(refused.ok).toBe(false);
    expect(refused.limitedBy).toBe("requests");
    // One request refills every 20 s at 3 rpm.
    expect(refused.retryAfterS).toBe(20);
    c.advance(19_000);
    expect(rl.admit("k", limits, 10).ok).toBe(false);
    c.advance(1_000);
    expect(rl.admit("k", limits, 10).ok).toBe(true);
    expect(rl.admit("k", limits, 10).ok).toBe(false);
  });

  test("keys are limited separately, and keys without limits are never refused", () => {
    const rl = new RateLimiter(clock().now);
    expect(rl.admit("a", { rpm: 1, tpm: null }, 1).ok).toBe(true);
    expect(rl.admit("a", { rpm: 1, tpm: null }, 1).ok).toBe(false);
    expect(rl.admit("b", { rpm: 1, tpm: null }, 1).ok).toBe(true);
    for (let i = 0; i < 1000; i++) expect(rl.admit("free", { rpm: null, tpm: null }, 1000).ok).toBe(true);
  });
});

describe("tokens per minute", () => {
  test("charges the estimate up front and settles with the real count", () => {
    const c = clock();
    const rl = new RateLimiter(c.now);
    const limits = { rpm: null, tpm: 1000 };
    const a = rl.admit("k", limits, 100);
    expect(a.tokens!.remaining).toBe(900);
    // The reply used 700 tokens in all, 600 more than estimated.
    rl.settle("k", limits, 100, 700);
    const b = rl.admit("k", limits, 100);
    expect(b.ok).toBe(true);
    expect(b.tokens!.remaining).toBe(200);
    rl.settle("k", limits, 100, 450); // 1,150 used of 1,000: in debt
    const refused = rl.admit("k", limits, 100);
    expect(refused.ok).toBe(false);
    expect(refused.limitedBy).toBe("tokens");
    // 151 tokens of debt + 1 to admit, at 1000/min: 9.06 s → 10 s.
    expect(refused.retryAfterS).toBe(10);
    c.advance(10_000);
    expect(rl.admit("k", limits, 100).ok).toBe(true);
  });
});

describe("headers", () => {
  test("chat durations and messages RFC 3339 resets", () => {
    expect(formatDuration(450)).toBe("450ms");
    expect(formatDuration(12_000)).toBe("12s");
    expect(formatDuration(90_000)).toBe("1m30s");
    const c = clock(Date.parse("2026-11-22T10:00:00Z"));
    const rl = new RateLimiter(c.now);
    const a = rl.admit("k", { rpm: 60, tpm: 6000 }, 600);
    const chat = chatLimitHeaders(a, c.now());
    expect(chat).toEqual({
      "x-ratelimit-limit-requests": "60",
      "x-ratelimit-remaining-requests": "59",
      "x-ratelimit-reset-requests": "1s",
      "x-ratelimit-limit-tokens": "6000",
      "x-ratelimit-remaining-tokens": "5400",
      "x-ratelimit-reset-tokens": "6s",
    });
    const msgs = anthropicLimitHeaders(a, c.now());
    expect(msgs["anthropic-ratelimit-requests-limit"]).toBe("60");
    expect(msgs["anthropic-ratelimit-requests-remaining"]).toBe("59");
    expect(msgs["anthropic-ratelimit-requests-reset"]).toBe("2026-11-22T10:00:01Z");
    expect(msgs["anthropic-ratelimit-tokens-reset"]).toBe("2026-11-22T10:00:06Z");
  });
});
