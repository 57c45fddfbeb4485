import { describe, expect, test } from "bun:test";
import { loadConfig } from "../config/config";
import { buildCatalog } from "./catalog";

const vendors = loadConfig({}).vendors;
const catalog = buildCatalog([], vendors);

describe("cost per token class", () => {
  test("each class at its own price: uncached input, cache reads, 5-minute and 1-hour writes, output", () => {
    const haiku = catalog.get("alpha-haiku-4-5")!;
    expect([haiku.cache_read_per_mtok, haiku.cache_write_5m_per_mtok, haiku.cache_write_1h_per_mtok]).toEqual([
      0.1, 1.25, 2,
    ]);
    // 1000 uncached × $1 + 20000 read × $0.10 + 3000 written (1000 of them for an hour) × $1.25 / $2 + 500 out × $5, per million.
    const usd = catalog.cost(haiku, {
      input_tokens: 1000,
      cache_read_input_tokens: 20_000,
      cache_creation_input_tokens: 3000,
      cache_creation_1h_input_tokens: 1000,
      output_tokens: 500,
    });
    expect(usd).toBe((1000 * 1 + 20_000 * 0.1 + 2000 * 1.25 + 1000 * 2 + 500 * 5) / 1e6);
    expect(usd).toBe(0.01);
  });

  test("without cache tokens the cost is input and output, as before", () => {
    const beta = catalog.get("beta-5")!;
    expect(
      catalog.cost(beta, {
        input_tokens: 1_000_000,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
        output_tokens: 1_000_000,
      }),
    ).toBe(1.25 + 6.25);
  });

  test("a config row without cache prices bills cached tokens as plain input; bad values are refused", () => {
    const custom = buildCatalog(
      [{ id: "c", owned_by: "alpha", input_per_mtok: 2, output_per_mtok: 4, context_window: 1000 }],
      vendors,
    ).get("c")!;
    expect([
      custom.cache_read_per_mtok,
      custom.cache_write_5m_per_mtok,
      custom.cache_write_1h_per_mtok,
      custom.prompt_cache,
    ]).toEqual([2, 2, 2, "auto"]);
    const priced = buildCatalog(
      [{ id: "alpha-haiku-4-5", cache_read_per_mtok: 0.05, prompt_cache: "off" }],
      vendors,
    ).get("alpha-haiku-4-5")!;
    expect([priced.cache_read_per_mtok, priced.prompt_cache]).toEqual([0.05, "off"]);
    expect(() => buildCatalog([{ id: "alpha-haiku-4-5", cache_read_per_mtok: -1 }], vendors)).toThrow(
      "models[0].cache_read_per_mtok: must be a non-negative number, got -1",
    );
    expect(() => buildCatalog([{ id: "alpha-haiku-4-5", prompt_cache: "always" }], vendors)).toThrow(
      'models[0].prompt_cache: must be auto or off, got "always"',
    );
  });

  test("a service tier bills every token class at the row's multiplier; a config row sets its own tiers, checked", () => {
    const beta = catalog.get("beta-5")!;
    const tokens = {
      input_tokens: 1_000_000,
      cache_read_input_tokens: 1_000_000,
      cache_creation_input_tokens: 0,
      output_tokens: 1_000_000,
    };
    const base = catalog.cost(beta, tokens);
    expect(base).toBe(1.25 + 0.125 + 6.25);
    expect(catalog.cost(beta, { ...tokens, service_tier: "priority" })).toBe(base * 2);
    expect(catalog.cost(beta, { ...tokens, service_tier: "flex" })).toBe(base / 2);
    // A row without the tier bills the default price (the request was not sent at it).
    const delta = catalog.get("delta-m3")!;
    expect(catalog.cost(delta, { ...tokens, service_tier: "priority" })).toBe(catalog.cost(delta, tokens));
    const own = buildCatalog([{ id: "delta-m3", service_tiers: { priority: 1.5 } }], vendors).get("delta-m3")!;
    expect(own.service_tiers).toEqual({ priority: 1.5 });
    expect(() => buildCatalog([{ id: "delta-m3", service_tiers: { priority: 0 } }], vendors)).toThrow(
      "models[0].service_tiers.priority: must be a positive number (the multiplier of every token price at the priority tier), got 0",
    );
    expect(() => buildCatalog([{ id: "delta-m3", service_tiers: { turbo: 3 } }], vendors)).toThrow(
      "models[0].service_tiers",
    );
  });
});
