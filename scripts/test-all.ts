/**
 * The test command: type-checks every workspace, then runs each workspace's `bun test` in turn
 * (integration tests start real servers; two cores run them best one suite at a time) and ends
 * with one line `tests: N passed, N failed, N skipped` that sums them all. A skipped test (the
 * scale-out tests skip when PostgreSQL or Redis cannot be reached, see site/operations/scale-out.md "Running several
 * instances"; the dashboard's browser test when Chromium cannot be had) is never counted as
 * passed: each is named before the summary.
 */
import { readdirSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ensureChromium, ensurePrometheus } from "./debian-tools";
import { run, step } from "./progress";
import { ensureServices } from "./services";

const root = join(import.meta.dir, "..");
const workspaces = ["packages", "apps"]
  .flatMap((dir) => readdirSync(join(root, dir)).map((d) => join(dir, d)))
  .concat(["bench", "deploy", "site"])
  .filter((w) => existsSync(join(root, w, "package.json")));

/**
 * Each test's and hook's bound, unless it sets its own: Bun's default of 5 s is met by a hook that
 * starts a gateway process or a database on a loaded two-core machine (CI is one). A bound, not a
 * wait: a test that passes takes no longer for it.
 */
const TEST_TIMEOUT_MS = 60_000;

const runStarted = Date.now();
let passed = 0;
let failed = 0;
const failures: string[] = [];
const skipped: string[] = [];

const only = process.argv.slice(2);

// The scale-out tests need PostgreSQL and Redis: found, or started when installed here.
await step("finding (or starting) PostgreSQL and Redis", () => ensureServices((l) => console.log(`  ${l}`)));
// The browser tests drive a headless Chromium, the metrics tests Prometheus: found, or installed
// when possible (an install takes about a minute; apt-get holds a lock, so one after the other).
await step("finding (or installing) Chromium and Prometheus", async () => {
  await ensureChromium((l) => console.log(`  ${l}`));
  await ensurePrometheus((l) => console.log(`  ${l}`));
});

// The linter over the whole tree (biome.json at the root), once.
if (!only.length) {
  // Biome lints and checks the formatting (biome.json: line width 120) in one pass.
  const lint = await run("lint and format", ["bun", "x", "biome", "ci", "."], root);
  if (lint.code !== 0) {
    failed++;
    failures.push("lint");
    console.log(`✗ lint\n${lint.out}`);
  } else {
    passed++;
    console.log(`✓ lint (${lint.seconds.toFixed(1)} s)`);
  }
  // The gateway's import graph: no cycle, no folder loop, no folder import up a tier (docs/design.md, "Tiers of folders").
  const imports = await run("import check", ["bun", "scripts/check-imports.ts"], root);
  if (imports.code !== 0) {
    failed++;
    failures.push("import check");
    console.log(`✗ import check\n${imports.out}`);
  } else {
    passed++;
    console.log(`✓ ${imports.out.trim()} (${imports.seconds.toFixed(1)} s)`);
  }
}
for (const w of workspaces) {
  if (only.length && !only.some((o) => w.includes(o))) continue;
  const pkg = JSON.parse(readFileSync(join(root, w, "package.json"), "utf8")) as { scripts?: Record<string, string> };
  const cwd = join(root, w);
  if (pkg.scripts?.typecheck) {
    const t = await run(`${w}: typecheck`, ["bun", "run", "typecheck"], cwd);
    if (t.code !== 0) {
      failed++;
      failures.push(`${w}: typecheck`);
      console.log(`✗ ${w} typecheck\n${t.out}`);
    } else {
      passed++;
      console.log(`✓ ${w} typecheck (${t.seconds.toFixed(1)} s)`);
    }
  }
  if (!pkg.scripts?.test) continue;
  const t = await run(`${w}: tests`, ["bun", "test", "--timeout", String(TEST_TIMEOUT_MS)], cwd);
  const p = Number(/^\s*(\d+) pass$/m.exec(t.out)?.[1] ?? 0);
  const f = Number(/^\s*(\d+) fail$/m.exec(t.out)?.[1] ?? 0);
  // Bun prints `(skip) <describe> > <test>` for each (again in its closing summary); its hooks
  // show up as "(unnamed)".
  const skips = [...new Set([...t.out.matchAll(/^\(skip\) (.+)$/gm)].map((m) => m[1]!.trim()))].filter(
    (n) => !n.endsWith("(unnamed)"),
  );
  for (const n of skips) skipped.push(`${w}: ${n}`);
  passed += p;
  failed += f;
  if (t.code !== 0 && f === 0) {
    failed++;
    failures.push(`${w}: bun test exited ${t.code}`);
  }
  if (f > 0) failures.push(`${w}: ${f} failing`);
  const mark = t.code === 0 ? "✓" : "✗";
  console.log(
    `${mark} ${w}: ${p} passed, ${f} failed${skips.length ? `, ${skips.length} skipped` : ""} (${t.seconds.toFixed(1)} s)`,
  );
  if (t.code !== 0 || process.env.VERBOSE) console.log(t.out);
}

if (failures.length) console.log(`\nfailures:\n  ${failures.join("\n  ")}`);
if (skipped.length)
  console.log(`\nskipped (a server or browser they need was not available):\n  ${skipped.join("\n  ")}`);
console.log(
  `\ntests: ${passed} passed, ${failed} failed, ${skipped.length} skipped (${((Date.now() - runStarted) / 1000).toFixed(0)} s in all)`,
);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
