/**
 * The dashboard's guardrails panel reads `GET /admin/guardrails`: the ledger's guardrail notes
 * summed by policy, category, action, dry run and key — never a value. Two keys send personal
 * data; one request is blocked, one only trips a dry-run policy.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN_KEY, startHarness, type Harness } from "../harness";

const dir = mkdtempSync(join(tmpdir(), "turnpike-guardrail-feed-"));
const configFile = join(dir, "turnpike.json");
writeFileSync(
  configFile,
  JSON.stringify({
    guardrails: {
      default: ["pii", "no-secrets", "trial-cards"],
      policies: {
        pii: { detect: ["email"], action: "redact" },
        "no-secrets": { detect: ["secret"], action: "block" },
        "trial-cards": { detect: ["card"], action: "block", dry_run: true },
      },
    },
  }),
);

const EMAIL = "li.wei@example.org";
const OTHER = "ana@example.com";
const SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345";
const CARD = "4111 1111 1111 1111";

let h: Harness;
let clock = Date.parse("2026-11-20T12:00:00Z");
let other: { id: string; key: string };
const admin = (path: string, init: RequestInit = {}) =>
  fetch(h.url + path, { ...init, headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(init.headers ?? {}) } });
const chat = (key: string, text: string) =>
  fetch(`${h.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "beta-5", messages: [{ role: "user", content: text }] }),
  });

beforeAll(async () => {
  h = await startHarness({ TURNPIKE_CONFIG: configFile }, { now: () => clock });
  other = (await (await admin("/admin/keys", { method: "POST", body: JSON.stringify({ name: "other" }) })).json()) as {
    id: string;
    key: string;
  };
  expect((await chat(h.key, `mail ${EMAIL} and ${OTHER}`)).status).toBe(200);
  expect((await chat(h.key, `again ${EMAIL}`)).status).toBe(200);
  expect((await chat(h.key, `key ${SECRET}`)).status).toBe(400);
  clock = Date.parse("2026-11-22T08:00:00Z");
  expect((await chat(other.key, `card ${CARD}, mail ${OTHER}`)).status).toBe(200);
  expect((await chat(other.key, "nothing to see")).status).toBe(200);
});
afterAll(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("GET /admin/guardrails", () => {
  test("detections and requests per policy, category, action and key; a dry run marked; no value", async () => {
    const res = await admin("/admin/guardrails?since=2026-11-19&until=2026-11-23");
    expect(res.status).toBe(200);
    const text = await res.text();
    for (const v of [EMAIL, OTHER, SECRET, CARD]) expect(text).not.toContain(v);
    const body = JSON.parse(text);
    expect(body).toMatchObject({ since: "2026-11-19", until: "2026-11-23", truncated: false });
    expect(body.data).toEqual([
      {
        policy: "pii",
        category: "email",
        action: "redact",
        dry_run: false,
        key_id: h.keyId,
        requests: 2,
        detections: 3,
      },
      // The card found twice: in the prompt (a dry run lets it pass) and in the reply that echoes it.
      {
        policy: "trial-cards",
        category: "card",
        action: "block",
        dry_run: true,
        key_id: other.id,
        requests: 1,
        detections: 2,
      },
      {
        policy: "no-secrets",
        category: "secret",
        action: "block",
        dry_run: false,
        key_id: h.keyId,
        requests: 1,
        detections: 1,
      },
      {
        policy: "pii",
        category: "email",
        action: "redact",
        dry_run: false,
        key_id: other.id,
        requests: 1,
        detections: 1,
      },
    ]);
  });

  test("a range outside the traffic is empty; a bad day is a 400; a key is not an admin", async () => {
    expect(((await (await admin("/admin/guardrails?since=2026-11-21&until=2026-11-21")).json()) as any).data).toEqual(
      [],
    );
    const only = (await (await admin("/admin/guardrails?since=2026-11-22&until=2026-11-22")).json()) as any;
    expect(only.data.map((r: { key_id: string }) => r.key_id)).toEqual([other.id, other.id]);
    expect((await admin("/admin/guardrails?since=2026-13-01")).status).toBe(400);
    const asKey = await fetch(`${h.url}/admin/guardrails`, { headers: { authorization: `Bearer ${h.key}` } });
    expect(asKey.status).toBe(401);
  });
});
