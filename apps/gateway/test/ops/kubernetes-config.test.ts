/**
 * The config file the Kubernetes base mounts (deploy/kubernetes/base/configmap.yaml,
 * `turnpike-config`): the gateway loads it as it is, and the catalog it gives is the built-in one.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config/config";

const FILE = join(import.meta.dir, "../../../../deploy/kubernetes/base/configmap.yaml");

test("the Kubernetes base's config file loads, and changes nothing", () => {
  const docs = readFileSync(FILE, "utf8")
    .split(/^---$/m)
    .map((d) => Bun.YAML.parse(d) as { kind: string; metadata: { name: string }; data: Record<string, string> });
  const cm = docs.find((d) => d.kind === "ConfigMap" && d.metadata.name === "turnpike-config");
  const text = cm?.data["turnpike.yaml"];
  expect(text).toBeString();
  const dir = mkdtempSync(join(tmpdir(), "turnpike-k8s-config-"));
  try {
    writeFileSync(join(dir, "turnpike.yaml"), text!);
    const base = { TURNPIKE_ADMIN_KEY: "sk-admin-test-0123456789abcdefghijklmnop", TURNPIKE_DB: ":memory:" };
    const withFile = loadConfig({ ...base, TURNPIKE_CONFIG: join(dir, "turnpike.yaml") });
    const without = loadConfig(base);
    expect(withFile.configFile).toBe(join(dir, "turnpike.yaml"));
    expect(withFile.models).toEqual(without.models);
    expect(withFile.vendors).toEqual(without.vendors);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
