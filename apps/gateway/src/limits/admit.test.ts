import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { GatewayError } from "@turnpike/providers";
import { FORMATS } from "../formats";
import type { CatalogEntry } from "../vocabulary/target";
import type { NewKey } from "../keys/key-service";
import { worstCaseUsd, worstInputTokens } from "./worst-case";
import { teamSpendId } from "../storage/spend-ids";
import { admit, type Admitted } from "./admit";
import { testDeps, type TestDeps } from "../../test/support/test-deps";

let t: TestDeps;
let opus: CatalogEntry;
let haiku: CatalogEntry;
const messages = { format: FORMATS.messages };
const chat = { format: FORMATS.chat };

beforeEach(async () => {
  t = await testDeps();
  opus = t.deps.catalog.get("alpha-opus-4-8")!;
  haiku = t.deps.catalog.get("alpha-haiku-4-5")!;
});
afterEach(() => t.close());

async function key(fields: Partial<NewKey>) {
  return (await t.addKey(fields)).record;
}

async function refusal(p: Promise<unknown>): Promise<GatewayError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
  throw new Error("expected the admission to be refused");
}

describe("monthly budget", () => {
  test("a spent budget → 402 billing_error with x-should-retry: false and the reset instant", async () => {
    const k = await key({ budget_usd: 1 });
    await t.deps.spend.add(k.id, 1.25);
    const err = await refusal(admit(t.deps, messages, k, opus, 400));
    expect(err.status).toBe(402);
    expect(err.type).toBe("billing_error");
    expect(err.code).toBe("insufficient_quota");
    expect(err.headers).toEqual({ "x-should-retry": "false" });
    // The test clock is in November 2026: the budget resets on the first of December.
    expect(err.message).toBe("This key's monthly budget of $1 is spent; it resets at 2026-12-01T00:00:00.000Z.");
  });

  test("a budget not yet spent admits; exactly spent refuses", async () => {
    const k = await key({ budget_usd: 2 });
    await t.deps.spend.add(k.id, 1.99);
    await admit(t.deps, messages, k, opus, 400);
    await t.deps.spend.add(k.id, 0.01);
    expect((await refusal(admit(t.deps, messages, k, opus, 400))).status).toBe(402);
  });
});

