/**
 * A continuation on a fallback model is billed at that model's price: the cut attempt's counts at
 * the first model's row, the continuation's at the fallback's, summed in the ledger row's
 * `cost_usd` and in the key's spend. The first model's only deployment has its circuit opened by
 * the cut (one failure opens it), so the continuation runs on its fallback, priced 15 times higher.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { CatalogEntry } from "../../src/vocabulary/target";
import type { Harness } from "../harness";
import { bodyOf, stream } from "./cells";
import { gateway, PROMPT, rowOf, WORDS } from "./setup";

/** One upstream reply's usage, as the vendor sent it (the messages protocol's fields). */
interface Sent {
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  output_tokens: number;
}

/** The usage each upstream reply reported, read from a copy of its stream (a cut one: what came before the cut). */
const replies: Promise<Sent>[] = [];

async function usageOf(body: ReadableStream<Uint8Array>): Promise<Sent> {
  const got: Sent = { input_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 0 };
  let text = "";
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read())
      text += decoder.decode(r.value, { stream: true });
  } catch {
    // A reset stream: what arrived before it is read.
  }
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: ")) continue;
    const ev = JSON.parse(line.slice(6)) as { usage?: Partial<Sent>; message?: { usage?: Partial<Sent> } };
    Object.assign(got, ev.message?.usage ?? {}, ev.usage ?? {});
  }
  return got;
}

/** The gateway's upstream fetch, copying each messages reply's stream to read its usage. */
const copying = (async (input: RequestInfo | URL, init?: RequestInit) => {
  const res = await fetch(input, init);
  const url = input instanceof Request ? input.url : String(input);
  if (!url.endsWith("/v1/messages") || !res.body || res.status !== 200) return res;
  const [copy, relayed] = res.body.tee();
  replies.push(usageOf(copy));
  return new Response(relayed, { status: res.status, headers: res.headers });
}) as typeof fetch;

const clock = 1_800_000_000_000;
let h: Harness;
beforeAll(async () => {
  // The config's prices: the fallback's are 15 times the first model's.
  h = await gateway(
    `
  - { id: alpha-haiku-4-5, input_per_mtok: 1, output_per_mtok: 5, fallbacks: [alpha-opus-4-8] }
  - { id: alpha-opus-4-8, input_per_mtok: 15, output_per_mtok: 75 }`,
    { now: () => clock, breakerFailures: 1, fetch: copying },
  );
});
afterAll(() => h.close());

/** USD at a catalog row's prices (the default tier), worked out here from the row, not by the gateway. */
function price(entry: CatalogEntry, u: Sent): number {
  return (
    (u.input_tokens * entry.input_per_mtok +
      u.cache_read_input_tokens * entry.cache_read_per_mtok +
      u.cache_creation_input_tokens * entry.cache_write_5m_per_mtok +
      u.output_tokens * entry.output_per_mtok) /
    1_000_000
  );
}

test("a continuation on a fallback model: each attempt at its own model's price, summed in the row and the key's spend", async () => {
  const haiku = h.gw.deps.catalog.get("alpha-haiku-4-5")!;
  const opus = h.gw.deps.catalog.get("alpha-opus-4-8")!;
  // The test's config set the prices: the fallback's are 15 times the first model's.
  expect([haiku.input_per_mtok, haiku.output_per_mtok, opus.input_per_mtok, opus.output_per_mtok]).toEqual([
    1, 5, 15, 75,
  ]);
  const spentBefore = await h.gw.deps.spend.spent(h.keyId);
  const from = h.gw.simulator!.requests.length;
  h.gw.simulator!.fault("simulator-alpha", { cut_after: 3, cut: "reset", times: 1 });
  const cut = await stream(h, "messages", bodyOf("messages", "alpha-haiku-4-5", PROMPT), "alpha-haiku-4-5");
  expect(cut.error).toBeUndefined();
  expect(cut.outcome.text).toBe(WORDS);
  // The cut attempt on the first model, then the continuation on the fallback.
  const sent = h.gw.simulator!.requests.slice(from);
  expect(sent.map((r) => (r.body as { model: string }).model)).toEqual(["alpha-haiku-4-5", "alpha-opus-4-8"]);
  expect(replies).toHaveLength(2);
  const [first, second] = await Promise.all(replies);

  const row = await rowOf(h, cut.res);
  expect(row).toMatchObject({ model: "alpha-haiku-4-5", attempts: 2, continuations: 1, status: 200 });
  expect(row.requested_model).toBeUndefined();
  // The continuation reported its closing numbers: they are its counts. The cut attempt's are the
  // rest of the row: its input as the vendor said at its start, its output counted from what it relayed.
  const cutAttempt: Sent = {
    input_tokens: row.input_tokens - row.cache_read_tokens - row.cache_write_tokens - second!.input_tokens,
    cache_read_input_tokens: row.cache_read_tokens - second!.cache_read_input_tokens,
    cache_creation_input_tokens: row.cache_write_tokens - second!.cache_creation_input_tokens,
    output_tokens: row.output_tokens - second!.output_tokens,
  };
  expect(cutAttempt.input_tokens).toBe(first!.input_tokens);
  expect(cutAttempt.cache_read_input_tokens).toBe(first!.cache_read_input_tokens);
  expect(cutAttempt.cache_creation_input_tokens).toBe(first!.cache_creation_input_tokens);
  expect(cutAttempt.output_tokens).toBeGreaterThan(0);
  expect(second!.output_tokens).toBeGreaterThan(0);
  expect(row.estimated).toBe(true);

  const expected = price(haiku, cutAttempt) + price(opus, second!);
  expect(row.cost_usd).toBeCloseTo(expected, 8);
  // Not the first model's price for everything (what it was before each attempt had its own).
  const atFirstPrice = price(haiku, {
    input_tokens: row.input_tokens - row.cache_read_tokens - row.cache_write_tokens,
    cache_read_input_tokens: row.cache_read_tokens,
    cache_creation_input_tokens: row.cache_write_tokens,
    output_tokens: row.output_tokens,
  });
  expect(row.cost_usd - atFirstPrice).toBeGreaterThan(1e-6);
  // The key's spend moved by exactly the row's cost.
  expect((await h.gw.deps.spend.spent(h.keyId)) - spentBefore).toBeCloseTo(row.cost_usd, 12);
  // The client's usage is the sum of the attempts' tokens.
  expect(cut.outcome.usage).toMatchObject({ input: row.input_tokens, output: row.output_tokens });
});
