/**
 * The image, built for real where a Docker engine answers (`docker info`): it builds from a
 * fresh checkout's files, carries the release's version label, and the gateway in it answers
 * `/health` with that version. Where no engine runs (a machine with only the client, as this
 * project's CI), the test is reported skipped by name, never passed.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "../..");
const version = (JSON.parse(readFileSync(join(root, "apps/gateway/package.json"), "utf8")) as { version: string })
  .version;
const engine = (() => {
  try {
    return Bun.spawnSync(["docker", "info"], { stdout: "ignore", stderr: "ignore", timeout: 10_000 }).exitCode === 0;
  } catch {
    return false;
  }
})();

(engine ? test : test.skip)(
  "docker build: the image carries the version label and its gateway answers /health with that version",
  async () => {
    const tag = `turnpike-test:${version}`;
    const build = Bun.spawnSync(["docker", "build", "-t", tag, "--build-arg", `TURNPIKE_VERSION=${version}`, "."], {
      cwd: root,
      stdout: "pipe",
      stderr: "pipe",
    });
    expect({ code: build.exitCode, err: build.exitCode ? build.stderr.toString().slice(-2000) : "" }).toEqual({
      code: 0,
      err: "",
    });
    const label = Bun.spawnSync([
      "docker",
      "inspect",
      "-f",
      '{{ index .Config.Labels "org.opencontainers.image.version" }}',
      tag,
    ]);
    expect(label.stdout.toString().trim()).toBe(version);
    const run = Bun.spawnSync([
      "docker",
      "run",
      "-d",
      "-p",
      "127.0.0.1::8080",
      "-e",
      "TURNPIKE_ADMIN_KEY=sk-admin-image-test-0123456789abcdef",
      tag,
    ]);
    const id = run.stdout.toString().trim();
    try {
      const port = Bun.spawnSync(["docker", "port", id, "8080"]).stdout.toString().trim().split(":").pop();
      let health: { version?: string } = {};
      for (let i = 0; i < 60 && health.version === undefined; i++) {
        await Bun.sleep(500);
        health = await fetch(`http://127.0.0.1:${port}/health`)
          .then((r) => r.json() as Promise<{ version?: string }>)
          .catch(() => ({}));
      }
      expect(health.version).toBe(version);
    } finally {
      Bun.spawnSync(["docker", "rm", "-f", id]);
    }
  },
  900_000,
);