describe("budget reservations", () => {
  const ask = (n: number, outputCap?: number) => ({
    requestId: `req_${n}`,
    stream: false,
    ...(outputCap ? { outputCap } : {}),
  });

  test("the worst case: input at the dearest input price (one-hour cache writes) plus the output cap at the output price", () => {
    // Haiku: $1 in, $2 for one-hour cache writes, $5 out per million; 100 tokens in, 1,000 out.
    expect(worstCaseUsd(haiku, 100, 1000)).toBe(0.0052);
    // No cap asked, or one above the model's: the model's 64,000.
    expect(worstCaseUsd(haiku, 100, undefined)).toBe(0.3202);
    expect(worstCaseUsd(haiku, 100, 1_000_000)).toBe(0.3202);
    // At a paid service tier every token costs its multiple: the worst case is held at it (never below the default).
    expect(worstCaseUsd(haiku, 100, 1000, 2)).toBe(0.0104);
    expect(worstCaseUsd(haiku, 100, 1000, 0.5)).toBe(0.0052);
  });

  test("the worst-case input: one token per character of the body, at most the model's window (per input for embeddings)", () => {
    expect(worstInputTokens(haiku, 400)).toBe(400);
    expect(worstInputTokens(haiku, 5_000_000)).toBe(haiku.context_window);
    const embedding = t.deps.catalog.get("gamma-embedding-1")!;
    expect(worstInputTokens(embedding, 5_000_000, true)).toBe(5_000_000);
  });

  test("a request whose worst case is more than what is left is refused, saying what is left and what it needed", async () => {
    const k = await key({ budget_usd: 0.01 });
    await t.deps.spend.add(k.id, 0.007);
    // $0.003 left; 400 characters and 1,000 output tokens at haiku's prices: $0.0058.
    const err = await refusal(admit(t.deps, chat, k, haiku, 400, ask(1, 1000)));
    expect(err.status).toBe(402);
    expect(err.code).toBe("insufficient_quota");
    expect(err.message).toBe(
      "This key's monthly budget of $0.01 has $0.003 left (less what requests in flight hold), less than this request's worst case of $0.0058 (its input at one token a character and its output cap at the model's prices): ask for fewer output tokens, or wait until it resets at 2026-12-01T00:00:00.000Z.",
    );
    // A smaller output cap fits: 400 characters and 400 output tokens are $0.0028.
    await admit(t.deps, chat, k, haiku, 400, ask(2, 400));
    // Nothing was reserved by the refusal: $0.003 − $0.0028 is what is left.
    expect(await t.deps.spend.reserve([{ id: k.id, budget: 0.01 }], 0.0002)).toEqual({ refusedBy: -1, shared: false });
  });

  test("80 requests at once on a $0.05 budget: admitted while their worst cases fit, never overspent", async () => {
    const k = await key({ budget_usd: 0.05 });
    const each = worstCaseUsd(haiku, 400, 1000);
    const results = await Promise.allSettled(
      Array.from({ length: 80 }, (_, n) => admit(t.deps, chat, k, haiku, 400, ask(n, 1000))),
    );
    const admitted = results.filter((r): r is PromiseFulfilledResult<Admitted> => r.status === "fulfilled");
    // Admitted while spent + reserved + the worst case ≤ budget: 8 × $0.0058 = $0.0464.
    expect(admitted.length).toBe(Math.floor(0.05 / each));
    expect(admitted.length).toBe(8);
    for (const r of results) if (r.status === "rejected") expect((r.reason as GatewayError).status).toBe(402); // admit refuses with GatewayErrors
    // Each spends its whole reservation, its worst case: the budget is not passed.
    for (const r of admitted) r.value.settle(1400, each, true);
    const spent = await t.deps.spend.spent(k.id);
    expect(spent).toBeCloseTo(8 * each, 9);
    expect(spent).toBeLessThanOrEqual(0.05);
    expect((await refusal(admit(t.deps, chat, k, haiku, 400, ask(99, 1000)))).status).toBe(402);
  });

  test("two keys of one team, 40 requests each at once on a $0.05 team budget: held on the team's one counter", async () => {
    const team = { id: "team_race", models: null, budget_usd: 0.05 };
    const one = { ...(await key({})), team_id: team.id, team };
    const two = { ...(await key({})), team_id: team.id, team };
    const each = worstCaseUsd(haiku, 400, 1000);
    const results = await Promise.allSettled(
      Array.from({ length: 80 }, (_, n) => admit(t.deps, chat, n % 2 ? two : one, haiku, 400, ask(n, 1000))),
    );
    const admitted = results.filter((r): r is PromiseFulfilledResult<Admitted> => r.status === "fulfilled");
    expect(admitted.length).toBe(8);
    const refused = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect((refused.reason as GatewayError).message).toBe(
      "This key's team's monthly budget of $0.05 has $0.0036 left (less what requests in flight hold), less than this request's worst case of $0.0058 (its input at one token a character and its output cap at the model's prices): ask for fewer output tokens, or wait until it resets at 2026-12-01T00:00:00.000Z.",
    );
    for (const r of admitted) r.value.settle(1400, each, true);
    // Each key's spend is its own; the team's is theirs together, under one id.
    const [a, b, sum] = await Promise.all([one.id, two.id, teamSpendId(team.id)].map((id) => t.deps.spend.spent(id)));
    expect(a).toBeCloseTo(4 * each, 9);
    expect(b).toBeCloseTo(4 * each, 9);
    expect(sum).toBeCloseTo(8 * each, 9);
    expect(sum).toBeLessThanOrEqual(0.05);
  });

  test("a key of a team with no budget still counts its spend under the team", async () => {
    const team = { id: "team_free", models: null, budget_usd: null };
    const k = { ...(await key({})), team_id: team.id, team };
    (await admit(t.deps, chat, k, haiku, 400, ask(1, 1000))).settle(150, 0.0003, true);
    expect(await t.deps.spend.spent(k.id)).toBeCloseTo(0.0003, 9);
    expect(await t.deps.spend.spent(teamSpendId(team.id))).toBeCloseTo(0.0003, 9);
  });

  test("settlement replaces the reservation by the real cost: the room comes back", async () => {
    const k = await key({ budget_usd: 0.012 });
    const first = await admit(t.deps, chat, k, haiku, 400, ask(1, 1000));
    await admit(t.deps, chat, k, haiku, 400, ask(2, 1000));
    // Two reservations of $0.0058 leave $0.0004 of $0.012: the third waits for a settlement.
    expect((await refusal(admit(t.deps, chat, k, haiku, 400, ask(3, 1000)))).status).toBe(402);
    first.settle(150, 0.0003, true);
    await admit(t.deps, chat, k, haiku, 400, ask(4, 1000));
    expect(await t.deps.spend.spent(k.id)).toBeCloseTo(0.0003, 9);
  });

  test("a request refused by a rate limit after its reservation gives it back", async () => {
    const k = await key({ budget_usd: 0.006, rpm: 1 });
    await admit(t.deps, chat, k, haiku, 400, ask(1, 1000)).then((a) => a.settle(10, 0, true));
    expect((await refusal(admit(t.deps, chat, k, haiku, 400, ask(2, 1000)))).status).toBe(429);
    // The $0.0058 reserved by the refused request is free again: only the rpm refuses, not the budget.
    expect((await refusal(admit(t.deps, chat, k, haiku, 400, ask(3, 1000)))).status).toBe(429);
    // Nothing is left reserved: a budget just under one reservation still has room.
    expect(await t.deps.spend.reserve([{ id: k.id, budget: 0.005 }], 0)).toEqual({ refusedBy: -1, shared: false });
  });
});

