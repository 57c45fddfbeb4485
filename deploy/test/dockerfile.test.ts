/**
 * The Dockerfile's base images: each stage that starts from an outside image names it by its
 * tag and a digest argument, and a digest given there is a well-formed `@sha256:` one. (The
 * digests themselves are left to be filled in where Docker Hub can be reached: site/operations/kubernetes.md "Kubernetes".)
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const dockerfile = readFileSync(join(import.meta.dir, "../../Dockerfile"), "utf8");
const args = Object.fromEntries([...dockerfile.matchAll(/^ARG (\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!.trim()]));
const froms = [...dockerfile.matchAll(/^FROM (\S+) AS (\w+)$/gm)].map((m) => ({ image: m[1]!, stage: m[2]! }));

test("every outside base image is named by tag and a digest argument", () => {
  const stages = new Set(froms.map((f) => f.stage));
  const outside = froms.filter((f) => !stages.has(f.image));
  expect(outside.map((f) => f.stage)).toEqual(["build", "runtime"]);
  for (const f of outside) {
    const m = /^oven\/bun:\$\{BUN_VERSION\}(?:-slim)?\$\{(\w+)\}$/.exec(f.image);
    expect(m).not.toBeNull();
    expect(Object.keys(args)).toContain(m![1]!);
  }
});

test("a digest, where one is given, is @sha256: and 64 hex digits", () => {
  for (const name of ["BUN_DIGEST", "BUN_SLIM_DIGEST"]) expect(args[name] ?? "").toMatch(/^(?:@sha256:[0-9a-f]{64})?$/);
});
