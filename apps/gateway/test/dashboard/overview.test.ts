/**
 * The dashboard's Overview in Debian's headless Chromium (installed by scripts/debian-tools.ts when
 * missing): spend today and this month against each budget, latency and first token by model and
 * deployment, today's refusals by reason — each figure the one the admin API gives — and the view
 * fitting a 1366 px laptop and a 390 px phone. Photographed into screenshots/ (gitignored).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
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

let h: Harness;
let browser: Browser;
let page: Page;
let team: { id: string; name: string };
let key: { id: string; key: string };

const admin = async (path: string, body?: unknown) =>
  (await (
    await fetch(h.url + path, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
  ).json()) as any;
const chat = (secret: string, model: string, content: string, stream = false) =>
  fetch(`${h.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    // An output cap: a call is admitted only when its worst case fits the key's budget.
    body: JSON.stringify({ model, stream, max_tokens: 64, messages: [{ role: "user", content }] }),
  }).then(async (r) => (await r.text(), r.status));

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  ensureDashboardBuilt();
  mkdirSync(SHOTS, { recursive: true });
  h = await startHarness();
  team = await admin("/admin/teams", { name: "web", budget_usd: 20 });
  key = await admin("/admin/keys", { name: "storefront", team_id: team.id, budget_usd: 0.01 });
  // Traffic: replies and streams on two models, an upstream failure, two kinds of refusal.
  for (let i = 0; i < 3; i++) expect(await chat(key.key, "beta-5.5", `hi ${i}`)).toBe(200);
  expect(await chat(key.key, "beta-5.5", "a stream [sim chunks=4]", true)).toBe(200);
  expect(await chat(h.key, "alpha-haiku-4-5", "hello")).toBe(200);
  expect(await chat(h.key, "alpha-haiku-4-5", "fail [sim error=500]")).toBe(500);
  expect(await chat(h.key, "no-such-model", "hi")).toBe(404);
  expect(await chat(h.key, "no-such-model", "hi")).toBe(404);
  expect(await chat("sk-tp-not-a-key-0123456789", "beta-5.5", "hi")).toBe(401);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  page = await (await browser.newContext({ viewport: { width: 1366, height: 768 } })).newPage();
}, STEP_MS);
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const text = async (selector: string) => ((await page.locator(selector).first().textContent()) ?? "").trim();
const cells = (row: string) =>
  page
    .locator(row)
    .locator("td")
    .evaluateAll((tds) => tds.map((td) => (td.textContent ?? "").trim()));

describe("the Overview in headless Chromium", () => {
  step(
    "spend today and this month, each budget, latency by model and deployment, refusals by reason",
    async () => {
      await page.goto(`${h.url}/dashboard`);
      await page.getByLabel("Admin key").fill(ADMIN_KEY);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "New key" }).waitFor();
      await page.getByRole("navigation", { name: "Views" }).getByRole("button", { name: "Overview" }).click();
      await page.locator('tr[data-latency="beta-5.5/beta"]').waitFor();
      await page.locator('tr[data-refusal="404 not_found_error"]').waitFor();
      // Every feed answered (a failed one would say so in the alert).
      expect(await page.getByRole("alert").count()).toBe(0);

      // The tiles: the daily feed's figures of today, and of the month so far.
      const today = new Date().toISOString().slice(0, 10);
      const daily = await admin(`/admin/usage/daily?by=team&since=${today.slice(0, 8)}01&until=${today}`);
      const all = (f: string, i?: number) =>
        daily.series.reduce(
          (n: number, s: any) => n + (i === undefined ? s[f].reduce((a: number, b: number) => a + b, 0) : s[f][i]),
          0,
        );
      const last = daily.days.length - 1;
      expect(all("requests", last)).toBe(6);
      expect(await text('[data-testid="requests-today"]')).toBe("6");
      expect(await text('[data-testid="error-rate-today"]')).toBe(`${((1 / 6) * 100).toFixed(1)}%`);
      const money = (n: number) => `$${n >= 1 ? n.toFixed(2) : String(Number(n.toPrecision(3)))}`;
      expect(await text('[data-testid="spend-today"]')).toBe(money(all("cost_usd", last)));
      expect(await text('[data-testid="spend-this-month"]')).toBe(money(all("cost_usd")));
      expect(all("cost_usd")).toBeGreaterThan(0);

      // The budgets: the key's and its team's, spent as the admin API says.
      const shown = await admin(`/admin/keys/${key.id}`);
      const keyRow = await cells(`tr[data-budget="key:${key.id}"]`);
      expect(keyRow[0]).toBe("storefront key");
      expect(keyRow[1]).toBe(money(shown.spent_this_month_usd));
      expect(keyRow[2]).toBe("$0.01");
      expect(keyRow[3]).toBe(`${((shown.spent_this_month_usd / 0.01) * 100).toFixed(1)}%`);
      const teamRow = await cells(`tr[data-budget="team:${team.id}"]`);
      expect(teamRow.slice(0, 3)).toEqual(["web team", money(shown.spent_this_month_usd), "$20.00"]);

      // Latency: the rows of GET /admin/latency, by model and deployment.
      const latency = await admin("/admin/latency");
      const beta = latency.data.find((r: any) => r.model === "beta-5.5");
      expect(beta).toMatchObject({ deployment: "beta", requests: 4, errors: 0, streams: 1 });
      const betaRow = await cells('tr[data-latency="beta-5.5/beta"]');
      expect(betaRow.slice(0, 3)).toEqual(["beta-5.5", "beta", "4"]);
      expect(betaRow[5]).not.toBe("—");
      const alphaRow = await cells('tr[data-latency="alpha-haiku-4-5/alpha"]');
      expect(alphaRow[2]).toBe("2 (1 failed)");
      expect(alphaRow[5]).toBe("—");

      // This month's latency from the ledger: GET /admin/usage/latency's rows, by model and deployment.
      const month = new Date().toISOString().slice(0, 8);
      const ledger = await admin(
        `/admin/usage/latency?by=model,deployment&since=${encodeURIComponent(`${month}01T00:00:00.000Z`)}`,
      );
      const betaLedger = ledger.data.find((r: any) => r.model === "beta-5.5" && r.deployment === "beta");
      expect(betaLedger.requests).toBe(4);
      await page.locator('tr[data-ledger-latency="beta-5.5/beta"]').waitFor();
      const shownMs = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${Math.round(x)} ms`);
      expect(await cells('tr[data-ledger-latency="beta-5.5/beta"]')).toEqual([
        "beta-5.5",
        "beta",
        "4",
        shownMs(betaLedger.p50_ms),
        shownMs(betaLedger.p90_ms),
        shownMs(betaLedger.p99_ms),
      ]);

      // Refusals: two unknown models, one bad key.
      expect((await cells('tr[data-refusal="404 not_found_error"]')).slice(0, 3)).toEqual([
        "404",
        "not_found_error",
        "2",
      ]);
      expect((await cells('tr[data-refusal="401 authentication_error"]'))[2]).toBe("1");
    },
    STEP_MS,
  );

  for (const [width, height, label] of [
    [1366, 768, "laptop"],
    [390, 844, "phone"],
  ] as const) {
    step(
      `fits a ${width} px screen: nothing wider than the viewport, no table scrolling sideways`,
      async () => {
        await page.setViewportSize({ width, height });
        // Layout settles within a frame or two of the resize; the check waits for it, bounded.
        await page
          .waitForFunction(() => document.documentElement.scrollWidth <= window.innerWidth, null, { timeout: 5000 })
          .catch(() => undefined);
        const widths = await page.evaluate(() => ({
          page: document.documentElement.scrollWidth - window.innerWidth,
          tables: [...document.querySelectorAll<HTMLElement>(".scroll")].map((e) => e.scrollWidth - e.clientWidth),
        }));
        expect({ page: Math.max(widths.page, 0), tables: widths.tables.filter((w) => w > 0) }).toEqual({
          page: 0,
          tables: [],
        });
        // Every tile on screen, side by side or stacked.
        for (const box of await page
          .locator(".tile")
          .evaluateAll((ts) => ts.map((t) => t.getBoundingClientRect().right)))
          expect(box).toBeLessThanOrEqual(width);
        await page.screenshot({ path: join(SHOTS, `${label}-overview.png`), fullPage: true });
      },
      STEP_MS,
    );
  }
});
