import { describe, expect, test } from "bun:test";
import { Registry } from "prom-client";
import { LightCounter, LightHistogram } from "./light-metrics";

describe("light metrics, rendered by prom-client's registry", () => {
  test("a histogram: cumulative buckets (a bound holds the values equal to it), +Inf, sum and count per label set", async () => {
    const registry = new Registry();
    const h = new LightHistogram("wait_seconds", "How long.", ["route"], [0.01, 1], registry);
    for (const v of [0.005, 0.01, 0.5, 100]) h.observe(h.child("a"), v);
    h.observe(h.child("b"), 2);
    const text = await registry.metrics();
    expect(text).toContain("# TYPE wait_seconds histogram");
    expect(text).toContain('wait_seconds_bucket{route="a",le="0.01"} 2');
    expect(text).toContain('wait_seconds_bucket{route="a",le="1"} 3');
    expect(text).toContain('wait_seconds_bucket{route="a",le="+Inf"} 4');
    expect(text).toContain('wait_seconds_sum{route="a"} 100.515');
    expect(text).toContain('wait_seconds_count{route="a"} 4');
    expect(text).toContain('wait_seconds_bucket{route="b",le="1"} 0');
    expect(text).toContain('wait_seconds_count{route="b"} 1');
  });

  test("a counter: one child per label set, the same child for the same values (a number stays one label value)", async () => {
    const registry = new Registry();
    const c = new LightCounter("calls_total", "Calls.", ["route", "status"], registry);
    c.child("chat", 200).value += 1;
    c.child("chat", 200).value += 2;
    c.child("chat", 429).value += 1;
    expect(c.child("chat", 200)).toBe(c.child("chat", 200));
    const text = await registry.metrics();
    expect(text).toContain("# TYPE calls_total counter");
    expect(text).toContain('calls_total{route="chat",status="200"} 3');
    expect(text).toContain('calls_total{route="chat",status="429"} 1');
  });

  test("six labels: label sets that differ only in one value, at any place, are children of their own", async () => {
    const registry = new Registry();
    const c = new LightCounter("six_total", "Six.", ["a", "b", "c", "d", "e", "f"], registry);
    c.child("x", "x", "x", "x", "x", "x").value += 1;
    for (let i = 0; i < 6; i++) {
      const v = ["x", "x", "x", "x", "x", "x"];
      v[i] = "y";
      c.child(...v).value += i + 2;
    }
    c.child("x", "x", "x", "x", "x", "x").value += 10;
    const text = await registry.metrics();
    expect(text).toContain('six_total{a="x",b="x",c="x",d="x",e="x",f="x"} 11');
    expect(text).toContain('six_total{a="y",b="x",c="x",d="x",e="x",f="x"} 2');
    expect(text).toContain('six_total{a="x",b="x",c="y",d="x",e="x",f="x"} 4');
    expect(text).toContain('six_total{a="x",b="x",c="x",d="x",e="x",f="y"} 7');
    expect(text.split("\n").filter((l) => l.startsWith("six_total{"))).toHaveLength(7);
  });
});
