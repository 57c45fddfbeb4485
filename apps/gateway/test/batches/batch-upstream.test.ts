/**
 * Which path a batch line takes, and what it costs: a vendor's batch API switched off by config
 * (its lines through Turnpike's queue, at the normal price), the other vendor's still used (at
 * the batch price); and an upstream batch that fails as a whole, whose lines then run through the
 * queue at the normal price, each once in the ledger; a generateContent batch cancelled upstream.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import OpenAI, { toFile } from "openai";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";
import { until } from "./until";

let h: Harness;
let openai: OpenAI;

beforeAll(async () => {
  h = await startHarness({ TURNPIKE_BATCH_UPSTREAM_OFF: "beta" });
  openai = new OpenAI({ apiKey: h.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
});
afterAll(() => h.close());

async function ledgerRow(requestId: string): Promise<{ cost_usd: number; model: string; endpoint: string }> {
  for (let i = 0; i < 200; i++) {
    const res = await fetch(`${h.url}/admin/usage?key_id=${h.keyId}&limit=1000`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    const rows = (
      (await res.json()) as { data: { request_id: string; cost_usd: number; model: string; endpoint: string }[] }
    ).data;
    const row = rows.find((r) => r.request_id === requestId);
    if (row) return row;
    await Bun.sleep(20);
  }
  throw new Error(`no ledger row for ${requestId}`);
}

const prompt = 'Price me. [sim text="priced"]';
const chatLine = (id: string, model: string) => ({
  custom_id: id,
  method: "POST",
  url: "/v1/chat/completions",
  body: { model, max_tokens: 16, messages: [{ role: "user", content: prompt }] },
});

async function runBatch(lines: unknown[]) {
  const file = await openai.files.create({
    file: await toFile(Buffer.from(lines.map((l) => JSON.stringify(l)).join("\n")), "in.jsonl"),
    purpose: "batch",
  });
  const seen = h.gw.simulator!.requests.length;
  const batch = await openai.batches.create({
    input_file_id: file.id,
    endpoint: "/v1/chat/completions",
    completion_window: "24h",
  });
  const done = await until(
    () => openai.batches.retrieve(batch.id),
    (b) => b.status === "completed",
  );
  expect(done.status).toBe("completed");
  const out = (await (await openai.files.content(done.output_file_id!)).text())
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  const calls = h.gw.simulator!.requests.slice(seen).map((r) => `${r.method} ${r.path.split("?")[0]}`);
  return { out, calls };
}

async function directCost(model: string): Promise<number> {
  const direct = await openai.chat.completions
    .create({ model, max_tokens: 16, messages: [{ role: "user", content: prompt }] })
    .withResponse();
  return (await ledgerRow(direct.response.headers.get("x-request-id")!)).cost_usd;
}

test("a vendor's batch API switched off: its lines through the queue at the normal price; the others' at their batch price", async () => {
  const { out, calls } = await runBatch([
    chatLine("beta", "beta-5"),
    chatLine("alpha", "alpha-haiku-4-5"),
    chatLine("gamma", "gamma-3-flash"),
  ]);
  // beta's lines were sent as ordinary calls; alpha's went to the messages batch API.
  expect(calls).toContain("POST /v1/chat/completions");
  expect(calls).not.toContain("POST /v1/batches");
  expect(calls).toContain("POST /v1/messages/batches");
  expect(calls).not.toContain("POST /v1/messages");
  // gamma's went to the generateContent batch mode, and its operation was polled.
  expect(calls).toContain("POST /v1beta/models/gamma-3-flash:batchGenerateContent");
  expect(calls.some((c) => /^GET \/v1beta\/batches\/[0-9a-f]+$/.test(c))).toBe(true);
  expect(calls).not.toContain("POST /v1beta/models/gamma-3-flash:generateContent");
  expect(out[2].response.body.choices[0].message.content).toBe("priced");
  const gamma = await ledgerRow(out[2].response.request_id);
  expect(gamma.model).toBe("gamma-3-flash");
  expect(gamma.cost_usd).toBeCloseTo((await directCost("gamma-3-flash")) * 0.5, 9);
  const [beta, alpha] = [await ledgerRow(out[0].response.request_id), await ledgerRow(out[1].response.request_id)];
  expect(beta).toMatchObject({ model: "beta-5", endpoint: "chat" });
  expect(alpha).toMatchObject({ model: "alpha-haiku-4-5", endpoint: "chat" });
  expect(beta.cost_usd).toBeCloseTo(await directCost("beta-5"), 9);
  expect(alpha.cost_usd).toBeCloseTo((await directCost("alpha-haiku-4-5")) * 0.5, 9);
});

test("an upstream batch that fails as a whole: its lines run through the queue at the normal price, each once", async () => {
  const sim = h.gw.simulator!;
  await fetch(`${sim.url}/_sim/batches`, { method: "POST", body: JSON.stringify({ fail: true }) });
  try {
    // delta speaks the chat protocol: its batch API is used (and fails here).
    const { out, calls } = await runBatch([chatLine("d1", "delta-m3"), chatLine("d2", "delta-m3")]);
    expect(calls.filter((c) => c === "POST /v1/batches")).toHaveLength(1);
    expect(calls.filter((c) => c === "POST /v1/chat/completions")).toHaveLength(2);
    expect(out.map((o) => [o.custom_id, o.response.status_code])).toEqual([
      ["d1", 200],
      ["d2", 200],
    ]);
    const full = await directCost("delta-m3");
    for (const o of out) expect((await ledgerRow(o.response.request_id)).cost_usd).toBeCloseTo(full, 9);
  } finally {
    await fetch(`${sim.url}/_sim/batches`, { method: "DELETE" });
  }
});

test("a batch cancelled while its generateContent batch runs: the upstream operation is cancelled, every line cancelled", async () => {
  const sim = h.gw.simulator!;
  await fetch(`${sim.url}/_sim/batches`, { method: "POST", body: JSON.stringify({ ms: 600_000 }) });
  try {
    const file = await openai.files.create({
      file: await toFile(
        Buffer.from(
          [chatLine("g1", "gamma-3-pro"), chatLine("g2", "gamma-3-pro")].map((l) => JSON.stringify(l)).join("\n"),
        ),
        "in.jsonl",
      ),
      purpose: "batch",
    });
    const seen = sim.requests.length;
    const calls = () => sim.requests.slice(seen).map((r) => `${r.method} ${r.path}`);
    const batch = await openai.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    await until(
      async () => calls(),
      (c) => c.includes("POST /v1beta/models/gamma-3-pro:batchGenerateContent"),
    );
    await openai.batches.cancel(batch.id);
    const ended = await until(
      () => openai.batches.retrieve(batch.id),
      (b) => b.status === "cancelled",
    );
    expect(ended.status).toBe("cancelled");
    expect(calls().some((c) => /^POST \/v1beta\/batches\/[0-9a-f]+:cancel$/.test(c))).toBe(true);
    const errs = (await (await openai.files.content(ended.error_file_id!)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(errs.map((e) => [e.custom_id, e.error.code])).toEqual([
      ["g1", "batch_cancelled"],
      ["g2", "batch_cancelled"],
    ]);
  } finally {
    await fetch(`${sim.url}/_sim/batches`, { method: "DELETE" });
  }
});
