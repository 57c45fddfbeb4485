import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { ensureDashboardBuilt } from "../../src/admin/dashboard-build";
import { ADMIN_KEY, startHarness, type Harness } from "../harness";

// The dashboard end to end in Debian's headless Chromium (installed by scripts/debian-tools.ts when
// missing): an operator signs in, makes a key, uses it, watches it in the log and the charts,
// rotates and revokes it. Each view is photographed into screenshots/ (gitignored).
const CHROMIUM = process.env.TURNPIKE_CHROMIUM || "/usr/bin/chromium";
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const SHOTS = join(import.meta.dir, "screenshots");
const STEP_MS = 60_000;

// Without the browser the steps are reported skipped, by name, never passed.
const step = existsSync(CHROMIUM) ? test : test.skip;

let h: Harness;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let created: { id: string; secret: string };
let rotatedSecret: string;
let requestId: string;

const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const view = (name: string) =>
  page.getByRole("navigation", { name: "Views" }).getByRole("button", { name, exact: true }).click();
const keyRow = () => page.locator(`tr[data-key-id="${created.id}"]`);
const callModels = (secret: string) => fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  ensureDashboardBuilt();
  mkdirSync(SHOTS, { recursive: true });
  h = await startHarness();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: h.url });
  page = await context.newPage();
}, STEP_MS);
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe("dashboard in headless Chromium", () => {
  step(
    "signs in with the admin key only, kept in session storage",
    async () => {
      await page.goto(`${h.url}/dashboard`);
      await page.getByLabel("Admin key").fill("sk-admin-not-the-right-one-0123456789abcdef");
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect(page.getByRole("alert").textContent()).resolves.toBe("That is not the admin key.");
      await shot("sign-in");
      await page.getByLabel("Admin key").fill(ADMIN_KEY);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "New key" }).waitFor();
      const stored = await page.evaluate(() => ({
        session: sessionStorage.getItem("turnpike.adminKey"),
        local: localStorage.length,
        cookie: document.cookie,
      }));
      expect(stored).toEqual({ session: ADMIN_KEY, local: 0, cookie: "" });
    },
    STEP_MS,
  );

  step(
    "creates a key with models and limits; its secret is shown once, copied, then gone",
    async () => {
      const form = page.getByRole("form", { name: "Create a key" });
      await form.getByLabel("Name").fill("e2e-key");
      await form.getByLabel("Models").fill("delta-m3, beta-*");
      await form.getByLabel("Requests / min").fill("120");
      await form.getByLabel("Monthly budget ($)").fill("5");
      await form.getByRole("button", { name: "Create key" }).click();
      const secret = (await page.getByTestId("secret").textContent()) ?? "";
      expect(secret).toMatch(/^sk-tp-/);
      await page.getByRole("button", { name: "Copy" }).click();
      await page.getByRole("button", { name: "Copied" }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
      await shot("keys-secret");
      // The admin API agrees: the key exists with these limits, and never lists the secret.
      const listed = (await (
        await fetch(`${h.url}/admin/keys`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
      ).json()) as any;
      const k = listed.data.find((x: any) => x.name === "e2e-key");
      expect({ models: k.models, rpm: k.rpm, tpm: k.tpm, budget_usd: k.budget_usd }).toEqual({
        models: ["delta-m3", "beta-*"],
        rpm: 120,
        tpm: null,
        budget_usd: 5,
      });
      expect(JSON.stringify(listed)).not.toContain(secret);
      created = { id: k.id, secret };
      await page.getByRole("button", { name: "Done" }).click();
      expect(await page.content()).not.toContain(secret);
      await expect(keyRow().locator('td[data-label="Models"]').textContent()).resolves.toBe("delta-m3, beta-*");
      await expect(keyRow().locator('td[data-label="Limits"]').textContent()).resolves.toBe("120 rpm, $5.00/mo");
    },
    STEP_MS,
  );

  step(
    "edits the key's limits in place",
    async () => {
      await keyRow().getByRole("button", { name: "Edit limits" }).click();
      const form = page.getByRole("form", { name: "Edit limits of e2e-key" });
      await form.getByLabel("Tokens / min").fill("50000");
      await form.getByRole("button", { name: "Save limits" }).click();
      await keyRow().locator('td[data-label="Limits"]', { hasText: "50,000 tpm" }).waitFor();
      const k = (await (
        await fetch(`${h.url}/admin/keys/${created.id}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
      ).json()) as any;
      expect(k.tpm).toBe(50000);
      expect(k.rpm).toBe(120);
      await shot("keys");
    },
    STEP_MS,
  );

  step(
    "a request made with the key appears in the live log, newest first, without its prompt",
    async () => {
      const res = await fetch(`${h.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${created.secret}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "delta-m3",
          messages: [{ role: "user", content: 'private words [sim text="a private reply"]' }],
        }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      requestId = res.headers.get("x-request-id")!;
      await view("Live log");
      const row = page.locator(`tr[data-request-id="${requestId}"]`);
      await row.waitFor({ timeout: 20_000 });
      const first = page.getByRole("table", { name: "Requests" }).locator("tbody tr").first();
      expect(await first.getAttribute("data-request-id")).toBe(requestId);
      const cells = await row.locator("td").allTextContents();
      expect(cells.slice(1, 5)).toEqual(["e2e-key", "delta-m3", "chat", "200"]);
      expect(cells[6]).toBe(`${body.usage.prompt_tokens} / ${body.usage.completion_tokens}`);
      const text = await page.content();
      expect(text).not.toContain("private words");
      expect(text).not.toContain("a private reply");
      // A refused request (a model the key may not use) is there too, with the reason its client got.
      const refused = await fetch(`${h.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${created.secret}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] }),
      });
      expect(refused.status).toBe(404);
      const reason = ((await refused.json()) as { error: { message: string } }).error.message;
      const refusedRow = page.locator(`tr[data-request-id="${refused.headers.get("x-request-id")}"]`);
      await refusedRow.waitFor({ timeout: 20_000 });
      const refusedCells = await refusedRow.locator("td").allTextContents();
      expect(refusedCells.slice(1, 5)).toEqual(["e2e-key", "—", "chat", "404"]);
      expect(refusedCells[8]).toContain(`Refused: ${reason}`);
      await shot("live-log");
    },
    STEP_MS,
  );

  step(
    "the usage charts draw the request, by model and by key",
    async () => {
      // A second model, so that the charts have two series to tell apart.
      const second = await fetch(`${h.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${created.secret}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "beta-5.5", messages: [{ role: "user", content: "hello" }] }),
      });
      expect(second.status).toBe(200);
      await view("Usage");
      const totals = page.getByRole("table", { name: "Usage totals" });
      const row = totals.locator("tbody tr", { hasText: "delta-m3" });
      await row.waitFor();
      await totals.locator("tbody tr", { hasText: "beta-5.5" }).waitFor();
      expect((await row.locator("td").allTextContents()).slice(0, 2)).toEqual(["delta-m3", "1"]);
      // The headline totals: the two metered requests of this period, none in the one before.
      const daily = (await (
        await fetch(`${h.url}/admin/usage/daily`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
      ).json()) as any;
      const spend = daily.series.reduce(
        (a: number, x: any) => a + x.cost_usd.reduce((p: number, q: number) => p + q, 0),
        0,
      );
      const tokens = daily.series.reduce(
        (a: number, x: any) => a + x.tokens.reduce((p: number, q: number) => p + q, 0),
        0,
      );
      expect(await page.getByTestId("total-requests").textContent()).toBe("2");
      expect(await page.getByTestId("total-tokens").textContent()).toBe(tokens.toLocaleString("en-US"));
      expect(await page.getByTestId("total-spend").textContent()).toBe(`$${String(Number(spend.toPrecision(3)))}`);
      expect(await page.getByTestId("total-error-rate").textContent()).toBe("0.0%");
      expect(await page.getByRole("region", { name: "Requests", exact: true }).textContent()).toContain(
        "new vs the 14 days before",
      );
      const requests = page.getByRole("img", { name: /^Requests per day:/ });
      expect(await requests.getAttribute("aria-label")).toMatch(
        /^Requests per day: (delta-m3 1, beta-5\.5 1|beta-5\.5 1, delta-m3 1)$/,
      );
      // Every chart gives each series its own colour.
      for (const chart of await page.locator("canvas[data-colors]").all()) {
        const colors = ((await chart.getAttribute("data-colors")) ?? "").split(" ");
        expect(colors.length).toBe(2);
        expect(new Set(colors).size).toBe(colors.length);
      }
      // Chart.js drew the bar: the canvas holds pixels of the first series' colour (#2563eb).
      const drawn = await requests.evaluate((c) => {
        const canvas = c as HTMLCanvasElement;
        const px = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height).data;
        let n = 0;
        for (let i = 0; i < px.length; i += 4) if (px[i] === 37 && px[i + 1] === 99 && px[i + 2] === 235) n++;
        return n;
      });
      expect(drawn).toBeGreaterThan(50);
      await shot("usage");
      await page.getByLabel("By").selectOption("key");
      await page.getByRole("img", { name: "Requests per day: e2e-key 2", exact: true }).waitFor();
    },
    STEP_MS,
  );

  step(
    "the model catalog lists every model with its prices",
    async () => {
      await view("Models");
      const row = page.getByRole("table", { name: "Models" }).locator("tbody tr", { hasText: "delta-m3" });
      await row.waitFor();
      expect((await row.locator("td").allTextContents()).slice(2, 4)).toEqual(["$0.3", "$1.2"]);
      const catalog = (await (
        await fetch(`${h.url}/admin/models`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
      ).json()) as any;
      expect(await page.getByRole("table", { name: "Models" }).locator("tbody tr").count()).toBe(catalog.data.length);
      await shot("models");
    },
    STEP_MS,
  );

  step(
    "deployment health lists every deployment with its breaker, as the admin API reports it",
    async () => {
      const res = await fetch(`${h.url}/admin/deployments`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      expect(res.status).toBe(200);
      const { data } = (await res.json()) as {
        data: { model: string; deployment: string; state: string; failures: number; latency_ms: number }[];
      };
      // One deployment per catalog model where the config gives none, each closed.
      expect(data.length).toBeGreaterThanOrEqual(10);
      await view("Health");
      const rows = page.getByRole("table", { name: "Deployments" }).locator("tbody tr");
      await rows.first().waitFor();
      expect(await rows.count()).toBe(data.length);
      const d = data[0]!;
      expect(d.state).toBe("closed");
      expect(await rows.nth(0).locator("td").allTextContents()).toEqual([
        d.model,
        d.deployment,
        "healthy",
        "Healthy: serving requests.",
        String(d.failures),
        "none",
        `${Math.round(d.latency_ms)} ms`,
      ]);
      await shot("health");
    },
    STEP_MS,
  );

  step(
    "rotates the key with a grace period: both secrets work, the new one shown once",
    async () => {
      await view("Keys");
      await keyRow().getByRole("button", { name: "Rotate" }).click();
      const form = page.getByRole("form", { name: "Rotate e2e-key" });
      await form.getByLabel(/keeps working for/).fill("600");
      await form.getByRole("button", { name: "Rotate now" }).click();
      rotatedSecret = (await page.getByTestId("secret").textContent()) ?? "";
      expect(rotatedSecret).toMatch(/^sk-tp-/);
      expect(rotatedSecret).not.toBe(created.secret);
      await keyRow().locator(".badge", { hasText: "rotating" }).waitFor();
      expect((await callModels(rotatedSecret)).status).toBe(200);
      expect((await callModels(created.secret)).status).toBe(200);
      await page.getByRole("button", { name: "Done" }).click();
    },
    STEP_MS,
  );

  step(
    "revokes the key: refused at once, shown as revoked",
    async () => {
      await keyRow().getByRole("button", { name: "Revoke" }).click();
      await page.getByRole("button", { name: "Confirm revoke" }).click();
      await keyRow().locator(".badge", { hasText: "revoked" }).waitFor();
      expect((await callModels(rotatedSecret)).status).toBe(401);
      expect((await callModels(created.secret)).status).toBe(401);
      expect(await keyRow().getByRole("button", { name: "Rotate" }).count()).toBe(0);
    },
    STEP_MS,
  );

  /**
   * At a width: no view is wider than the screen, no table scrolls sideways inside its card, and
   * the harness key's Revoke button is on screen.
   */
  async function fits(width: number, height: number, label: string) {
    await page.setViewportSize({ width, height });
    for (const name of ["Keys", "Usage", "Live log", "Health"]) {
      await view(name);
      await page.locator("main table").first().waitFor();
      // Layout settles within a frame or two of the resize; the check waits for it, bounded.
      await page
        .waitForFunction(() => document.documentElement.scrollWidth <= window.innerWidth, null, { timeout: 5000 })
        .catch(() => undefined);
      const widths = await page.evaluate(() => ({
        page: document.documentElement.scrollWidth - window.innerWidth,
        tables: [...document.querySelectorAll<HTMLElement>(".scroll")].map((e) => e.scrollWidth - e.clientWidth),
      }));
      // Named by view, so that a failure says where.
      expect({ view: name, page: Math.max(widths.page, 0), tables: widths.tables.filter((w) => w > 0) }).toEqual({
        view: name,
        page: 0,
        tables: [],
      });
      await shot(`${label}-${name.toLowerCase().replace(" ", "-")}`);
    }
    await view("Keys");
    const revoke = page.locator(`tr[data-key-id="${h.keyId}"]`).getByRole("button", { name: "Revoke" });
    expect(await revoke.isVisible()).toBe(true);
    const box = await revoke.boundingBox();
    expect(box).not.toBeNull();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(width);
  }

  step(
    "fits a 1366 px laptop screen: every table in its card, Revoke in view",
    () => fits(1366, 768, "laptop"),
    STEP_MS,
  );

  step(
    "fits a phone's screen: nothing wider than the viewport",
    async () => {
      await fits(390, 844, "phone");
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByLabel("Admin key").waitFor();
      expect(await page.evaluate(() => sessionStorage.getItem("turnpike.adminKey"))).toBeNull();
    },
    STEP_MS,
  );
});
