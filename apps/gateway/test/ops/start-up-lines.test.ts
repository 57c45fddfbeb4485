/**
 * What `bun run start` writes as it starts: JSON log lines only, and the secrets a first start
 * makes (the first API key, the run's admin key) on a terminal only — never in a line a log
 * collector (`docker logs`, a journal) would keep. Started as a real process: through a pipe (a
 * log), through a pseudo-terminal (`script` from util-linux, a person), and with
 * TURNPIKE_FIRST_KEY_FILE.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const MAIN = join(import.meta.dir, "../../src/main.ts");
const VENDOR_KEYS = [
  "ALPHA_API_KEY",
  "BETA_API_KEY",
  "GAMMA_API_KEY",
  "DELTA_API_KEY",
  "TURNPIKE_CONFIG",
  "TURNPIKE_ADMIN_KEY",
  "TURNPIKE_FIRST_KEY_FILE",
];

/** Starts the gateway on a fresh store, reads what it wrote until it listens, and stops it. */
async function start(
  extraEnv: Record<string, string>,
  viaTerminal = false,
): Promise<{ out: string; url: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "turnpike-start-"));
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: "0",
    HOST: "127.0.0.1",
    TURNPIKE_DB: join(dir, "t.db"),
    ...extraEnv,
  };
  for (const k of VENDOR_KEYS) if (!(k in extraEnv)) delete env[k];
  const cmd = viaTerminal ? ["script", "-qec", `${process.execPath} ${MAIN}`, "/dev/null"] : [process.execPath, MAIN];
  const proc = Bun.spawn(cmd, { env, stdout: "pipe", stderr: "pipe", stdin: "pipe" });
  let out = "";
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  const deadline = Date.now() + 30_000;
  let url: string | undefined;
  while (!url) {
    if (Date.now() > deadline) break;
    const r = await reader.read();
    if (r.done) break;
    out += decoder.decode(r.value, { stream: true });
    url = /Turnpike listening on (http:\/\/[^\s"]+)/.exec(out)?.[1];
  }
  proc.kill();
  await proc.exited;
  if (!url) throw new Error(`the gateway did not start:\n${out}${await new Response(proc.stderr).text()}`);
  return { out, url, dir };
}

describe("start-up lines", () => {
  test("through a pipe: every line is JSON, no secret is written, and a line says how to get a key", async () => {
    const { out, dir } = await start({});
    rmSync(dir, { recursive: true, force: true });
    const lines = out.trim().split("\n");
    const parsed = lines.map(
      (l) => JSON.parse(l) as { level: string; time: string; msg: string; key_id?: string; url?: string },
    );
    for (const p of parsed) {
      expect(typeof p.msg).toBe("string");
      expect(Number.isNaN(Date.parse(p.time))).toBe(false);
    }
    expect(out).not.toMatch(/sk-tp-|sk-admin-/);
    const first = parsed.find((p) => p.msg.startsWith("First start: created API key"));
    expect(first?.key_id).toMatch(/^key_/);
    expect(first?.msg).toContain("turnpike keys create");
    expect(parsed.find((p) => p.msg.startsWith("Admin key generated"))?.msg).toContain("set TURNPIKE_ADMIN_KEY");
    expect(parsed.at(-1)?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  test("with TURNPIKE_FIRST_KEY_FILE: the secret is in that file (0600) and it works, still not in the log", async () => {
    const keyDir = mkdtempSync(join(tmpdir(), "turnpike-key-"));
    const file = join(keyDir, "first-key");
    const { out, dir } = await start({
      TURNPIKE_FIRST_KEY_FILE: file,
      TURNPIKE_ADMIN_KEY: "sk-admin-start-up-test-0123456789",
    });
    rmSync(dir, { recursive: true, force: true });
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const secret = readFileSync(file, "utf8").trim();
    rmSync(keyDir, { recursive: true, force: true });
    expect(secret).toMatch(/^sk-tp-/);
    expect(out).not.toContain(secret);
    for (const l of out.trim().split("\n")) JSON.parse(l);
    expect(out).toContain(`written to ${file}`);
  });

  test("a start that cannot go on says why in one JSON line and exits 1", async () => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      TURNPIKE_DB: ":memory:",
      TURNPIKE_ADMIN_KEY: "too-short",
    };
    const proc = Bun.spawn([process.execPath, MAIN], { env, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    expect(code).toBe(1);
    expect(out).toBe("");
    const line = JSON.parse(err.trim()) as { level: string; msg: string };
    expect(line.level).toBe("fatal");
    expect(line.msg).toContain("TURNPIKE_ADMIN_KEY must be at least 32 characters long");
  });

  test.skipIf(!Bun.which("script"))(
    "in a terminal: the person who started it sees the first key and the admin key",
    async () => {
      const { out, dir } = await start({}, true);
      rmSync(dir, { recursive: true, force: true });
      expect(out).toMatch(/Admin key for this run \(set TURNPIKE_ADMIN_KEY to choose your own\): sk-admin-\S+/);
      expect(out).toMatch(/First start: created API key "key_[\w-]+" — it is shown only now:\r?\n\s+sk-tp-\S+/);
      // The log lines beside them still hold no secret.
      const json = out.split(/\r?\n/).filter((l) => l.startsWith("{"));
      expect(json.length).toBeGreaterThan(2);
      for (const l of json) expect(l).not.toMatch(/sk-tp-|sk-admin-/);
    },
  );
});
