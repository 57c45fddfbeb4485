/**
 * The runtime settings Turnpike is started with (decisions/0022-allocator-purge-delay.md): the
 * runtime must read them, and the start command and the image must give them, the start command
 * keeping a value the operator set.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../../../..");
const startScript = (
  JSON.parse(readFileSync(join(ROOT, "apps/gateway/package.json"), "utf8")) as { scripts: { start: string } }
).scripts.start;

/** The environment assignments the start command puts before `bun … src/main.ts`. */
function startAssignments(): string {
  const last = startScript.split("&&").at(-1)!.trim();
  const at = last.indexOf(" bun ");
  expect(at).toBeGreaterThan(0);
  return last.slice(0, at);
}

function printenvAfterStart(name: string, env: Record<string, string>): string {
  const r = Bun.spawnSync(["sh", "-c", `${startAssignments()} printenv ${name}`], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
  });
  return r.stdout.toString().trim();
}

test("the runtime reads the allocator's purge delay from the environment", () => {
  const r = Bun.spawnSync([process.execPath, "-e", ""], {
    env: { ...process.env, MIMALLOC_VERBOSE: "1", MIMALLOC_PURGE_DELAY: "1000" },
    stderr: "pipe",
  });
  expect(r.stderr.toString()).toMatch(/option 'purge_delay': 1000\b/);
});

test("the start command sets a purge delay of 1000 ms, keeping one the operator set", () => {
  expect(printenvAfterStart("MIMALLOC_PURGE_DELAY", {})).toBe("1000");
  expect(printenvAfterStart("MIMALLOC_PURGE_DELAY", { MIMALLOC_PURGE_DELAY: "250" })).toBe("250");
  expect(printenvAfterStart("BUN_CONFIG_MAX_HTTP_REQUESTS", {})).toBe("4096");
});

test("the image's runtime stage sets the same", () => {
  const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
  const runtime = dockerfile.slice(dockerfile.lastIndexOf("FROM "));
  expect(runtime).toMatch(/^\s+MIMALLOC_PURGE_DELAY=1000$/m);
  expect(runtime).toMatch(/^\s+BUN_CONFIG_MAX_HTTP_REQUESTS=4096/m);
});
