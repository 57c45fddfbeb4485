import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dashboardModule } from "../support/modules";

// The dashboard's files as the gateway serves them, from a build folder made by the test.
let dir: string;
let outside: string;
beforeAll(() => {
  const base = mkdtempSync(join(tmpdir(), "turnpike-dashboard-"));
  dir = join(base, "dist");
  mkdirSync(join(dir, "assets"), { recursive: true });
  writeFileSync(join(dir, "index.html"), "<!doctype html><title>Turnpike dashboard</title>");
  writeFileSync(join(dir, "assets", "index-abc123.js"), "console.log('dashboard')");
  writeFileSync(join(dir, "favicon.svg"), "<svg xmlns='http://www.w3.org/2000/svg'/>");
  outside = join(base, "secret.txt");
  writeFileSync(outside, "not for the browser");
});
afterAll(() => rmSync(join(dir, ".."), { recursive: true, force: true }));

const get = (path: string, root = dir) => dashboardModule(root).handle(new Request(`http://localhost${path}`));

describe("GET /dashboard", () => {
  test("the page, revalidated on each load, never framed, talking only to its own origin", async () => {
    for (const path of ["/dashboard", "/dashboard/"]) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(await res.text()).toContain("<title>Turnpike dashboard</title>");
    }
  });

  test("hashed assets are cached for good, other files revalidated", async () => {
    const js = await get("/dashboard/assets/index-abc123.js");
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toContain("javascript");
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await js.text()).toBe("console.log('dashboard')");
    const svg = await get("/dashboard/favicon.svg");
    expect(svg.headers.get("content-type")).toContain("image/svg+xml");
    expect(svg.headers.get("cache-control")).toBe("no-cache");
  });

  test("nothing outside the build folder, no folders, no malformed paths", async () => {
    for (const path of [
      "/dashboard/../secret.txt",
      "/dashboard/%2e%2e/secret.txt",
      "/dashboard/..%2fsecret.txt",
      "/dashboard/assets",
      "/dashboard/%E0%A4%A",
      "/dashboard/missing.js",
    ]) {
      const res = await get(path);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain("not for the browser");
    }
  });

  test("without a build: a 503 page that says how to build it", async () => {
    const res = await get("/dashboard", join(dir, "nowhere"));
    expect(res.status).toBe(503);
    expect(await res.text()).toContain("bun run --cwd apps/dashboard build");
  });
});
