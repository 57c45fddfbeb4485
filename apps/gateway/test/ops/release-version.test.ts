/**
 * One version, everywhere it shows: the gateway package's version has its CHANGELOG entry,
 * changesets version the (private) gateway, and the image is labelled with it — its build refusing
 * a label that is not the package's.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import gatewayPackage from "../../package.json" with { type: "json" };
import { VERSION } from "../../src/vocabulary/version";

const ROOT = join(import.meta.dir, "../../../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

test("the version is the package's, a release with its CHANGELOG entry", () => {
  expect(VERSION).toBe(gatewayPackage.version);
  expect(VERSION).toMatch(/^\d+\.\d+\.\d+$/);
  expect(VERSION).not.toBe("0.0.0");
  const entry = read("apps/gateway/CHANGELOG.md")
    .split(/^## /m)
    .find((s) => s.startsWith(`${VERSION}\n`));
  expect(entry).toBeDefined();
});

test("changesets version the private gateway package and tag its releases", () => {
  const config = JSON.parse(read(".changeset/config.json")) as { privatePackages: { version: boolean; tag: boolean } };
  expect(config.privatePackages).toEqual({ version: true, tag: true });
});

test("the image's label is its build argument, and the build refuses one that is not the package's version", () => {
  const dockerfile = read("Dockerfile");
  const runtime = dockerfile.slice(dockerfile.lastIndexOf("FROM "));
  expect(runtime).toMatch(/^ARG TURNPIKE_VERSION=""$/m);
  expect(runtime).toMatch(/org\.opencontainers\.image\.version="\$\{TURNPIKE_VERSION\}"/);
  // The build stage's guard, run here as Docker would run it (sh, from the build context's root).
  const guard = dockerfile.match(/^RUN (test -z "\$TURNPIKE_VERSION"[\s\S]*?exit 1\))$/m)?.[1]?.replace(/\\\n/g, "");
  expect(guard).toBeDefined();
  const run = (version: string) =>
    Bun.spawnSync(["sh", "-c", guard!], { cwd: ROOT, env: { ...process.env, TURNPIKE_VERSION: version } });
  expect(run(VERSION).exitCode).toBe(0);
  expect(run("").exitCode).toBe(0);
  const wrong = run("9.9.9");
  expect(wrong.exitCode).toBe(1);
  expect(wrong.stderr.toString()).toContain("TURNPIKE_VERSION=9.9.9 is not apps/gateway/package.json's version");
});
