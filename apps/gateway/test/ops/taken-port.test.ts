import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN_KEY, type Instance, removeDir, startInstance } from "../scaleout/cluster";

// Issue 41, item 10: a second gateway started on the port of a first one listened beside it
// (SO_REUSEPORT, which Elysia asks Bun for by default) and took part of its traffic, answering
// with its own keys. It now refuses to start — one fatal line, exit 1 — unless every gateway on
// the port asks to share it (TURNPIKE_SHARE_PORT=on).

const MAIN = join(import.meta.dir, "../../src/main.ts");
const dirs: string[] = [];
const instances: Instance[] = [];
afterAll(async () => {
  for (const i of instances) await i.stop();
  for (const d of dirs) removeDir(d);
});

/** A gateway started on `port`: its exit code and standard error once it exits by itself (within 60 s), or "running". */
async function secondStart(
  port: number,
  env: Record<string, string> = {},
): Promise<{ code: number | "running"; err: string }> {
  const dir = mkdtempSync(join(tmpdir(), "turnpike-port-"));
  dirs.push(dir);
  const proc = Bun.spawn(["bun", MAIN], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      TURNPIKE_ADMIN_KEY: ADMIN_KEY,
      TURNPIKE_DB: join(dir, "second.db"),
      TURNPIKE_JOURNAL_DIR: dir,
      ...env,
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const err = new Response(proc.stderr).text();
  const out = new Response(proc.stdout).text();
  const code = await Promise.race([proc.exited, Bun.sleep(60_000).then(() => "running" as const)]);
  if (code === "running") {
    proc.kill("SIGKILL");
    await proc.exited;
  }
  return { code, err: (await err) + (await out) };
}

const lineOf = (text: string) =>
  JSON.parse(text.split("\n").find((l) => l.includes('"fatal"')) ?? "{}") as { level?: string; msg?: string };

describe("a gateway on a taken port", () => {
  test("another process listens there: the gateway exits 1 with one clear line", async () => {
    const other = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("the other process") });
    try {
      const { code, err } = await secondStart(other.port!);
      expect(code).toBe(1);
      expect(lineOf(err)).toEqual({
        level: "fatal",
        time: expect.any(String),
        msg: `Turnpike cannot start: 127.0.0.1:${other.port} is already in use by another process. Stop it, choose another PORT, or set TURNPIKE_SHARE_PORT=on on every gateway that is to share the port (site/operations/scale-out.md "Running several instances").`,
      } as never);
      expect(err).not.toMatch(/^\s+at /m);
      // The other process still has every request.
      for (let i = 0; i < 5; i++)
        expect(await (await fetch(`http://127.0.0.1:${other.port}/`)).text()).toBe("the other process");
    } finally {
      other.stop(true);
    }
  }, 90_000);

  test("a second gateway on a first one's port: refused, and the first answers every request", async () => {
    const first = await startInstance({});
    instances.push(first);
    dirs.push(first.journalDir);
    const port = Number(new URL(first.url).port);
    const { code, err } = await secondStart(port);
    expect(code).toBe(1);
    expect(lineOf(err).msg).toContain("is already in use by another process");
    for (let i = 0; i < 10; i++)
      expect(
        (await fetch(`${first.url}/admin/keys`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).status,
      ).toBe(200);
  }, 120_000);

  test("TURNPIKE_SHARE_PORT=on on both: the second starts beside the first", async () => {
    const first = await startInstance({ TURNPIKE_SHARE_PORT: "on" });
    instances.push(first);
    dirs.push(first.journalDir);
    const port = Number(new URL(first.url).port);
    const second = await startInstance({ TURNPIKE_SHARE_PORT: "on", PORT: String(port) });
    instances.push(second);
    dirs.push(second.journalDir);
    expect(new URL(second.url).port).toBe(String(port));
  }, 120_000);

  test("TURNPIKE_SHARE_PORT takes on or off only", async () => {
    const { code, err } = await secondStart(0, { TURNPIKE_SHARE_PORT: "yes" });
    expect(code).toBe(1);
    expect(lineOf(err).msg).toContain("TURNPIKE_SHARE_PORT");
  }, 90_000);
});
