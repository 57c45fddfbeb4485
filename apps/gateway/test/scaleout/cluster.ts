import type { Subprocess } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ADMIN_KEY = "sk-admin-scaleout-test-0123456789abcdef";
const MAIN = join(import.meta.dir, "../../src/main.ts");

/** One gateway process (`bun src/main.ts`), as a user starts it, on a port of its own. */
export interface Instance {
  url: string;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  journalDir: string;
  output: () => string;
  /** SIGKILL: no shutdown code runs. */
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

/** One gateway process (`bun src/main.ts`), started; resolves once it listens. */
export function startInstance(env: Record<string, string>, journalDir?: string): Promise<Instance> {
  return spawnInstance(env, journalDir).ready;
}

/**
 * A gateway process being started: its output so far at once (a test may wait for what it says
 * while starting), and the instance once it listens (within 60 s, for a loaded machine).
 */
export function spawnInstance(
  env: Record<string, string>,
  journalDir = mkdtempSync(join(tmpdir(), "turnpike-journal-")),
): { output: () => string; ready: Promise<Instance> } {
  const proc = Bun.spawn(["bun", MAIN], {
    env: {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      BUN_CONFIG_MAX_HTTP_REQUESTS: "4096",
      TURNPIKE_ADMIN_KEY: ADMIN_KEY,
      TURNPIKE_JOURNAL_DIR: journalDir,
      TURNPIKE_DB: join(journalDir, "unused.db"),
      // Tests make many admin writes in a minute; the limit's own test sets it low.
      TURNPIKE_ADMIN_WRITES_PER_MINUTE: "100000",
      ...env,
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  const decoder = new TextDecoder();
  const pump = async (s: ReadableStream<Uint8Array>) => {
    const reader = s.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      out += decoder.decode(value);
    }
  };
  void pump(proc.stdout);
  void pump(proc.stderr);
  return { output: () => out, ready: listening(proc, () => out, journalDir) };
}

async function listening(
  proc: Subprocess<"ignore", "pipe", "pipe">,
  output: () => string,
  journalDir: string,
): Promise<Instance> {
  const deadline = Date.now() + 60_000;
  let url: string | undefined;
  while (!url) {
    url = /Turnpike listening on (http:\/\/[^\s"]+)/.exec(output())?.[1];
    if (url) break;
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`gateway did not start:\n${output()}`);
    }
    await Bun.sleep(25);
  }
  return {
    url: url.replace("localhost", "127.0.0.1"),
    proc,
    journalDir,
    output,
    async kill9() {
      proc.kill("SIGKILL");
      await proc.exited;
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGTERM");
        await proc.exited;
      }
    },
  };
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export async function admin(base: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

export async function newKey(base: string, fields: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const r = await admin(base, "POST", "/admin/keys", { name: "scale-out", ...fields });
  if (r.status !== 201) throw new Error(`key create: ${r.status} ${await r.text()}`);
  return (await r.json()) as { id: string; key: string }; // the admin API's 201 body
}

/** One chat call; the status, the request id and the reply headers. */
export async function chat(
  base: string,
  key: string,
  content = "hello",
  maxTokens?: number,
): Promise<{ status: number; id: string | null; headers: Headers; body: string }> {
  const r = await fetch(base + "/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "beta-5",
      messages: [{ role: "user", content }],
      ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
    }),
  });
  return { status: r.status, id: r.headers.get("x-request-id"), headers: r.headers, body: await r.text() };
}

export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 10_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}

/**
 * A request that spends about one cent on beta-5 ($1.25 in, $6.25 out per million): its reply is
 * longer than its cap, so it uses the whole cap of 1,600 tokens, as the reservation assumed. Its
 * worst case, held against budgets: its ~105-character body at one token a character and the
 * cap, $0.01014.
 */
export async function spendACent(base: string, key: string): Promise<{ status: number | "spent"; id: string | null }> {
  const r = await fetch(base + "/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "beta-5",
      max_tokens: 1600,
      messages: [{ role: "user", content: "[sim chunks=2000] spend a cent" }],
    }),
  });
  const body = await r.text();
  // The chat format renders a spent budget (402) as its 429 `insufficient_quota` (docs/protocols.md §4.8).
  const spent =
    r.status === 429 && (JSON.parse(body) as { error: { code: string } }).error.code === "insufficient_quota"; // the chat error envelope
  return { status: spent ? "spent" : r.status, id: r.headers.get("x-request-id") };
}
