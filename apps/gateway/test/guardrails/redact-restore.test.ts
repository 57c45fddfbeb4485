/**
 * Guardrails end to end (docs/guardrails.md): every client format × one model of each upstream
 * protocol, JSON and stream, with personal data in the prompt. The simulator records what it was
 * sent: it never sees a value, only placeholders; it answers with the placeholders (its `text`
 * directive was redacted with the prompt), and the client gets its own values back. A blocked
 * request reaches no upstream and leaves a record naming the policy and category, never the value.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN_KEY, ONE_PER_VENDOR, readSSE, startHarness, type Harness } from "../harness";

const dir = mkdtempSync(join(tmpdir(), "turnpike-guardrails-"));
const configFile = join(dir, "turnpike.json");
writeFileSync(
  configFile,
  JSON.stringify({
    // Retries, so that one request can be planned more than once.
    routing: { retries: 2 },
    guardrails: {
      default: ["pii", "no-secrets", "watch-ips"],
      policies: {
        pii: { detect: ["email", "card", "phone", "iban"], action: "redact" },
        "no-secrets": { detect: ["secret"], action: "block" },
        "watch-ips": { detect: ["ip"], action: "log" },
        "mask-emails": { detect: ["email"], action: "mask", apply_to: ["prompt"] },
        "trial-block": { detect: ["card"], action: "block", dry_run: true },
      },
    },
  }),
);

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ TURNPIKE_CONFIG: configFile });
});
afterAll(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

const EMAIL = "dana.smith@example.com";
const CARD = "4111 1111 1111 1111";
const IBAN = "DE89 3704 0044 0532 0130 00";
const IP = "203.0.113.7";
const ANSWER = `Noted ${EMAIL}, card ${CARD}, account ${IBAN}.`;
const PROMPT = `I am ${EMAIL} (card ${CARD}, IBAN ${IBAN}) from ${IP}. [sim chunks=6 text="${ANSWER}"]`;

type Format = "messages" | "chat" | "responses" | "generate";

/** One call in the client format; the reply's text, read as that format's client would. */
async function ask(
  format: Format,
  model: string,
  stream: boolean,
  prompt = PROMPT,
): Promise<{ status: number; text: string; body: string }> {
  let res: Response;
  switch (format) {
    case "messages":
      res = await h.call("/v1/messages", {
        method: "POST",
        dialect: "messages",
        body: JSON.stringify({ model, max_tokens: 200, stream, messages: [{ role: "user", content: prompt }] }),
      });
      break;
    case "chat":
      res = await h.call("/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify({ model, stream, messages: [{ role: "user", content: prompt }] }),
      });
      break;
    case "responses":
      res = await h.call("/v1/responses", {
        method: "POST",
        body: JSON.stringify({ model, stream, store: false, input: prompt }),
      });
      break;
    case "generate":
      res = await h.call(
        `/v1beta/models/${encodeURIComponent(model)}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`,
        {
          method: "POST",
          headers: { "x-goog-api-key": h.key },
          body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: prompt }] }] }),
        },
      );
      break;
  }
  if (res.status !== 200 || !stream) {
    const body = await res.text();
    if (res.status !== 200) return { status: res.status, text: "", body };
    return { status: 200, text: jsonText(format, JSON.parse(body)), body };
  }
  const frames = await readSSE(res);
  return { status: 200, text: frames.map((f) => streamText(format, f.data)).join(""), body: "" };
}

// biome-ignore lint/suspicious/noExplicitAny: a reply read by the fields each format defines
function jsonText(format: Format, b: any): string {
  switch (format) {
    case "messages":
      return b.content.map((c: { text?: string }) => c.text ?? "").join("");
    case "chat":
      return b.choices[0].message.content;
    case "responses":
      return b.output
        .flatMap((o: { content?: { text?: string }[] }) => o.content ?? [])
        .map((c: { text?: string }) => c.text ?? "")
        .join("");
    case "generate":
      return b.candidates[0].content.parts.map((p: { text?: string }) => p.text ?? "").join("");
  }
}

