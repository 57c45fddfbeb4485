import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { ADMIN_KEY, startHarness, type Harness } from "./harness";

let h: Harness;
let t = Date.parse("2026-11-22T12:00:00Z");
const clock = { now: () => t, advance: (ms: number) => (t += ms) };

beforeAll(async () => {
  h = await startHarness({}, { now: clock.now });
});
afterAll(async () => {
  await h.close();
});

const admin = async (path: string, method = "GET", body?: unknown) => {
  const res = await fetch(h.url + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as any };
};

const chat = (key: string, model = "beta-5", content = "hi") =>
  fetch(`${h.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify({ model, messages: [{ role: "user", content }] }),
  });
const messages = (key: string, model = "beta-5", content = "hi") =>
  fetch(`${h.url}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": key, "alpha-version": "2023-06-01" },
    body: JSON.stringify({ model, max_tokens: 50, messages: [{ role: "user", content }] }),
  });

describe("requests per minute", () => {
  test("the rpm+1-th call is a 429 in the caller's format with retry-after, and headers ride on 200s", async () => {
    const { body: k } = await admin("/admin/keys", "POST", { name: "rpm", rpm: 2 });
    const a = await chat(k.key);
    expect(a.status).toBe(200);
    expect(a.headers.get("x-ratelimit-limit-requests")).toBe("2");
    expect(a.headers.get("x-ratelimit-remaining-requests")).toBe("1");
    const b = await messages(k.key);
    expect(b.status).toBe(200);
    expect(b.headers.get("anthropic-ratelimit-requests-limit")).toBe("2");
    expect(b.headers.get("anthropic-ratelimit-requests-remaining")).toBe("0");
    const c = await chat(k.key);
    expect(c.status).toBe(429);
    expect(c.headers.get("retry-after")).toBe("30");
    expect(c.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    const cb = (await c.json()) as any;
    expect(cb.error.code).toBe("rate_limit_exceeded");
    expect(cb.error.type).toBe("requests");
    const d = await messages(k.key);
    expect(d.status).toBe(429);
    expect(((await d.json()) as any).error.type).toBe("rate_limit_error");
    // Half a minute later one request has refilled.
    clock.advance(30_000);
    expect((await chat(k.key)).status).toBe(200);
    expect((await chat(k.key)).status).toBe(429);
  });

  test("the official clients raise their RateLimitError with the retry hint", async () => {
    const { body: k } = await admin("/admin/keys", "POST", { name: "sdk-rpm", rpm: 1 });
    const openai = new OpenAI({ apiKey: k.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
    const anthropic = new Anthropic({ apiKey: k.key, baseURL: h.url, maxRetries: 0 });
    await openai.chat.completions.create({ model: "delta-m3", messages: [{ role: "user", content: "hi" }] });
    const e1 = await openai.chat.completions
      .create({ model: "delta-m3", messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(e1).toBeInstanceOf(OpenAI.RateLimitError);
    expect(e1.headers.get("retry-after")).toBe("60");
    const e2 = await anthropic.messages
      .create({ model: "delta-m3", max_tokens: 5, messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(e2).toBeInstanceOf(Anthropic.RateLimitError);
    expect(e2.headers.get("retry-after")).toBe("60");
  });
});

describe("tokens per minute", () => {
  test("settles with the real usage: a big reply uses up the minute", async () => {
    const { body: k } = await admin("/admin/keys", "POST", { name: "tpm", tpm: 300 });
    const big = await chat(k.key, "beta-5", "talk [sim chunks=40]");
    expect(big.status).toBe(200);
    const used = ((await big.json()) as any).usage.total_tokens;
    expect(used).toBeGreaterThan(0);
    const next = await chat(k.key);
    if (used >= 300) {
      expect(next.status).toBe(429);
      expect(((await next.json()) as any).error.type).toBe("tokens");
    } else {
      expect(Number(next.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThan(300 - used + 1);
    }
  });
});

describe("per-model limits", () => {
  test("a model's own rpm applies on top of the key's", async () => {
    const { body: k } = await admin("/admin/keys", "POST", {
      name: "per-model",
      model_limits: { "gamma-3-pro": { rpm: 1 } },
    });
    expect((await chat(k.key, "gamma-3-pro")).status).toBe(200);
    const refused = await chat(k.key, "gamma-3-pro");
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as any).error.message).toContain("gamma-3-pro");
    expect((await chat(k.key, "gamma-3-flash")).status).toBe(200);
  });
});

describe("monthly budget", () => {
  /** The key's spend this month, once its last call is counted (bounded wait). */
  async function spentOnce(id: string): Promise<number> {
    for (let i = 0; i < 200; i++) {
      const { body } = await admin(`/admin/keys/${id}`);
      if (body.spent_this_month_usd > 0) return body.spent_this_month_usd as number;
      await Bun.sleep(25);
    }
    throw new Error("the key's spend was never counted");
  }

  test("a spent budget is its own error, not a rate limit, and resets with the month", async () => {
    const { body: k } = await admin("/admin/keys", "POST", { name: "budget", budget_usd: 1 });
    // 50 output tokens at most: the worst case fits the dollar.
    expect((await messages(k.key, "alpha-fable-5")).status).toBe(200);
    // The budget lowered to exactly what was spent: spent.
    expect((await admin(`/admin/keys/${k.id}`, "PATCH", { budget_usd: await spentOnce(k.id) })).status).toBe(200);
    const c = await chat(k.key, "alpha-fable-5");
    expect(c.status).toBe(429);
    expect(c.headers.get("x-should-retry")).toBe("false");
    const cb = (await c.json()) as any;
    expect(cb.error.type).toBe("insufficient_quota");
    expect(cb.error.message).toContain("budget");
    expect(cb.error.message).toContain("is spent; it resets at");
    const m = await messages(k.key, "alpha-fable-5");
    expect(m.status).toBe(402);
    expect(((await m.json()) as any).error.type).toBe("billing_error");
    // Raising the budget lets it through again.
    const { status } = await admin(`/admin/keys/${k.id}`, "PATCH", { budget_usd: 10 });
    expect(status).toBe(200);
    expect((await chat(k.key, "alpha-fable-5")).status).toBe(200);
  });

  // Issue 41, item 11: a request is admitted only when its worst case fits what is left.
  test("a request whose worst case does not fit is refused though nothing is spent; a smaller output cap fits", async () => {
    const { body: k } = await admin("/admin/keys", "POST", { name: "small budget", budget_usd: 0.01 });
    // No output cap asked: alpha-fable-5's own 128,000 output tokens at $50 a million, $6.40, do not fit $0.01.
    const c = await chat(k.key, "alpha-fable-5");
    expect(c.status).toBe(429);
    const cb = (await c.json()) as any;
    expect(cb.error.code).toBe("insufficient_quota");
    expect(cb.error.message).toMatch(
      /^This key's monthly budget of \$0\.01 has \$0\.01 left \(less what requests in flight hold\), less than this request's worst case of \$6\.40\d+ .*: ask for fewer output tokens/,
    );
    // 50 output tokens ($0.0025) and the body's ~90 characters ($0.0009) fit.
    expect((await messages(k.key, "alpha-fable-5")).status).toBe(200);
    const spent = await spentOnce(k.id);
    expect(spent).toBeGreaterThan(0);
    expect(spent).toBeLessThanOrEqual(0.01);
  });

  test("a reply that continues a stored conversation counts the conversation in its worst case", async () => {
    const { body: k } = await admin("/admin/keys", "POST", { name: "continued", budget_usd: 0.04 });
    const responses = (body: Record<string, unknown>) =>
      fetch(`${h.url}/v1/responses`, {
        method: "POST",
        headers: { authorization: `Bearer ${k.key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "beta-5", max_output_tokens: 16, ...body }),
      });
    // 30,000 characters at beta-5's $1.25 a million: a $0.0377 worst case, within $0.04.
    const long = Array.from({ length: 3000 }, (_, i) => `word${i % 97} `)
      .join("")
      .padEnd(30_000, "x");
    const first = await responses({ input: long });
    expect(first.status).toBe(200);
    const id = ((await first.json()) as { id: string }).id;
    // The next turn's body is a few words, but its input is the whole conversation again: no longer fits.
    const next = await responses({ input: "and then?", previous_response_id: id });
    // The Responses format renders a budget refusal as the chat family does: 429 insufficient_quota.
    expect(next.status).toBe(429);
    const error = ((await next.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("insufficient_quota");
    expect(error.message).toContain("less than this request's worst case of $0.03");
  });
});

describe("expiry, rotation and revocation", () => {
  test("an expired key is refused with a message that says so", async () => {
    const { body: k } = await admin("/admin/keys", "POST", {
      name: "short",
      expires_at: new Date(t + 60_000).toISOString(),
    });
    expect((await chat(k.key)).status).toBe(200);
    clock.advance(61_000);
    const res = await chat(k.key);
    expect(res.status).toBe(401);
    expect(((await res.json()) as any).error.message).toContain("expired");
  });

  test("rotate: the new secret works, the old one only for its grace period", async () => {
    const { body: k } = await admin("/admin/keys", "POST", { name: "rotating" });
    const { status, body: r } = await admin(`/admin/keys/${k.id}/rotate`, "POST", { grace_seconds: 120 });
    expect(status).toBe(200);
    expect(r.key).not.toBe(k.key);
    expect(r.id).toBe(k.id);
    expect((await chat(r.key)).status).toBe(200);
    expect((await chat(k.key)).status).toBe(200);
    clock.advance(121_000);
    expect((await chat(k.key)).status).toBe(401);
    expect((await chat(r.key)).status).toBe(200);
    // Rotation with no grace refuses the old secret at once.
    const { body: r2 } = await admin(`/admin/keys/${k.id}/rotate`, "POST", { grace_seconds: 0 });
    expect((await chat(r.key)).status).toBe(401);
    expect((await chat(r2.key)).status).toBe(200);
    const bad = await admin(`/admin/keys/${k.id}/rotate`, "POST", { grace_seconds: -5 });
    expect(bad.status).toBe(400);
  });

  test("update changes the allow-list at once", async () => {
    const { body: k } = await admin("/admin/keys", "POST", { name: "narrowed" });
    expect((await chat(k.key, "beta-5")).status).toBe(200);
    await admin(`/admin/keys/${k.id}`, "PATCH", { models: ["gamma-*"] });
    expect((await chat(k.key, "beta-5")).status).toBe(404);
    expect((await chat(k.key, "gamma-3-flash")).status).toBe(200);
    const models = await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${k.key}` } });
    expect(((await models.json()) as any).data.map((m: any) => m.id).sort()).toEqual([
      "gamma-3-flash",
      "gamma-3-pro",
      "gamma-embedding-1",
    ]);
  });
});

describe("failed authentication", () => {
  test("is limited per client address", async () => {
    let last = 0;
    for (let i = 0; i < 31; i++) last = (await chat("sk-guess-" + i)).status;
    expect(last).toBe(429);
    const blocked = await chat("sk-guess-31");
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    // A good key from that address is served all along: only the failures are refused.
    const { body: k } = await admin("/admin/keys", "POST", { name: "after-guessing" });
    expect((await chat(k.key)).status).toBe(200);
    clock.advance(61_000);
    expect((await chat("sk-guess-32")).status).toBe(401);
  });
});

describe("usage aggregates", () => {
  test("per key, model and day", async () => {
    const { body: k } = await admin("/admin/keys", "POST", { name: "agg" });
    for (const model of ["beta-5", "beta-5", "gamma-3-flash"]) expect((await chat(k.key, model)).status).toBe(200);
    const { body } = await admin(`/admin/usage?key_id=${k.id}&group_by=model,day`);
    expect(body.data.map((r: any) => [r.model, r.requests])).toEqual([
      ["beta-5", 2],
      ["gamma-3-flash", 1],
    ]);
    const rows = (await admin(`/admin/usage?key_id=${k.id}`)).body.data;
    const beta = rows.filter((r: any) => r.model === "beta-5");
    const agg = body.data[0];
    expect(agg.day).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(agg.output_tokens).toBe(beta[0].output_tokens + beta[1].output_tokens);
    expect(agg.cost_usd).toBeCloseTo(beta[0].cost_usd + beta[1].cost_usd, 9);
    expect((await admin("/admin/usage?group_by=colour")).status).toBe(400);
  });
});