describe("the key's limits", () => {
  test("rpm refusal → 429 with retry-after and the format's limit headers", async () => {
    const k = await key({ rpm: 2 });
    const first = await admit(t.deps, messages, k, opus, 40);
    expect(first.limitHeaders["anthropic-ratelimit-requests-limit"]).toBe("2");
    expect(first.limitHeaders["anthropic-ratelimit-requests-remaining"]).toBe("1");
    await admit(t.deps, messages, k, opus, 40);
    const err = await refusal(admit(t.deps, messages, k, opus, 40));
    expect(err.status).toBe(429);
    expect(err.type).toBe("requests");
    expect(err.code).toBe("rate_limit_exceeded");
    // 2 rpm refill one request every 30 s.
    expect(err.headers?.["retry-after"]).toBe("30");
    expect(err.headers?.["retry-after-ms"]).toBe("30000");
    expect(err.headers?.["anthropic-ratelimit-requests-remaining"]).toBe("0");
    expect(err.message).toBe("Rate limit reached for this key: 2 requests per minute. Retry after 30 s.");
    t.clock.advance(30_000);
    await admit(t.deps, messages, k, opus, 40);
  });

  test("a chat client gets the x-ratelimit-* headers", async () => {
    const k = await key({ rpm: 5, tpm: 1000 });
    const a = await admit(t.deps, chat, k, opus, 400);
    expect(a.limitHeaders["x-ratelimit-limit-requests"]).toBe("5");
    expect(a.limitHeaders["x-ratelimit-remaining-requests"]).toBe("4");
    // The estimate is a token per 4 characters of body: 400 → 100.
    expect(a.limitHeaders["x-ratelimit-remaining-tokens"]).toBe("900");
  });

  test("a tpm refusal is limited by tokens", async () => {
    const k = await key({ tpm: 100 });
    await admit(t.deps, messages, k, opus, 400); // estimate 100: the bucket is empty
    const err = await refusal(admit(t.deps, messages, k, opus, 4));
    expect(err.type).toBe("tokens");
    expect(err.message).toContain("100 tokens per minute");
    expect(Number(err.headers?.["retry-after"])).toBeGreaterThan(0);
  });

  test("a request whose estimate alone exceeds the tpm is refused at once, saying why, with no retry-after", async () => {
    const k = await key({ tpm: 100, model_limits: { "alpha-opus-4-8": { tpm: 50 } } });
    const err = await refusal(admit(t.deps, messages, k, opus, 404)); // estimate 101
    expect(err.status).toBe(429);
    expect(err.message).toContain("about 101 tokens");
    expect(err.message).toContain("limit of 100 tokens per minute");
    expect(err.headers).toEqual({ "x-should-retry": "false" });
    const perModel = await refusal(admit(t.deps, messages, k, opus, 240)); // 60 > the model's 50
    expect(perModel.message).toContain("50 tokens per minute on alpha-opus-4-8");
    // Nothing was taken: a request that fits is admitted from a full bucket.
    expect((await admit(t.deps, messages, k, opus, 200)).limitHeaders["anthropic-ratelimit-tokens-remaining"]).toBe(
      "50",
    );
  });
});

