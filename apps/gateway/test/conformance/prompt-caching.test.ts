/**
 * Prompt caching that pays: a 20-turn conversation from a chat client (which never sets
 * `cache_control`) to a messages-protocol model, once with Turnpike's automatic cache
 * breakpoints (`prompt_cache: auto`, the default) and once without (`off`). The simulator
 * caches prefixes as the vendor does, so the ledger shows what each run costs, each token class
 * at its catalog price. The numbers are the README's ("Prompt caching").
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_KEY, startHarness, type Harness } from "../harness";

const MODEL = "alpha-haiku-4-5"; // $1 input, $0.10 cache read, $1.25 cache write (5 min), $5 output, per million
const SYSTEM = Array.from(
  { length: 300 },
  (_, i) => `Rule ${i + 1}: answer the user's question about the project plainly and exactly.`,
).join("\n");
const TURNS = 20;

let auto: Harness;
let off: Harness;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "turnpike-cache-"));
  const file = join(dir, "off.json");
  writeFileSync(file, JSON.stringify({ models: [{ id: MODEL, prompt_cache: "off" }] }));
  auto = await startHarness();
  off = await startHarness({ TURNPIKE_CONFIG: file });
});
afterAll(async () => {
  await auto.close();
  await off.close();
});

interface Row {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
}

/** Plays the conversation through the chat endpoint; returns the chat usage of each reply and the ledger rows. */
async function converse(
  h: Harness,
): Promise<{ usages: { prompt_tokens: number; completion_tokens: number; cached: number }[]; rows: Row[] }> {
  const messages: { role: string; content: string }[] = [{ role: "system", content: SYSTEM }];
  const usages = [];
  for (let t = 1; t <= TURNS; t++) {
    messages.push({ role: "user", content: `Question ${t}: what does rule ${t} say?` });
    const res = await h.call("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({ model: MODEL, messages }),
    });
    expect(res.status).toBe(200);
    const json = await res.json();
    messages.push({ role: "assistant", content: json.choices[0].message.content });
    usages.push({
      prompt_tokens: json.usage.prompt_tokens,
      completion_tokens: json.usage.completion_tokens,
      cached: json.usage.prompt_tokens_details.cached_tokens,
    });
  }
  const listed = await fetch(`${h.url}/admin/usage?key_id=${h.keyId}&limit=100`, {
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  const body = (await listed.json()) as { data: Row[] };
  return { usages, rows: body.data };
}

const usd = (perMillion: number) => perMillion / 1e6;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe("a 20-turn conversation from a chat client to a messages-protocol model", () => {
  test("bills fewer dollars with automatic cache breakpoints than without, each token class at its price", async () => {
    const withCache = await converse(auto);
    const without = await converse(off);
    expect(withCache.rows).toHaveLength(TURNS);
    expect(without.rows).toHaveLength(TURNS);

    // The same conversation either way: the same prompts and replies.
    expect(withCache.usages.map((u) => [u.prompt_tokens, u.completion_tokens])).toEqual(
      without.usages.map((u) => [u.prompt_tokens, u.completion_tokens]),
    );

    // Without breakpoints nothing is cached: every prompt token at $1, every output token at $5.
    expect(sum(without.usages.map((u) => u.cached))).toBe(0);
    const offCost = sum(without.rows.map((r) => r.cost_usd));
    const offExpected = usd(sum(without.usages.map((u) => u.prompt_tokens * 1 + u.completion_tokens * 5)));
    expect(offCost).toBeCloseTo(offExpected, 9);

    // With them, from the second turn on the conversation so far is read from the cache, and the
    // chat client sees the reads as prompt_tokens_details.cached_tokens.
    expect(withCache.usages[0]!.cached).toBe(0);
    for (const u of withCache.usages.slice(1)) expect(u.cached).toBeGreaterThan(1000);
    const rows = withCache.rows;
    for (const [i, r] of rows.entries()) {
      // The ledger's token classes add up to the prompt, and its cost is each class at its price.
      const turn = withCache.usages[TURNS - 1 - i]!; // the ledger lists newest first
      expect(r.input_tokens).toBe(turn.prompt_tokens);
      expect(r.cache_read_tokens).toBe(turn.cached);
      const uncached = r.input_tokens - r.cache_read_tokens - r.cache_write_tokens;
      expect(r.cost_usd).toBeCloseTo(
        usd(uncached * 1 + r.cache_read_tokens * 0.1 + r.cache_write_tokens * 1.25 + r.output_tokens * 5),
        9,
      );
    }
    const autoCost = sum(rows.map((r) => r.cost_usd));
    console.log(
      `20 turns, ${MODEL}: $${offCost.toFixed(6)} without cache breakpoints, $${autoCost.toFixed(6)} with them (${((1 - autoCost / offCost) * 100).toFixed(1)}% less)`,
    );
    expect(autoCost).toBeLessThan(offCost * 0.5);
  });
});

describe("prompt_cache per key", () => {
  const admin = (path: string, init: RequestInit) =>
    fetch(`${auto.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    });
  const breakpointsSent = async (key: string) => {
    const res = await fetch(`${auto.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: MODEL,
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Hi" },
        ],
      }),
    });
    expect(res.status).toBe(200);
    return JSON.stringify(auto.gw.simulator!.requests.at(-1)!.body).includes('"cache_control"');
  };

  test("a key's own setting wins over the model's; null returns to the model's; a bad value is a 400 naming the field", async () => {
    const created = await admin("/admin/keys", {
      method: "POST",
      body: JSON.stringify({ name: "no-cache", prompt_cache: "off" }),
    });
    expect(created.status).toBe(201);
    const { key, id, prompt_cache } = await created.json();
    expect(prompt_cache).toBe("off");
    expect(await breakpointsSent(key)).toBe(false);
    expect(await breakpointsSent(auto.key)).toBe(true);
    expect(
      (await admin(`/admin/keys/${id}`, { method: "PATCH", body: JSON.stringify({ prompt_cache: null }) })).status,
    ).toBe(200);
    expect(await breakpointsSent(key)).toBe(true);
    const bad = await admin(`/admin/keys/${id}`, { method: "PATCH", body: JSON.stringify({ prompt_cache: "always" }) });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toContain("prompt_cache: must be auto or off");
  });
});
