/**
 * The dashboard's Guardrails view in Debian's headless Chromium (installed by
 * scripts/debian-tools.ts when missing): after requests in which policies found values, the view
 * shows the totals by category and a row per policy, category, action and key — the figures of
 * `GET /admin/guardrails`, a dry run marked, and never a value. Photographed into screenshots/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { ensureDashboardBuilt } from "../../src/admin/dashboard-build";
import { ADMIN_KEY, startHarness, type Harness } from "../harness";

const CHROMIUM = process.env.TURNPIKE_CHROMIUM || "/usr/bin/chromium";
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"];
const SHOTS = join(import.meta.dir, "screenshots");
const STEP_MS = 60_000;
// Without the browser the steps are reported skipped, by name, never passed.
const step = existsSync(CHROMIUM) ? test : test.skip;

const EMAIL = "dana.smith@example.com";
const CARD = "4111 1111 1111 1111";
const dir = mkdtempSync(join(tmpdir(), "turnpike-guardrail-view-"));
const configFile = join(dir, "turnpike.json");
writeFileSync(
  configFile,
  JSON.stringify({
    guardrails: {
      default: ["pii", "trial-cards"],
      policies: {
        pii: { detect: ["email"], action: "redact", apply_to: ["prompt"] },
        "trial-cards": { detect: ["card"], action: "block", dry_run: true, apply_to: ["prompt"] },
      },
    },
  }),
);

let h: Harness;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  ensureDashboardBuilt();
  mkdirSync(SHOTS, { recursive: true });
  h = await startHarness({ TURNPIKE_CONFIG: configFile });
  const chat = (content: string) =>
    fetch(`${h.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "beta-5", messages: [{ role: "user", content }] }),
    }).then(async (r) => (await r.text(), r.status));
  expect(await chat(`mail ${EMAIL} and ${EMAIL}`)).toBe(200);
  expect(await chat(`card ${CARD}`)).toBe(200);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  page = await (await browser.newContext({ viewport: { width: 1366, height: 768 } })).newPage();
}, STEP_MS);
afterAll(async () => {
  await browser?.close();
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("dashboard: Guardrails view", () => {
  step(
    "totals by category and a row per policy, category, action and key; a dry run marked; no value",
    async () => {
      await page.goto(`${h.url}/dashboard`);
      await page.getByLabel("Admin key").fill(ADMIN_KEY);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("navigation", { name: "Views" }).getByRole("button", { name: "Guardrails" }).click();
      const table = page.getByRole("table", { name: "Guardrail detections" });
      await table.locator("tbody tr").nth(1).waitFor();
      const rows = await table
        .locator("tbody tr")
        .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)));
      // A key is shown by its name.
      const { name } = (await (
        await fetch(`${h.url}/admin/keys/${h.keyId}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
      ).json()) as { name: string };
      expect(rows.map((r) => [r[0], r[1], r[2], r[4], r[5]])).toEqual([
        ["pii", "email", "redact", "1", "2"],
        ["trial-cards", "card", "block (dry run)", "1", "1"],
      ]);
      expect(rows.map((r) => r[3])).toEqual([name, name]);
      const totals = await page.getByRole("list", { name: "Detections by category" }).textContent();
      expect(totals).toContain("2 email");
      expect(totals).toContain("1 card");
      const all = await page.content();
      expect(all).not.toContain(EMAIL);
      expect(all).not.toContain(CARD);
      await page.screenshot({ path: join(SHOTS, "guardrails.png"), fullPage: true });
    },
    STEP_MS,
  );
});