describe("per-model limits", () => {
  test("a refusal by the model's limit names the model and gives the key bucket its estimate back", async () => {
    const k = await key({ tpm: 1000, model_limits: { "alpha-opus-4-8": { rpm: 1 } } });
    const first = await admit(t.deps, messages, k, opus, 400);
    expect(first.limitHeaders["anthropic-ratelimit-tokens-remaining"]).toBe("900");
    const err = await refusal(admit(t.deps, messages, k, opus, 400));
    expect(err.status).toBe(429);
    expect(err.message).toContain("on alpha-opus-4-8: 1 requests per minute");
    // Had the refused estimate stayed charged, this would leave 700.
    const next = await admit(t.deps, messages, k, haiku, 400);
    expect(next.limitHeaders["anthropic-ratelimit-tokens-remaining"]).toBe("800");
  });

  test("a refusal by the model's limit takes nothing from the key's requests per minute", async () => {
    const k = await key({ rpm: 2, model_limits: { "alpha-opus-4-8": { rpm: 1 } } });
    await admit(t.deps, messages, k, opus, 4);
    await refusal(admit(t.deps, messages, k, opus, 4));
    // The key's second request of the minute is still there.
    const next = await admit(t.deps, messages, k, haiku, 4);
    expect(next.limitHeaders["anthropic-ratelimit-requests-remaining"]).toBe("0");
  });

  test("another model is not held by one model's limit", async () => {
    const k = await key({ model_limits: { "alpha-opus-4-8": { rpm: 1 } } });
    await admit(t.deps, messages, k, opus, 4);
    await refusal(admit(t.deps, messages, k, opus, 4));
    await admit(t.deps, messages, k, haiku, 4);
    await admit(t.deps, messages, k, haiku, 4);
  });
});

describe("settle", () => {
  test("charges the real token count instead of the estimate, to the key's and the model's buckets", async () => {
    const k = await key({ tpm: 1000, model_limits: { "alpha-opus-4-8": { tpm: 500 } } });
    const a = await admit(t.deps, messages, k, opus, 400); // estimate 100
    a.settle(250);
    const next = await admit(t.deps, messages, k, haiku, 400);
    // 1000 − 250 (settled) − 100 (this estimate).
    expect(next.limitHeaders["anthropic-ratelimit-tokens-remaining"]).toBe("650");
    const [model] = await t.deps.limiter.admit([{ bucket: `${k.id}|${opus.id}`, limits: { rpm: null, tpm: 500 } }], 0);
    expect(model?.tokens?.remaining).toBe(250);
  });

  test("settle(0) gives the whole estimate back", async () => {
    const k = await key({ tpm: 1000 });
    (await admit(t.deps, messages, k, opus, 2000)).settle(0);
    const next = await admit(t.deps, messages, k, opus, 4);
    expect(next.limitHeaders["anthropic-ratelimit-tokens-remaining"]).toBe("999");
  });
});
