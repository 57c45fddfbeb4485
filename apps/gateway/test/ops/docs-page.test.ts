/**
 * `GET /docs` in Debian's headless Chromium (scripts/debian-tools.ts installs it when missing): the
 * API reference renders the document's operations, with their Markdown rendered, and every
 * request the page makes stays on the gateway (no CDN, no fonts, no telemetry from elsewhere).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import { startHarness, type Harness } from "../harness";

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
const STEP_MS = 90_000;

// Without the browser the check is reported skipped, by name, never passed.
const step = existsSync(CHROMIUM) ? test : test.skip;

let h: Harness;
let browser: Browser;
let page: Page;
/** Every request the page made, and those whose host is not the gateway's. */
const requested: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  h = await startHarness();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  page = await (await browser.newContext({ viewport: { width: 1366, height: 900 } })).newPage();
  page.on("request", (r) => {
    requested.push(r.url());
  });
}, STEP_MS);
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe("GET /docs in headless Chromium", () => {
  step(
    "renders every tag and operations by name, Markdown rendered, with no request leaving the gateway",
    async () => {
      await page.goto(`${h.url}/docs`);
      const doc = (await (await fetch(`${h.url}/openapi.json`)).json()) as {
        tags: { name: string }[];
        paths: Record<string, Record<string, { summary: string; tags: string[] }>>;
      }; // the parts of the document read here
      const operations = Object.values(doc.paths).flatMap((item) => Object.values(item));
      expect(operations.length).toBeGreaterThan(30);
      // The first tag opens by itself; each other one is opened in the sidebar, and each of its
      // operations is then listed there by its summary.
      const sidebar = page.getByRole("complementary", { name: "Sidebar for Turnpike" });
      await sidebar
        .getByText(doc.paths["/v1/chat/completions"]!.post!.summary, { exact: true })
        .first()
        .waitFor({ timeout: 60_000 });
      for (const tag of doc.tags.slice(1)) {
        await sidebar.getByText(tag.name, { exact: true }).first().click();
        for (const op of operations.filter((o) => o.tags[0] === tag.name))
          await sidebar.getByText(op.summary, { exact: true }).first().waitFor({ timeout: 10_000 });
      }
      // The info description's Markdown (`x-request-id` in backquotes) is rendered as code, not shown raw.
      await page.locator("code", { hasText: "x-request-id" }).first().waitFor({ timeout: 10_000 });
      expect(await page.getByText("`x-request-id`").count()).toBe(0);
      const origin = new URL(h.url).origin;
      const elsewhere = requested.filter(
        (u) => !u.startsWith(origin) && !u.startsWith("data:") && !u.startsWith("blob:"),
      );
      expect(elsewhere).toEqual([]);
      expect(requested).toContain(`${origin}/openapi.json`);
      expect(requested).toContain(`${origin}/docs/api-reference.js`);
    },
    STEP_MS,
  );
});
