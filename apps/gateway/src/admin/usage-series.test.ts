import { describe, expect, test } from "bun:test";
import { GatewayError } from "@turnpike/providers";
import type { UsageAggregate } from "../storage/store";
import { dayParam, dayRange, MAX_SERIES_DAYS, toSeries } from "./usage-series";

const row = (
  day: string,
  model: string,
  requests: number,
  input: number,
  output: number,
  cost: number,
): UsageAggregate => ({
  day,
  model,
  requests,
  input_tokens: input,
  output_tokens: output,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  reasoning_tokens: 0,
  cost_usd: cost,
});

describe("dayRange", () => {
  test("every UTC day from the first to the last, across a month's end and a leap day", () => {
    expect(dayRange(Date.parse("2028-02-27T00:00:00Z"), Date.parse("2028-03-01T00:00:00Z"))).toEqual([
      "2028-02-27",
      "2028-02-28",
      "2028-02-29",
      "2028-03-01",
    ]);
    expect(dayRange(Date.parse("2026-11-20T00:00:00Z"), Date.parse("2026-11-20T00:00:00Z"))).toEqual(["2026-11-20"]);
  });

  test("a reversed or too long range is refused, naming the parameter", () => {
    const first = Date.parse("2026-01-01T00:00:00Z");
    expect(() => dayRange(first, first - 86_400_000)).toThrow(GatewayError);
    expect(dayRange(first, first + (MAX_SERIES_DAYS - 1) * 86_400_000)).toHaveLength(MAX_SERIES_DAYS);
    try {
      dayRange(first, first + MAX_SERIES_DAYS * 86_400_000);
      throw new Error("accepted a range of 367 days");
    } catch (e) {
      expect((e as GatewayError).param).toBe("since");
    }
  });

  test("dayParam reads YYYY-MM-DD only", () => {
    expect(dayParam(new URLSearchParams("since=2026-11-20"), "since", 0)).toBe(Date.parse("2026-11-20T00:00:00Z"));
    expect(dayParam(new URLSearchParams(""), "since", 42)).toBe(42);
    for (const v of ["2026-11-20T10:00:00Z", "yesterday", "2026-02-30", "2026-11-31", "2026-13-01"])
      expect(() => dayParam(new URLSearchParams({ since: v }), "since", 0)).toThrow(GatewayError);
  });
});

describe("toSeries", () => {
  test("zero-filled per model, biggest spender first; rows outside the range are not drawn", () => {
    const days = ["2026-11-20", "2026-11-21", "2026-11-22"];
    const series = toSeries(
      days,
      [
        row("2026-11-20", "beta-5", 2, 100, 40, 0.001),
        row("2026-11-22", "beta-5", 1, 10, 5, 0.0001),
        row("2026-11-21", "alpha-opus-4-8", 1, 1000, 500, 0.0175),
        row("2026-11-25", "delta-m3", 9, 9, 9, 9),
      ],
      "model",
      // Of beta-5's two requests on the 20th, one failed.
      [row("2026-11-20", "beta-5", 1, 10, 0, 0)],
    );
    expect(series).toEqual([
      { id: "alpha-opus-4-8", requests: [0, 1, 0], tokens: [0, 1500, 0], cost_usd: [0, 0.0175, 0], errors: [0, 0, 0] },
      { id: "beta-5", requests: [2, 0, 1], tokens: [140, 0, 15], cost_usd: [0.001, 0, 0.0001], errors: [1, 0, 0] },
    ]);
  });
});