function streamText(format: Format, data: string): string {
  if (!data.startsWith("{")) return "";
  const e = JSON.parse(data);
  switch (format) {
    case "messages":
      return e.type === "content_block_delta" && e.delta.type === "text_delta" ? e.delta.text : "";
    case "chat":
      return e.choices?.[0]?.delta?.content ?? "";
    case "responses":
      return e.type === "response.output_text.delta" ? e.delta : "";
    case "generate":
      return (e.candidates?.[0]?.content?.parts ?? []).map((p: { text?: string }) => p.text ?? "").join("");
  }
}

async function records(n: number) {
  const res = await fetch(`${h.url}/admin/usage?limit=${n}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  // biome-ignore lint/suspicious/noExplicitAny: the records' fields read here
  return ((await res.json()) as { data: any[] }).data;
}

describe("redact before it leaves, restore in the reply", () => {
  for (const format of ["messages", "chat", "responses", "generate"] as const)
    for (const model of ONE_PER_VENDOR)
      for (const stream of [false, true])
        test(`${format} → ${model}${stream ? ", streamed" : ""}`, async () => {
          const before = h.gw.simulator!.requests.length;
          const r = await ask(format, model, stream);
          expect(r).toMatchObject({ status: 200 });
          // Every upstream request of the call (a generateContent stream to a messages client has
          // its prompt counted alongside).
          const sent = JSON.stringify(h.gw.simulator!.requests.slice(before).map((r) => r.body));
          expect(h.gw.simulator!.requests.length).toBeGreaterThan(before);
          // The upstream saw placeholders, never a value; the IP was only logged (action log).
          for (const value of [EMAIL, CARD, IBAN]) expect(sent).not.toContain(value);
          expect(sent).toContain("[EMAIL_1]");
          expect(sent).toContain("[CARD_1]");
          expect(sent).toContain("[IBAN_1]");
          expect(sent).toContain(IP);
          // The client sees its own values, never a placeholder.
          expect(r.text).toBe(ANSWER);
          const [rec] = await records(1);
          expect(rec.guardrail).toEqual({
            policies: ["pii", "watch-ips"],
            categories: ["email", "card", "iban", "ip"],
            action: "redact",
            dry_run: false,
            detections: [
              { policy: "pii", category: "email", action: "redact", dry_run: false, n: 2 },
              { policy: "pii", category: "card", action: "redact", dry_run: false, n: 2 },
              { policy: "pii", category: "iban", action: "redact", dry_run: false, n: 2 },
              { policy: "watch-ips", category: "ip", action: "log", dry_run: false, n: 1 },
            ],
          });
          expect(JSON.stringify(rec)).not.toContain(EMAIL);
        });
});

describe("block", () => {
  const SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345";
  for (const format of ["messages", "chat", "responses", "generate"] as const)
    test(`${format}: a 400 in the format's own shape naming the policy and category, nothing sent upstream, a record`, async () => {
      const before = h.gw.simulator!.requests.length;
      const r = await ask(format, "beta-5", false, `my key is ${SECRET}`);
      expect(r.status).toBe(400);
      // The error's type where the format has one (generateContent's is its status word).
      expect(r.body).toContain(format === "generate" ? '"status":"INVALID_ARGUMENT"' : '"type":"guardrail_blocked"');
      expect(r.body).toContain('guardrail policy \\"no-secrets\\"');
      expect(r.body).toContain('category \\"secret\\"');
      expect(r.body).not.toContain(SECRET);
      expect(h.gw.simulator!.requests.length).toBe(before);
      const [rec] = await records(1);
      expect(rec).toMatchObject({ status: 400, cost_usd: 0, input_tokens: 0, model: "beta-5" });
      expect(rec.guardrail).toMatchObject({ policies: ["no-secrets"], categories: ["secret"], action: "block" });
      expect(JSON.stringify(rec)).not.toContain(SECRET);
    });
});

