/**
 * Fallbacks: once a model's deployments are exhausted, its fallbacks in order, across protocols
 * (signed thinking dropped from the replayed history with a warning); a prompt over a model's
 * window goes to the first fallback with room; when everything failed, the last error.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { Harness } from "../harness";
import { ask, label, recordOf, routedGateway, VARIANTS } from "./setup";

let h: Harness;
beforeAll(async () => {
  h = await routedGateway(`
vendors:
  alpha-backup: { protocol: messages }
models:
  - id: alpha-sonnet-4-6
    deployments: [{ vendor: alpha }, { vendor: alpha-backup }]
    fallbacks: [beta-5.5, gamma-3-pro]
  - id: alpha-haiku-4-5
    fallbacks: [alpha-opus-4-8, gamma-3-pro]
routing:
  breaker: { failures: 1000, cooldown_s: 30 }
`);
});
afterAll(() => h.close());
beforeEach(() => h.gw.simulator!.clearFaults());

const sim = () => h.gw.simulator!;
const sentTo = (from: number, key: string) =>
  sim()
    .requests.slice(from)
    .filter((r) =>
      (r.headers["x-api-key"] ?? r.headers.authorization ?? r.headers["x-goog-api-key"] ?? "").endsWith(key),
    );

/** A history with a signed thinking block (messages) or plain turns (chat). */
function history(format: "messages" | "chat", last: string): unknown[] {
  if (format === "chat")
    return [
      { role: "user", content: "Think first." },
      { role: "assistant", content: "Done." },
      { role: "user", content: last },
    ];
  return [
    { role: "user", content: "Think first." },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Let me see.", signature: "c2lnbmVkLWJ5LWFscGhh" },
        { type: "text", text: "Done." },
      ],
    },
    { role: "user", content: last },
  ];
}

describe("both deployments fail: the first fallback serves, across protocols", () => {
  for (const v of VARIANTS) {
    test(label(v), async () => {
      sim().fault("simulator-alpha", { status: 529 });
      sim().fault("simulator-alpha-backup", { status: 503 });
      const from = sim().requests.length;
      const a = await ask(h, v, "alpha-sonnet-4-6", "", {
        messages: history(v.format, `Again [sim text="beta took over"]`),
      });
      expect(a.status).toBe(200);
      expect(a.text).toBe("beta took over");
      expect(a.model).toBe("beta-5.5");
      expect(a.res.headers.get("x-turnpike-model")).toBe("beta-5.5");
      expect(a.res.headers.get("x-turnpike-fallback-from")).toBe("alpha-sonnet-4-6");
      expect(a.res.headers.get("x-turnpike-deployment")).toBe("beta");
      expect(a.res.headers.get("x-turnpike-attempts")).toBe("3");
      const [beta] = sentTo(from, "simulator-beta");
      expect(beta).toBeDefined();
      expect((beta!.body as { model: string }).model).toBe("beta-5.5");
      if (v.format === "messages") {
        // The signed thinking could not be replayed to a chat upstream: dropped, with a warning, no 400.
        expect(JSON.stringify(beta!.body)).not.toContain("Let me see.");
        expect(a.res.headers.get("x-turnpike-warning")).toContain("thinking");
      }
      const row = await recordOf(h, a.res);
      expect(row).toMatchObject({
        model: "beta-5.5",
        requested_model: "alpha-sonnet-4-6",
        deployment: "beta",
        attempts: 3,
        status: 200,
      });
      // Priced as the model that served.
      const beta55 = h.gw.deps.catalog.get("beta-5.5")!;
      expect(row.cost_usd).toBeCloseTo(
        (row.input_tokens * beta55.input_per_mtok + row.output_tokens * beta55.output_per_mtok) / 1e6,
        9,
      );
      expect(row.cost_usd).toBeGreaterThan(0);
    });
  }
});

describe("a prompt over the window goes to the first fallback with room", () => {
  for (const v of VARIANTS) {
    test(`${label(v)}: the upstream's context-length error skips a fallback of the same window`, async () => {
      sim().fault("simulator-alpha", { status: 400, message: "prompt is too long: 250000 tokens > 200000 maximum" });
      const from = sim().requests.length;
      const a = await ask(h, v, "alpha-haiku-4-5", `Long [sim text="gamma has room"]`);
      expect(a.status).toBe(200);
      expect(a.text).toBe("gamma has room");
      expect(a.model).toBe("gamma-3-pro");
      expect(a.res.headers.get("x-turnpike-fallback-from")).toBe("alpha-haiku-4-5");
      expect(a.res.headers.get("x-turnpike-attempts")).toBe("2");
      // alpha-opus-4-8 has the same 200k window: never asked.
      expect(
        sim()
          .requests.slice(from)
          .some((r) => JSON.stringify(r.body).includes("alpha-opus-4-8")),
      ).toBe(false);
      expect(await recordOf(h, a.res)).toMatchObject({
        model: "gamma-3-pro",
        requested_model: "alpha-haiku-4-5",
        deployment: "gamma",
      });
    });
    test(`${label(v)}: a prompt the catalog knows is too long is not sent to the small window at all`, async () => {
      const from = sim().requests.length;
      // One token in two bytes: the built-in simulator answers bodies of at most 1 MiB.
      const a = await ask(h, v, "alpha-haiku-4-5", `${" x".repeat(210_000)} [sim text="straight to gamma"]`);
      expect(a.status).toBe(200);
      expect(a.text).toBe("straight to gamma");
      expect(a.res.headers.get("x-turnpike-model")).toBe("gamma-3-pro");
      expect(a.res.headers.get("x-turnpike-attempts")).toBe("1");
      expect(
        sim()
          .requests.slice(from)
          .map((r) => r.path)
          .some((p) => p.startsWith("/v1/messages")),
      ).toBe(false);
    });
  }
});

describe("everything failed: the last upstream error, in the client's format", () => {
  for (const v of VARIANTS) {
    test(label(v), async () => {
      for (const k of ["alpha", "alpha-backup", "beta", "gamma"])
        sim().fault(`simulator-${k}`, { status: 529, retry_after: 4 });
      const a = await ask(h, v, "alpha-sonnet-4-6", "Hi");
      // gamma's 529 was last; a chat client reads an overload as 503.
      expect(a.status).toBe(v.format === "messages" ? 529 : 503);
      expect(a.res.headers.get("retry-after")).toBe("4");
      expect(a.res.headers.get("x-turnpike-attempts")).toBe("4");
      expect(a.res.headers.get("x-turnpike-model")).toBe("gamma-3-pro");
      const row = await recordOf(h, a.res);
      expect(row).toMatchObject({
        model: "gamma-3-pro",
        requested_model: "alpha-sonnet-4-6",
        attempts: 4,
        cost_usd: 0,
      });
    });
  }
});
