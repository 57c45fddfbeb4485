/**
 * A batch line sent to a vendor's own batch API is admitted when it is sent, as a direct call is:
 * a key with a spent budget sends nothing upstream, a key over its rpm sends only what its rpm
 * lets in (the rest waits in Turnpike's queue), and each line is metered once when its answer is
 * replayed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import OpenAI, { toFile } from "openai";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";
import { until } from "./until";

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close(), 60_000);

async function newKey(body: Record<string, unknown>): Promise<{ key: string; id: string }> {
  const res = await fetch(`${h.url}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "batch-admission", ...body }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { key: string; id: string };
}

const wait = <T>(get: () => Promise<T>, done: (v: T) => boolean) => until(get, done, 800);

const line = (id: string, model: string) => ({
  custom_id: id,
  method: "POST",
  url: "/v1/chat/completions",
  body: { model, max_tokens: 16, messages: [{ role: "user", content: 'Hi [sim text="ok"]' }] },
});

async function createBatch(openai: OpenAI, lines: unknown[]) {
  const file = await openai.files.create({
    file: await toFile(Buffer.from(lines.map((l) => JSON.stringify(l)).join("\n")), "in.jsonl"),
    purpose: "batch",
  });
  return openai.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
}

test("a key with a spent budget creating a batch for vendors with batch APIs sends 0 lines upstream; each line answers insufficient_quota", async () => {
  const { key, id } = await newKey({ budget_usd: 1 });
  const openai = new OpenAI({ apiKey: key, baseURL: `${h.url}/v1`, maxRetries: 0 });
  // One call spends, then the budget is lowered below what it spent (a request is admitted only
  // when its worst case fits, so one call alone never spends a budget whole).
  await openai.chat.completions.create({
    model: "beta-5",
    max_tokens: 16,
    messages: [{ role: "user", content: "hi" }],
  });
  const lowered = await fetch(`${h.url}/admin/keys/${id}`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ budget_usd: 0.000001 }),
  });
  expect(lowered.status).toBe(200);
  const sim = h.gw.simulator!;
  const seen = sim.requests.length;
  // alpha: the messages batch API; delta: the chat family's; gamma: generateContent batch mode.
  const batch = await createBatch(openai, [
    line("a", "alpha-haiku-4-5"),
    line("d", "delta-m3"),
    line("g", "gamma-3-flash"),
  ]);
  const done = await wait(
    () => openai.batches.retrieve(batch.id),
    (b) => b.status === "completed",
  );
  expect(done.status).toBe("completed");
  expect(sim.requests.slice(seen).map((r) => `${r.method} ${r.path}`)).toEqual([]);
  const errors = (await (await openai.files.content(done.error_file_id!)).text())
    .trim()
    .split("\n")
    .map(
      (l) =>
        JSON.parse(l) as { custom_id: string; response: { status_code: number; body: { error: { code: string } } } },
    );
  expect(errors.map((e) => [e.custom_id, e.response.status_code, e.response.body.error.code]).sort()).toEqual([
    ["a", 429, "insufficient_quota"],
    ["d", 429, "insufficient_quota"],
    ["g", 429, "insufficient_quota"],
  ]);
  // Only the call that spent the budget is in the ledger.
  const usage = await fetch(`${h.url}/admin/usage?key_id=${id}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  expect(((await usage.json()) as { data: unknown[] }).data).toHaveLength(1);
}, 60_000);

test("a key within its limits: every line goes to the batch API and is metered once, at the batch price", async () => {
  const { key, id } = await newKey({ budget_usd: 5, rpm: 100 });
  const openai = new OpenAI({ apiKey: key, baseURL: `${h.url}/v1`, maxRetries: 0 });
  const sim = h.gw.simulator!;
  const seen = sim.requests.length;
  const batch = await createBatch(openai, [line("x", "alpha-haiku-4-5"), line("y", "alpha-haiku-4-5")]);
  const done = await wait(
    () => openai.batches.retrieve(batch.id),
    (b) => b.status === "completed",
  );
  expect(done.request_counts).toMatchObject({ total: 2, completed: 2, failed: 0 });
  const sent = sim.requests.slice(seen).filter((r) => r.method === "POST" && r.path === "/v1/messages/batches");
  expect((sent[0]!.body as { requests: unknown[] }).requests).toHaveLength(2);
  expect(sim.requests.slice(seen).filter((r) => r.path === "/v1/messages")).toHaveLength(0);
  const rows = await wait(
    async () =>
      (
        (await (
          await fetch(`${h.url}/admin/usage?key_id=${id}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
        ).json()) as { data: { cost_usd: number }[] }
      ).data,
    (d) => d.length === 2,
  );
  expect(rows).toHaveLength(2);
  // The reservations were replaced by the real cost: a direct call is still admitted.
  const direct = await openai.chat.completions.create({ model: "beta-5", messages: [{ role: "user", content: "hi" }] });
  expect(direct.choices[0]?.message.content).toBeDefined();
}, 60_000);

test("a line's worst case is reserved from its sending until it ends: held while the vendor runs it, given back when the batch is cancelled", async () => {
  // The line's worst case (60,000 output tokens of alpha-haiku-4-5, about $0.30) fits; what is
  // left while it is held (about $0.05) does not fit a direct call of 10,000 output tokens of beta-5.
  const { key } = await newKey({ budget_usd: 0.35 });
  const openai = new OpenAI({ apiKey: key, baseURL: `${h.url}/v1`, maxRetries: 0 });
  const sim = h.gw.simulator!;
  // The vendor's batches run for a minute: the line is out there while the key calls directly.
  await fetch(`${sim.url}/_sim/batches`, { method: "POST", body: JSON.stringify({ ms: 60_000 }) });
  try {
    const seen = sim.requests.length;
    const big = {
      ...line("big", "alpha-haiku-4-5"),
      body: { ...line("big", "alpha-haiku-4-5").body, max_tokens: 60_000 },
    };
    const batch = await createBatch(openai, [big]);
    await wait(
      async () => sim.requests.slice(seen).filter((r) => r.method === "POST" && r.path === "/v1/messages/batches"),
      (r) => r.length > 0,
    );
    const direct = () =>
      fetch(`${h.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: "beta-5", max_tokens: 10_000, messages: [{ role: "user", content: "hi" }] }),
      });
    // The line's worst case is held: the direct call's does not fit beside it.
    const held = await direct();
    expect(held.status).toBe(429);
    expect(((await held.json()) as { error: { code: string } }).error.code).toBe("insufficient_quota");
    await openai.batches.cancel(batch.id);
    const ended = await wait(
      () => openai.batches.retrieve(batch.id),
      (b) => b.status === "cancelled",
    );
    expect(ended.status).toBe("cancelled");
    // Given back: the key's direct call is admitted again (nothing was spent).
    const after = await direct();
    expect(after.status).toBe(200);
    await after.text();
  } finally {
    await fetch(`${sim.url}/_sim/batches`, { method: "DELETE" });
  }
}, 60_000);

// Last: this job's queued lines wait out the rpm, holding this instance's worker until the gateway stops.
test("a key with rpm 1: one line of three reaches the vendor's batch API, the others wait in Turnpike's queue", async () => {
  const { key } = await newKey({ rpm: 1 });
  const openai = new OpenAI({ apiKey: key, baseURL: `${h.url}/v1`, maxRetries: 0 });
  const sim = h.gw.simulator!;
  const seen = sim.requests.length;
  await createBatch(openai, [line("1", "alpha-haiku-4-5"), line("2", "alpha-haiku-4-5"), line("3", "alpha-haiku-4-5")]);
  const sent = await wait(
    async () => sim.requests.slice(seen).filter((r) => r.method === "POST" && r.path === "/v1/messages/batches"),
    (r) => r.length > 0,
  );
  expect(sent).toHaveLength(1);
  expect((sent[0]!.body as { requests: unknown[] }).requests).toHaveLength(1);
  // Give the queue a moment: the two others are refused by the rpm there too, and never sent.
  await Bun.sleep(300);
  expect(sim.requests.slice(seen).filter((r) => r.path === "/v1/messages")).toHaveLength(0);
}, 60_000);
