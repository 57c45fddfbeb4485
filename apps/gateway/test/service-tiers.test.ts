/**
 * Service tiers (docs/protocols.md, "Service tiers"): a tier a client asks for is sent to an
 * upstream whose catalog row prices it, in that protocol's own field; the ledger bills every
 * token at the row's multiplier for it; the reply says which tier served. A tier the row does not
 * sell is not sent, is billed at the default price, and is named in a warning.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_KEY, startHarness, type Harness } from "./harness";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const sentBody = () => h.gw.simulator!.requests.at(-1)!.body as Record<string, unknown>;

async function costOf(res: Response): Promise<number> {
  const id = res.headers.get("x-request-id")!;
  const usage = await fetch(`${h.url}/admin/usage?key_id=${h.keyId}&limit=10000`, {
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  const row = ((await usage.json()) as { data: { request_id: string; cost_usd: number }[] }).data.find(
    (r) => r.request_id === id,
  );
  expect(row).toBeDefined();
  return row!.cost_usd;
}

/** The same prompt (the simulator's usage is deterministic), at a tier and at none. */
async function pair(path: string, body: (tier?: string) => Record<string, unknown>, headers: HeadersInit = {}) {
  const plain = await h.call(path, { method: "POST", headers, body: JSON.stringify(body()) });
  expect(plain.status).toBe(200);
  return { plain, plainCost: await costOf(plain) };
}

describe("service tiers", () => {
  test("Responses → chat upstream, priority: sent as service_tier, billed at twice the price, said in the reply", async () => {
    const body = (tier?: string) => ({
      model: "beta-5",
      input: '[sim text="Tiered."]',
      ...(tier ? { service_tier: tier } : {}),
    });
    const { plainCost } = await pair("/v1/responses", body);
    const res = await h.call("/v1/responses", { method: "POST", body: JSON.stringify(body("priority")) });
    expect(res.status).toBe(200);
    expect(sentBody().service_tier).toBe("priority");
    expect(res.headers.get("x-turnpike-service-tier")).toBe("priority");
    expect(res.headers.get("x-turnpike-warning") ?? "").not.toContain("service_tier");
    expect(((await res.json()) as { service_tier: string }).service_tier).toBe("priority");
    expect(await costOf(res)).toBeCloseTo(plainCost * 2, 9);
  });

  test("chat → generateContent upstream, flex: sent as serviceTier, billed at half the price", async () => {
    const body = (tier?: string) => ({
      model: "gamma-3-flash",
      messages: [{ role: "user", content: '[sim text="Flexible."]' }],
      ...(tier ? { service_tier: tier } : {}),
    });
    const { plainCost } = await pair("/v1/chat/completions", body);
    expect(sentBody().serviceTier).toBeUndefined();
    const res = await h.call("/v1/chat/completions", { method: "POST", body: JSON.stringify(body("flex")) });
    expect(res.status).toBe(200);
    expect(sentBody().serviceTier).toBe("flex");
    expect(res.headers.get("x-turnpike-service-tier")).toBe("flex");
    expect(((await res.clone().json()) as { service_tier: string }).service_tier).toBe("flex");
    expect(await costOf(res)).toBeCloseTo(plainCost / 2, 9);
  });

  test("chat → chat upstream (passthrough), priority: the client's field goes on, billed at the priority price", async () => {
    const body = (tier?: string) => ({
      model: "beta-5.5",
      messages: [{ role: "user", content: '[sim text="Passed."]' }],
      ...(tier ? { service_tier: tier } : {}),
    });
    const { plainCost } = await pair("/v1/chat/completions", body);
    const res = await h.call("/v1/chat/completions", { method: "POST", body: JSON.stringify(body("priority")) });
    expect(sentBody().service_tier).toBe("priority");
    expect(res.headers.get("x-turnpike-service-tier")).toBe("priority");
    // The vendor's reply, relayed, names the tier that served.
    expect(((await res.clone().json()) as { service_tier: string }).service_tier).toBe("priority");
    expect(await costOf(res)).toBeCloseTo(plainCost * 2, 9);
  });

  test("a streamed Responses reply says its tier in every snapshot", async () => {
    const res = await h.call("/v1/responses", {
      method: "POST",
      body: JSON.stringify({ model: "gamma-3-pro", input: "hi", stream: true, service_tier: "flex" }),
    });
    const text = await res.text();
    const tiers = [...text.matchAll(/"service_tier":"(\w+)"/g)].map((m) => m[1]);
    expect(tiers.length).toBeGreaterThanOrEqual(3);
    expect(new Set(tiers)).toEqual(new Set(["flex"]));
    expect(sentBody().serviceTier).toBe("flex");
  });

  test("a tier the model's row does not sell: not sent, billed at the default price, a warning naming the field", async () => {
    const body = (tier?: string) => ({
      model: "alpha-haiku-4-5",
      messages: [{ role: "user", content: '[sim text="Standard."]' }],
      ...(tier ? { service_tier: tier } : {}),
    });
    const { plainCost } = await pair("/v1/chat/completions", body);
    const res = await h.call("/v1/chat/completions", { method: "POST", body: JSON.stringify(body("priority")) });
    expect(res.status).toBe(200);
    expect(sentBody().service_tier).toBeUndefined();
    expect(res.headers.get("x-turnpike-service-tier")).toBeNull();
    expect(res.headers.get("x-turnpike-warning")).toContain(
      'service_tier: alpha-haiku-4-5 is not sold at the "priority" tier through Turnpike (it has the default tier only)',
    );
    expect(await costOf(res)).toBe(plainCost);
    // Passthrough to a chat vendor without tiers (delta): the client's value is not passed on either.
    const delta = await h.call("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({ model: "delta-m3", messages: [{ role: "user", content: "hi" }], service_tier: "flex" }),
    });
    expect(delta.status).toBe(200);
    expect(sentBody().service_tier).toBeUndefined();
    expect(delta.headers.get("x-turnpike-warning")).toContain("service_tier: delta-m3 is not sold");
  });

  test("the generateContent format's serviceTier reaches its own protocol", async () => {
    const res = await h.call("/v1beta/models/gamma-3-flash:generateContent", {
      method: "POST",
      headers: { "x-goog-api-key": h.key },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }], serviceTier: "priority" }),
    });
    expect(res.status).toBe(200);
    expect(sentBody().serviceTier).toBe("priority");
    expect(res.headers.get("x-turnpike-service-tier")).toBe("priority");
  });
});
