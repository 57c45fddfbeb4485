import { describe, expect, test } from "bun:test";
import { retryDelayMs, shouldRetry } from "./retry-policy.js";

const reply = (status: number, headers: Record<string, string> = {}) => new Response(null, { status, headers });

describe("shouldRetry", () => {
  test("retries 408, 409, 429 and 5xx, not other 4xx", () => {
    expect([408, 409, 429, 500, 502, 503, 529].map((s) => shouldRetry(reply(s)))).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
    expect([400, 401, 403, 404, 422].map((s) => shouldRetry(reply(s)))).toEqual([false, false, false, false, false]);
  });

  test("x-should-retry wins over the status", () => {
    expect(shouldRetry(reply(500, { "x-should-retry": "false" }))).toBe(false);
    expect(shouldRetry(reply(400, { "x-should-retry": "true" }))).toBe(true);
  });
});

describe("retryDelayMs", () => {
  test("backs off from 0.5 s, doubling, capped at 8 s, with up to 25 % jitter", () => {
    const none = () => 0;
    const most = () => 1;
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(n, undefined, none))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000,
    ]);
    expect(retryDelayMs(1, undefined, most)).toBe(375);
    expect(retryDelayMs(5, undefined, most)).toBe(6000);
  });

  test("retry-after-ms wins over retry-after", () => {
    expect(retryDelayMs(1, new Headers({ "retry-after-ms": "1500", "retry-after": "9" }))).toBe(1500);
  });

  test("retry-after in seconds or as an HTTP date", () => {
    expect(retryDelayMs(1, new Headers({ "retry-after": "2" }))).toBe(2000);
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    const ms = retryDelayMs(1, new Headers({ "retry-after": inTenSeconds }));
    expect(ms).toBeGreaterThan(8_000);
    expect(ms).toBeLessThanOrEqual(10_000);
  });

  test("a hint over a minute, zero or garbage falls back to the backoff", () => {
    for (const value of ["600", "0", "soon"]) {
      expect(retryDelayMs(2, new Headers({ "retry-after": value }), () => 0)).toBe(1000);
    }
  });
});
