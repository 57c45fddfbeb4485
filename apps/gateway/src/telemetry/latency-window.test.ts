import { expect, test } from "bun:test";
import { LatencyWindow } from "./latency-window";

test("p50 and p95 by model and deployment: successes' latency, streams' first token, failures counted apart", () => {
  const w = new LatencyWindow(1000);
  // 1..100 ms on alpha, every third one a stream with a first token at a tenth of it.
  for (let i = 1; i <= 100; i++) w.add("m", "alpha", i, i % 3 === 0 ? i / 10 : undefined, 200);
  w.add("m", "alpha", 99_999, undefined, 502);
  w.add("m", "beta", 40, undefined, 200);
  expect(w.rows()).toEqual([
    {
      model: "m",
      deployment: "alpha",
      requests: 101,
      errors: 1,
      latency_p50_ms: 50,
      latency_p95_ms: 95,
      streams: 33,
      ttft_p50_ms: 5.1,
      ttft_p95_ms: 9.6,
    },
    {
      model: "m",
      deployment: "beta",
      requests: 1,
      errors: 0,
      latency_p50_ms: 40,
      latency_p95_ms: 40,
      streams: 0,
      ttft_p50_ms: null,
      ttft_p95_ms: null,
    },
  ]);
});

test("keeps only the last `capacity` requests", () => {
  const w = new LatencyWindow(10);
  for (let i = 0; i < 25; i++) w.add("m", "d", i < 15 ? 1000 : 1, undefined, 200);
  expect(w.rows()).toMatchObject([{ requests: 10, latency_p50_ms: 1, latency_p95_ms: 1 }]);
});
