/**
 * Boots the real gateway as a child process on a free port, with a temporary SQLite file and no
 * vendor keys, so every catalog model is answered by the gateway's built-in simulator. Gives its
 * URL, a helper to create keys, and `stop()`. Exported as `@turnpike/gateway/spawn` for the
 * client packages' end-to-end tests (a devDependency of theirs).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Gateway {
  url: string;
  /** `POST /admin/keys`; resolves to the new key's secret. */
  createKey(body: { name: string; models?: string[]; rpm?: number }): Promise<string>;
  stop(): Promise<void>;
}

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
/** With any of these set, the gateway would call a real vendor instead of its simulator. */
const UNSET = ["ALPHA_API_KEY", "BETA_API_KEY", "GAMMA_API_KEY", "DELTA_API_KEY", "TURNPIKE_CONFIG"];

export async function spawnGateway(): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), "turnpike-e2e-"));
  const adminKey = `admin-${crypto.randomUUID()}`;
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: "0",
    HOST: "127.0.0.1",
    TURNPIKE_DB: join(dir, "turnpike.db"),
    TURNPIKE_ADMIN_KEY: adminKey,
  };
  for (const name of UNSET) delete env[name];
  const child = Bun.spawn(["bun", MAIN], { env, stdout: "pipe", stderr: "pipe" });
  let url: string;
  try {
    url = await listeningURL(child.stdout, 30_000);
  } catch (err) {
    child.kill();
    throw new Error(`the gateway did not start: ${String(err)}\n${await new Response(child.stderr).text()}`);
  }
  return {
    url,
    async createKey(body) {
      const res = await fetch(`${url}/admin/keys`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (res.status !== 201) throw new Error(`POST /admin/keys answered ${res.status}: ${await res.text()}`);
      return ((await res.json()) as { key: string }).key;
    },
    async stop() {
      child.kill();
      await child.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The URL of the `Turnpike listening on http://…` line the gateway prints once it serves. */
async function listeningURL(stdout: ReadableStream<Uint8Array>, timeoutMs: number): Promise<string> {
  const reader = stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const timer = setTimeout(() => reader.cancel(`not listening after ${timeoutMs} ms`), timeoutMs);
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      text += decoder.decode(r.value, { stream: true });
      const url = /Turnpike listening on (http:\/\/[^\s"]+)/.exec(text)?.[1];
      if (url) return url;
    }
    throw new Error(`stdout closed before the gateway listened:\n${text}`);
  } finally {
    clearTimeout(timer);
    reader.releaseLock();
    // The child must never block on a full stdout pipe.
    void stdout.pipeTo(new WritableStream()).catch(() => undefined);
  }
}
