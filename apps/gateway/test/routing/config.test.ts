/** Bad routing config is refused at start-up, naming the file, the path inside it and the rule. */
import { describe, expect, test } from "bun:test";
import { parseRouting } from "../../src/dispatch/routing-config";
import { buildCatalog } from "../../src/dispatch/catalog";
import { buildRouter } from "../../src/dispatch/deployments";
import { buildUpstreams } from "../../src/dispatch/upstreams";
import { loadConfig, vendorRows } from "../../src/config/config";

function router(models: unknown[], vendors?: unknown, routing?: unknown) {
  const rows = vendorRows(vendors, "t.yaml").map((r) => ({
    id: r.id,
    protocol: r.protocol,
    auth: r.auth,
    baseURL: r.base_url,
    apiKey: undefined,
    apiKeyEnv: r.api_key_env,
  }));
  const catalog = buildCatalog(models, rows);
  return buildRouter(
    catalog,
    buildUpstreams(rows, "http://sim.invalid"),
    models,
    parseRouting(routing, "t.yaml"),
    "t.yaml",
  );
}

describe("routing config", () => {
  test("defaults, and the file's values over them", () => {
    expect(loadConfig({}).routing).toEqual({
      retries: 0,
      retryAfterMaxS: 10,
      timeouts: { connectMs: 10_000, firstByteMs: 120_000, idleMs: 300_000 },
      breaker: { failures: 3, cooldownS: 30 },
      continuation: true,
      continuationAttempts: 2,
    });
    const r = parseRouting(
      {
        retries: 2,
        timeouts: { idle_ms: 5000 },
        breaker: { cooldown_s: 5 },
        continuation: false,
        continuation_attempts: 1,
      },
      "t.yaml",
    );
    expect(r).toEqual({
      retries: 2,
      retryAfterMaxS: 10,
      timeouts: { connectMs: 10_000, firstByteMs: 120_000, idleMs: 5000 },
      breaker: { failures: 3, cooldownS: 5 },
      continuation: false,
      continuationAttempts: 1,
    });
  });

  test.each([
    [{ retries: -1 }, "t.yaml: routing.retries: must be a whole number from 0 to 10, got -1"],
    [
      { timeouts: { connect_ms: "fast" } },
      't.yaml: routing.timeouts.connect_ms: must be a whole number from 1 to 86400000, got "fast"',
    ],
    [
      { timeouts: { read_ms: 5 } },
      "t.yaml: routing.timeouts.read_ms: unknown field `read_ms` (known: connect_ms, first_byte_ms, idle_ms)",
    ],
    [{ breaker: { failures: 0 } }, "t.yaml: routing.breaker.failures: must be a whole number from 1 to 1000, got 0"],
    [{ retry: 2 }, "t.yaml: routing.retry: unknown field `retry` — did you mean `retries`?"],
  ])("routing %j is refused", (raw, message) => {
    expect(() => parseRouting(raw, "t.yaml")).toThrow(message);
  });

  test("a model's deployments, fallbacks and timeouts are built, absent = one deployment on its vendor", () => {
    const r = router(
      [
        {
          id: "alpha-haiku-4-5",
          deployments: [
            { vendor: "alpha", weight: 3 },
            { vendor: "alpha-eu", upstream_model: "haiku-eu", rpm: 5 },
          ],
          fallbacks: ["beta-5"],
          timeouts: { idle_ms: 100 },
        },
      ],
      { "alpha-eu": { protocol: "messages" } },
    );
    const route = r.route("alpha-haiku-4-5")!;
    expect(
      route.deployments.map((d) => [d.name, d.weight, d.rpm, d.target.entry.upstream_model, d.target.upstream.vendor]),
    ).toEqual([
      ["alpha", 3, undefined, "alpha-haiku-4-5", "alpha"],
      ["alpha-eu", 1, 5, "haiku-eu", "alpha-eu"],
    ]);
    expect(route.fallbacks).toEqual(["beta-5"]);
    expect(route.timeouts).toEqual({ connectMs: 10_000, firstByteMs: 120_000, idleMs: 100 });
    expect(r.route("beta-5")!.deployments.map((d) => d.name)).toEqual(["beta"]);
  });

  test("each route's chain is compiled when the router is built: one deployment and no fallback is the direct attempt", () => {
    const r = router(
      [
        { id: "alpha-haiku-4-5", deployments: [{ vendor: "alpha" }, { vendor: "alpha-eu" }] },
        { id: "beta-5", fallbacks: ["gamma-3-flash"] },
        { id: "gamma-3-flash", deployments: [{ vendor: "gamma", rpm: 10 }] },
      ],
      { "alpha-eu": { protocol: "messages" } },
    );
    // A choice of deployments, or a fallback to try: the planned loop.
    expect(r.route("alpha-haiku-4-5")!.direct).toBeUndefined();
    expect(r.route("beta-5")!.direct).toBeUndefined();
    // One deployment (its own rpm still counted by the router's pick), and a model of no row at all.
    const gamma = r.route("gamma-3-flash")!;
    expect(gamma.direct).toBe(gamma.deployments[0]!);
    expect(gamma.direct!.rpm).toBe(10);
    const other = r.list(0).find((d) => !["alpha-haiku-4-5", "beta-5", "gamma-3-flash"].includes(d.model))!;
    expect(r.route(other.model)!.direct?.name).toBe(other.vendor);
  });

  test("a deployment continues a cut stream only while the routing section allows continuations at all", () => {
    const models = [{ id: "beta-5", deployments: [{ vendor: "beta", continuation: true }, { vendor: "gamma" }] }];
    const names = (routing: unknown) =>
      router(models, undefined, routing)
        .route("beta-5")!
        .deployments.map((d) => [d.name, d.continuation]);
    expect(names(undefined)).toEqual([
      ["beta", true],
      ["gamma", true],
    ]);
    expect(names({ continuation: false })).toEqual([
      ["beta", false],
      ["gamma", false],
    ]);
    expect(names({ continuation_attempts: 0 })).toEqual([
      ["beta", false],
      ["gamma", false],
    ]);
    const off = [{ id: "beta-5", deployments: [{ vendor: "beta", continuation: false }, { vendor: "gamma" }] }];
    expect(
      router(off)
        .route("beta-5")!
        .deployments.map((d) => [d.name, d.continuation]),
    ).toEqual([
      ["beta", false],
      ["gamma", true],
    ]);
  });

  test.each([
    [
      { id: "beta-5", deployments: [{ vendor: "nobody" }] },
      't.yaml: models[0].deployments[0].vendor: must be one of alpha, beta, gamma, delta, got "nobody"',
    ],
    [{ id: "beta-5", deployments: [] }, "t.yaml: models[0].deployments: must be a non-empty list"],
    [
      { id: "beta-5", deployments: [{ vendor: "beta", weight: 0 }] },
      "t.yaml: models[0].deployments[0].weight: must be a whole number from 1 to 1000000, got 0",
    ],
    [
      { id: "beta-5", deployments: [{ vendor: "beta" }, { vendor: "beta" }] },
      "t.yaml: models[0].deployments[1]: the same vendor and upstream_model twice",
    ],
    [
      { id: "beta-5", fallbacks: ["beta-9"] },
      't.yaml: models[0].fallbacks[0]: must be a catalog model id, got "beta-9"',
    ],
    [{ id: "beta-5", fallbacks: ["beta-5"] }, "t.yaml: models[0].fallbacks[0]: a model cannot fall back to itself"],
    [
      { id: "beta-embedding-3-small", fallbacks: ["beta-5"] },
      "t.yaml: models[0].fallbacks[0]: beta-5 is not an embedding model and beta-embedding-3-small is; a fallback must serve the same calls",
    ],
    [
      { id: "beta-5", fallbacks: ["gamma-embedding-1"] },
      "t.yaml: models[0].fallbacks[0]: gamma-embedding-1 is an embedding model and beta-5 is not; a fallback must serve the same calls",
    ],
    [
      { id: "beta-5", timeouts: { idle_ms: 0 } },
      "t.yaml: models[0].timeouts.idle_ms: must be a whole number from 1 to 86400000, got 0",
    ],
  ])("model row %j is refused", (row, message) => {
    expect(() => router([row])).toThrow(message);
  });
});