describe("a key's own policies, dry runs and the metrics", () => {
  const admin = (path: string, body: unknown, method = "POST") =>
    fetch(`${h.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  test("a key naming policies runs those instead of the default; an unknown name is a 400", async () => {
    const bad = await admin("/admin/keys", { name: "g", guardrails: ["nope"] });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('guardrails: \\"nope\\" is not a policy');
    const made = await admin("/admin/keys", { name: "g", guardrails: ["mask-emails", "trial-block"] });
    expect(made.status).toBe(201);
    const { key, id, guardrails } = (await made.json()) as { key: string; id: string; guardrails: string[] };
    expect(guardrails).toEqual(["mask-emails", "trial-block"]);
    const before = h.gw.simulator!.requests.length;
    const res = await fetch(`${h.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "beta-5",
        messages: [{ role: "user", content: `Mail ${EMAIL}, card ${CARD} [sim text="to ${EMAIL}"]` }],
      }),
    });
    expect(res.status).toBe(200);
    // Masked for good: the reply keeps the tag; the card passed (its block is a dry run).
    const sent = JSON.stringify(h.gw.simulator!.requests.slice(before).map((r) => r.body));
    expect(sent).not.toContain(EMAIL);
    expect(sent).toContain(CARD);
    expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe(
      "to [EMAIL]",
    );
    const [rec] = await records(1);
    expect(rec.key_id).toBe(id);
    expect(rec.guardrail).toMatchObject({
      policies: ["mask-emails", "trial-block"],
      categories: ["email", "card"],
      action: "mask",
      dry_run: false,
    });
    expect(rec.guardrail.detections).toContainEqual({
      policy: "trial-block",
      category: "card",
      action: "block",
      dry_run: true,
      n: 1,
    });
    const metrics = await (await fetch(`${h.url}/metrics`)).text();
    expect(metrics).toContain(
      `turnpike_guardrail_detections_total{turnpike_policy="trial-block",turnpike_category="card",turnpike_action="block",turnpike_dry_run="true",turnpike_key_id="${id}"} 1`,
    );
    expect(metrics).not.toContain(EMAIL);
  });

  test("a team's policies run for every key of the team, the key's own added", async () => {
    const bad = await admin("/admin/teams", { name: "gr-bad", guardrails: ["nope"] });
    expect(bad.status).toBe(400);
    const team = (await (await admin("/admin/teams", { name: "gr", guardrails: ["mask-emails"] })).json()) as {
      id: string;
      guardrails: string[];
    };
    expect(team.guardrails).toEqual(["mask-emails"]);
    const { key } = (await (
      await admin("/admin/keys", { name: "in-team", team_id: team.id, guardrails: ["no-secrets"] })
    ).json()) as {
      key: string;
    };
    const call = (content: string) =>
      fetch(`${h.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "delta-m3", messages: [{ role: "user", content }] }),
      });
    const before = h.gw.simulator!.requests.length;
    expect((await call(`to ${EMAIL}`)).status).toBe(200);
    expect(JSON.stringify(h.gw.simulator!.requests.slice(before).map((r) => r.body))).toContain("to [EMAIL]");
    expect((await call("sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345")).status).toBe(400);
  });

  test("a refusal after redaction still names the field of the client's own request", async () => {
    const res = await h.call("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({
        model: "gamma-3-flash",
        messages: [
          { role: "system", content: `Support for ${EMAIL}` },
          {
            role: "user",
            content: [
              { type: "text", text: `I am ${EMAIL}` },
              { type: "image_url", image_url: { url: "https://images.example.com/cat.png" } },
            ],
          },
        ],
      }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe(
      "messages[1].content[1].image_url.url",
    );
  });

  test("a request tried three times counts what it holds once", async () => {
    const before = h.gw.simulator!.requests.length;
    const res = await h.call("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({ model: "beta-5", messages: [{ role: "user", content: `Mail ${EMAIL} [sim error=503]` }] }),
    });
    expect(res.status).toBe(503);
    expect(h.gw.simulator!.requests.length - before).toBe(3);
    const [rec] = await records(1);
    expect(rec.attempts).toBe(3);
    expect(rec.guardrail.detections).toEqual([
      { policy: "pii", category: "email", action: "redact", dry_run: false, n: 1 },
    ]);
  });
});
