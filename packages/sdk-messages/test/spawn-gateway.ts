/**
 * Boots the real gateway (the `@turnpike/gateway` workspace package, a devDependency) as a
 * subprocess on a free port, with a temp SQLite file and no vendor keys, so every model is served
 * by its built-in simulator. Returns its URL, an admin helper to create keys, and `stop()`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Gateway {
  url: string;
  /** `POST /admin/keys`; returns the secret. */
  createKey(body: { name: string; models?: string[]; rpm?: number }): Promise<string>;
  stop(): Promise<void>;
}

/** The gateway's server entry, as its package exports it (`@turnpike/gateway/main`): no path into `apps/`. */
const MAIN = Bun.resolveSync("@turnpike/gateway/main", import.meta.dir);
const VENDOR_KEYS = ["ALPHA_API_KEY", "BETA_API_KEY", "GAMMA_API_KEY", "DELTA_API_KEY"];

export async function spawnGateway(): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), "turnpike-e2e-"));
  const adminKey = `admin-${crypto.randomUUID()}`;
  const env: Record<string, string | undefined> = { ...process.env, PORT: "0", HOST: "127.0.0.1", TURNPIKE_DB: join(dir, "turnpike.db"), TURNPIKE_ADMIN_KEY: adminKey };
  for (const name of [...VENDOR_KEYS, "TURNPIKE_CONFIG"]) delete env[name];
  const proc = Bun.spawn(["bun", MAIN], { env, stdout: "pipe", stderr: "pipe" });

  const url = await readUntilListening(proc.stdout, 30_000).catch(async (err: unknown) => {
    proc.kill();
    throw new Error(`the gateway did not start: ${String(err)}\n${await new Response(proc.stderr).text()}`);
  });

  return {
    url,
    async createKey(body) {
      const res = await fetch(`${url}/admin/keys`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (res.status !== 201) throw new Error(`POST /admin/keys: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { key: string }).key;
    },
    async stop() {
      proc.kill();
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Reads stdout until `Turnpike listening on http://HOST:PORT` and returns the URL. */
async function readUntilListening(stdout: ReadableStream<Uint8Array>, timeoutMs: number): Promise<string> {
  const reader = stdout.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  const deadline = setTimeout(() => reader.cancel(`no "Turnpike listening on" line within ${timeoutMs} ms`), timeoutMs);
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stdout ended before the gateway was ready:\n${seen}`);
      seen += decoder.decode(value, { stream: true });
      const match = /Turnpike listening on (http:\/\/\S+)/.exec(seen);
      if (match?.[1]) return match[1];
    }
  } finally {
    clearTimeout(deadline);
    // Keep draining so the child never blocks on a full pipe.
    reader.releaseLock();
    void stdout.pipeTo(new WritableStream()).catch(() => undefined);
  }
}
