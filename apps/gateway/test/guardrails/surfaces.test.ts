/**
 * Guardrails on the surfaces beside a conversation (docs/guardrails.md): embeddings input, batch
 * lines (Turnpike's queue and an upstream's batch API), stored responses read back or
 * continued, and what the model writes (the `reply` surface). The simulator records what it was sent: it never holds a value a policy took out.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI, { toFile } from "openai";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";

const dir = mkdtempSync(join(tmpdir(), "turnpike-guardrail-surfaces-"));
const configFile = join(dir, "turnpike.json");
writeFileSync(
  configFile,
  JSON.stringify({
    guardrails: {
      default: ["pii", "no-secrets"],
      policies: {
        pii: { detect: ["email"], action: "redact" },
        "no-secrets": { detect: ["secret"], action: "block" },
        // Policies that read only what the model writes (a key names them below).
        "reply-mask": { words: ["Zephyrine"], action: "redact", apply_to: ["reply"] },
        "reply-block": { detect: ["secret"], action: "block", apply_to: ["reply"] },
      },
    },
  }),
);

const EMAIL = "dana.smith@example.com";
const OTHER = "li.wei@example.org";
const SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345";

let h: Harness;
let openai: OpenAI;
beforeAll(async () => {
  // gamma's batch mode switched off: its lines run through Turnpike's own queue.
  h = await startHarness({ TURNPIKE_CONFIG: configFile, TURNPIKE_BATCH_UPSTREAM_OFF: "gamma" });
  openai = new OpenAI({ apiKey: h.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

const sentSince = (from: number) => JSON.stringify(h.gw.simulator!.requests.slice(from).map((r) => r.body));
async function records(n: number) {
  const res = await fetch(`${h.url}/admin/usage?limit=${n}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  return ((await res.json()) as { data: any[] }).data;
}

describe("embeddings input", () => {
  test("masked before it is sent (redact acts as mask: a vector restores nothing); noted in the ledger", async () => {
    const before = h.gw.simulator!.requests.length;
    const res = await openai.embeddings.create({
      model: "beta-embedding-3-small",
      input: [`write to ${EMAIL}`, "nothing here"],
      encoding_format: "float",
    });
    expect(res.data).toHaveLength(2);
    const sent = sentSince(before);
    expect(sent).not.toContain(EMAIL);
    expect(sent).toContain("write to [EMAIL]");
    expect(sent).toContain("nothing here");
    const [rec] = await records(1);
    expect(rec).toMatchObject({ endpoint: "embeddings", status: 200 });
    expect(rec.guardrail).toMatchObject({ policies: ["pii"], categories: ["email"], action: "redact" });
  });

  test("a blocked input is a 400 naming the category; nothing sent; a record without the value", async () => {
    const before = h.gw.simulator!.requests.length;
    const res = await fetch(`${h.url}/v1/embeddings`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "beta-embedding-3-small", input: `key ${SECRET}` }),
    });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).toContain('"type":"guardrail_blocked"');
    expect(text).toContain('category \\"secret\\"');
    expect(text).not.toContain(SECRET);
    expect(h.gw.simulator!.requests.length).toBe(before);
    const [rec] = await records(1);
    expect(rec).toMatchObject({ endpoint: "embeddings", status: 400, cost_usd: 0 });
    expect(rec.guardrail).toMatchObject({ policies: ["no-secrets"], categories: ["secret"], action: "block" });
    expect(JSON.stringify(rec)).not.toContain(SECRET);
  });
});

describe("batch lines", () => {
  test("each line redacted before it is sent, to a batch API or through the queue; a blocked line errors", async () => {
    const line = (custom_id: string, model: string, content: string) => ({
      custom_id,
      method: "POST",
      url: "/v1/chat/completions",
      body: { model, max_tokens: 50, messages: [{ role: "user", content }] },
    });
    const lines = [
      // To the messages protocol's batch API.
      line("upstream", "alpha-haiku-4-5", `Greet ${EMAIL}. [sim text="Hello ${EMAIL}"]`),
      // Through Turnpike's queue (gamma's batch mode is off).
      line("queued", "gamma-3-flash", `Greet ${OTHER}. [sim text="Hi ${OTHER}"]`),
      line("blocked", "gamma-3-flash", `My key is ${SECRET}`),
      line("blocked-upstream", "alpha-haiku-4-5", `My key is ${SECRET}`),
    ];
    const file = await openai.files.create({
      file: await toFile(Buffer.from(lines.map((l) => JSON.stringify(l)).join("\n")), "in.jsonl"),
      purpose: "batch",
    });
    const before = h.gw.simulator!.requests.length;
    const batch = await openai.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    let done = await openai.batches.retrieve(batch.id);
    for (let i = 0; i < 600 && done.status !== "completed"; i++) {
      await Bun.sleep(25);
      done = await openai.batches.retrieve(batch.id);
    }
    expect(done.request_counts).toEqual({ total: 4, completed: 2, failed: 2 });
    const sent = sentSince(before);
    for (const v of [EMAIL, OTHER, SECRET]) expect(sent).not.toContain(v);
    const toBatchApi = h.gw.simulator!.requests.slice(before).find((r) => r.path === "/v1/messages/batches")!.body as {
      requests: { custom_id: string; params: { messages: { content: { text: string }[] }[] } }[];
    };
    expect(toBatchApi.requests.map((r) => r.params.messages[0]!.content[0]!.text)).toEqual([
      'Greet [EMAIL_1]. [sim text="Hello [EMAIL_1]"]',
    ]);
    const out = (await (await openai.files.content(done.output_file_id!)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const text = (id: string) => out.find((o) => o.custom_id === id)?.response.body.choices[0].message.content;
    expect(text("upstream")).toBe(`Hello ${EMAIL}`);
    expect(text("queued")).toBe(`Hi ${OTHER}`);
    const errs = (await (await openai.files.content(done.error_file_id!)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(errs.map((e) => e.custom_id).sort()).toEqual(["blocked", "blocked-upstream"]);
    for (const e of errs) {
      expect(e.response.status_code).toBe(400);
      expect(e.response.body.error.type).toBe("guardrail_blocked");
      expect(e.response.body.error.message).toContain('category "secret"');
      expect(JSON.stringify(e)).not.toContain(SECRET);
    }
  });
});

describe("stored responses", () => {
  const create = (body: Record<string, unknown>) =>
    fetch(`${h.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "beta-5", ...body }),
    });
  const read = async (path: string) =>
    (await fetch(`${h.url}${path}`, { headers: { authorization: `Bearer ${h.key}` } })).text();

  test("kept in the redacted form: read back and continued without the values; placeholders never reused", async () => {
    const first = await create({ input: `I am ${EMAIL}. [sim text="Noted, ${EMAIL}."]` });
    expect(first.status).toBe(200);
    const reply = (await first.json()) as { id: string; output: { content?: { text: string }[] }[] };
    // The client sees its own value in the reply as it was answered.
    expect(JSON.stringify(reply.output)).toContain(`Noted, ${EMAIL}.`);
    // Read back: the placeholder the upstream saw, not the value (the mapping is never stored).
    const stored = await read(`/v1/responses/${reply.id}`);
    expect(stored).not.toContain(EMAIL);
    expect(stored).toContain("Noted, [EMAIL_1].");
    const items = await read(`/v1/responses/${reply.id}/input_items`);
    expect(items).not.toContain(EMAIL);
    expect(items).toContain("I am [EMAIL_1].");
    // Continued with a new value: the stored turn goes as stored, the new value gets a new placeholder.
    const before = h.gw.simulator!.requests.length;
    const next = await create({
      previous_response_id: reply.id,
      input: `Now write to ${OTHER}. [sim text="Done: ${OTHER}"]`,
    });
    expect(next.status).toBe(200);
    expect(JSON.stringify(await next.json())).toContain(`Done: ${OTHER}`);
    const sent = sentSince(before);
    expect(sent).not.toContain(EMAIL);
    expect(sent).not.toContain(OTHER);
    expect(sent).toContain("I am [EMAIL_1].");
    expect(sent).toContain("Now write to [EMAIL_2].");
  });
});

describe("what the model writes", () => {
  let key: string;
  beforeAll(async () => {
    const res = await fetch(`${h.url}/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "replies", guardrails: ["pii", "reply-mask", "reply-block"] }),
    });
    key = ((await res.json()) as { key: string }).key;
  });
  const chat = (content: string, stream: boolean, model = "beta-5") =>
    fetch(`${h.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, stream, messages: [{ role: "user", content }] }),
    });
  async function streamed(res: Response): Promise<string> {
    let text = "";
    for (const line of (await res.text()).split("\n")) {
      if (!line.startsWith("data: {")) continue;
      text += JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? "";
    }
    return text;
  }
  const PROMPT = `Mail ${EMAIL}. [sim chunks=9 text="Dear ${EMAIL}, Zephyrine sends her regards."]`;
  const WANT = `Dear ${EMAIL}, [WORD] sends her regards.`;

  for (const model of ["beta-5", "alpha-haiku-4-5"])
    test(`${model}: masked in the reply, JSON and streamed; the client's own value restored, not flagged`, async () => {
      const json = await chat(PROMPT, false, model);
      expect(json.status).toBe(200);
      expect(((await json.json()) as any).choices[0].message.content).toBe(WANT);
      const [rec] = await records(1);
      // The email twice in the prompt, never in the reply (where it is this request's own, restored).
      expect(rec.guardrail.detections).toEqual([
        { policy: "pii", category: "email", action: "redact", dry_run: false, n: 2 },
        { policy: "reply-mask", category: "word", action: "redact", dry_run: false, n: 1 },
      ]);
      expect(await streamed(await chat(PROMPT, true, model))).toBe(WANT);
    });

  test("a blocking policy on replies: a JSON reply is a 400 naming the category; a stream ends with the notice", async () => {
    const prompt = `Show the key. [sim chunks=5 text="Here: ${SECRET} and nothing more."]`;
    const json = await chat(prompt, false);
    expect(json.status).toBe(400);
    const body = await json.text();
    expect(body).toContain('"type":"guardrail_blocked"');
    expect(body).toContain('the reply holds a value of category \\"secret\\"');
    expect(body).not.toContain(SECRET);
    const [rec] = await records(1);
    expect(rec).toMatchObject({ status: 400 });
    expect(rec.cost_usd).toBeGreaterThan(0);
    expect(rec.guardrail).toMatchObject({ policies: ["reply-block"], categories: ["secret"], action: "block" });
    const text = await streamed(await chat(prompt, true));
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("nothing more");
    expect(text).toContain('[blocked by guardrail policy "reply-block": the reply holds a value of category "secret"]');
  });
});
