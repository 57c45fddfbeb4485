/**
 * The docs' command blocks that are meant to run (a fence opened with ```` ```sh run ````, in
 * README.md and the site's pages under site/) are run here, each in bash against a gateway started
 * as the start command starts it (simulator, a fresh store): `localhost:8080` is the gateway's
 * address, `$TURNPIKE_KEY` / `$TURNPIKE_API_KEY` its first key and `$TURNPIKE_ADMIN_KEY` the admin
 * key. `curl` fails on an HTTP error status (`--fail-with-body`), and a block fails at its first
 * failing command, so a command the docs show that no longer works fails the test by its page.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ADMIN_KEY } from "../harness";
import { type Spawned, spawnGateway } from "../spawned";

const root = join(import.meta.dir, "../../../..");

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name.startsWith(".") || e.name === "node_modules" || e.name === "public") return [];
    const p = join(dir, e.name);
    return e.isDirectory() ? markdownFiles(p) : e.name.endsWith(".md") ? [p] : [];
  });
}

/** Each runnable block: where it is, and its text. */
export function runnableBlocks(file: string): { where: string; text: string }[] {
  const lines = readFileSync(file, "utf8").split("\n");
  const blocks: { where: string; text: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```sh run\s*$/.test(lines[i]!)) continue;
    const start = i;
    const body: string[] = [];
    while (++i < lines.length && !/^```\s*$/.test(lines[i]!)) body.push(lines[i]!);
    blocks.push({ where: `${relative(root, file)}:${start + 1}`, text: body.join("\n") });
  }
  return blocks;
}

const files = [join(root, "README.md"), ...markdownFiles(join(root, "site"))];
const blocks = files.flatMap(runnableBlocks);

let gw: Spawned;
beforeAll(async () => {
  gw = await spawnGateway();
}, 60_000);
afterAll(async () => {
  await gw?.stop();
});

describe("the docs' runnable command blocks", () => {
  test("the docs hold runnable blocks (the getting-started calls at least)", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    expect(blocks.some((b) => b.where.startsWith("site/guide/getting-started.md"))).toBe(true);
  });

  for (const block of blocks) {
    test(`${block.where} runs`, () => {
      const hostPort = new URL(gw.url).host;
      const script = [
        "set -eo pipefail",
        'curl() { command curl --fail-with-body --max-time 60 "$@"; }',
        block.text.replaceAll("localhost:8080", hostPort),
      ].join("\n");
      const run = Bun.spawnSync(["bash", "-c", script], {
        env: { ...process.env, TURNPIKE_KEY: gw.key, TURNPIKE_API_KEY: gw.key, TURNPIKE_ADMIN_KEY: ADMIN_KEY },
        timeout: 120_000,
      });
      const out = run.stdout.toString() + run.stderr.toString();
      expect({ where: block.where, code: run.exitCode, out: run.exitCode === 0 ? "" : out }).toEqual({
        where: block.where,
        code: 0,
        out: "",
      });
    }, 150_000);
  }
});
