import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SIDEBAR } from "../.vitepress/config";

const site = join(import.meta.dir, "..");
const page = (link: string) => join(site, `${link.replace(/^\//, "")}.md`);

describe("the docs site", () => {
  test("every sidebar entry is a page, and every page is in the sidebar", () => {
    const links = SIDEBAR.flatMap((g) => g.items.map((i) => i.link));
    expect(links.filter((l) => !existsSync(page(l)))).toEqual([]);
    const pages = ["guide", "operations", "reference"].flatMap((d) =>
      readdirSync(join(site, d)).map((f) => `/${d}/${f.replace(/\.md$/, "")}`),
    );
    expect(pages.filter((p) => !links.includes(p))).toEqual([]);
  });

  test("the guides a newcomer needs are there", () => {
    for (const l of [
      "/guide/vendors",
      "/guide/real-vendor-key",
      "/guide/teams-sign-on",
      "/guide/mcp",
      "/guide/batches",
      "/operations/kubernetes",
      "/operations/upgrading",
      "/operations/backup-restore",
      "/operations/admin-key-rotation",
      "/operations/monitoring",
      "/operations/troubleshooting",
    ])
      expect(existsSync(page(l))).toBe(true);
  });

  // VitePress fails the build on a link to a page that does not exist (its dead-link check is on).
  test("builds, with no dead link", () => {
    const out = mkdtempSync(join(tmpdir(), "turnpike-site-"));
    try {
      const build = Bun.spawnSync(["bun", "x", "vitepress", "build", ".", "--outDir", out], {
        cwd: site,
        env: { ...process.env, NO_COLOR: "1" },
      });
      const log = build.stdout.toString() + build.stderr.toString();
      expect({ code: build.exitCode, deadLinks: log.match(/Found dead link .*/g) ?? [] }).toEqual({
        code: 0,
        deadLinks: [],
      });
      expect(existsSync(join(out, "guide", "vendors.html"))).toBe(true);
      expect(existsSync(join(out, "operations", "upgrading.html"))).toBe(true);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 180_000);
});
