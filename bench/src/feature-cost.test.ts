import { expect, test } from "bun:test";
import { FEATURES, VARIANTS, renderFeatureCost } from "./feature-cost";
import { BASELINES, PUBLISHED_BODY_BYTES, SCENARIOS } from "./scenarios";

test("the published shape sends 1 KiB each way, the upstream answering after 25 ms, at c=32 only", () => {
  const s = SCENARIOS.find((x) => x.published)!;
  expect(s.gateway.format).toBe("messages");
  expect(s.baseline).toBe("chat-1k");
  expect(s.concurrencies).toEqual([32]);
  expect(new TextEncoder().encode(s.gateway.body).length).toBe(PUBLISHED_BODY_BYTES);
  expect(new TextEncoder().encode(BASELINES["chat-1k"].body).length).toBe(PUBLISHED_BODY_BYTES);
  expect(s.gateway.body).toContain("[sim first_byte=25]");
  expect(BASELINES["chat-1k"].body).toContain("[sim first_byte=25]");
});

test("every feature row names two variants that exist, and no variant is left unused", () => {
  const names = VARIANTS.map((v) => v.name);
  const used = new Set(FEATURES.flatMap((f) => [f.with, f.without]));
  for (const f of FEATURES) {
    expect(names).toContain(f.with);
    expect(names).toContain(f.without);
  }
  expect([...used].sort()).toEqual([...names].sort());
});

test("the table gives the added µs from the ratio and marks a pending feature", () => {
  const text = renderFeatureCost({
    rounds: 4,
    seconds: 2,
    connections: 16,
    rows: [
      {
        feature: "key budget",
        what: "the key has a monthly budget",
        scenario: "messages passthrough",
        without_us: 100,
        with_us: 110,
        ratio: 1.05,
        ratio_min: 1.01,
        ratio_max: 1.09,
      },
      {
        feature: "continuation",
        what: "—",
        scenario: "—",
        without_us: Number.NaN,
        with_us: Number.NaN,
        ratio: Number.NaN,
        ratio_min: Number.NaN,
        ratio_max: Number.NaN,
        pending: "not on main yet",
      },
    ],
  });
  expect(text).toContain("1.05×");
  expect(text).toContain("1.01–1.09");
  expect(text).toMatch(/key budget .* 5\.0 /);
  expect(text).toMatch(/continuation .*pending.*not on main yet/);
});
