import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ADMIN_KEY } from "./harness";

/** A gateway in its own process, started as the start command starts it (its memory is its own). */
export interface Spawned {
  /** The process itself (signals, exit code). */
  proc: ReturnType<typeof Bun.spawn>;
  url: string;
  /** The API key made at first start (its secret written to TURNPIKE_FIRST_KEY_FILE: a pipe is no terminal). */
  key: string;
  pid: number;
  /** Resident memory of the gateway process, in bytes (Linux /proc). */
  rss(): number;
  stop(): Promise<void>;
}

const MAIN = join(import.meta.dir, "../src/main.ts");

export async function spawnGateway(env: Record<string, string> = {}, bunFlags: string[] = []): Promise<Spawned> {
  const keyFile = join(mkdtempSync(join(tmpdir(), "turnpike-first-key-")), "key");
  const proc = Bun.spawn([process.execPath, ...bunFlags, MAIN], {
    env: {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      TURNPIKE_DB: ":memory:",
      TURNPIKE_ADMIN_KEY: ADMIN_KEY,
      TURNPIKE_FIRST_KEY_FILE: keyFile,
      ...env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let out = "";
  const deadline = Date.now() + 15_000;
  while (!/Turnpike listening on (http:\/\/[^\s"]+)/.test(out)) {
    if (Date.now() > deadline) throw new Error(`the gateway did not start: ${out}`);
    const { done, value } = await reader.read();
    if (done) throw new Error(`the gateway exited: ${out}${await new Response(proc.stderr).text()}`);
    out += decoder.decode(value, { stream: true });
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  void (async () => {
    for (;;) if ((await reader.read().catch(() => ({ done: true }))).done) break;
  })();
  const url = /Turnpike listening on (http:\/\/[^\s"]+)/.exec(out)![1]!.replace("localhost", "127.0.0.1"); // matched by the loop above
  // Written before the listening line; absent when the store already held keys.
  const key = existsSync(keyFile) ? readFileSync(keyFile, "utf8").trim() : "";
  rmSync(dirname(keyFile), { recursive: true, force: true });
  return {
    proc,
    url,
    key,
    pid: proc.pid,
    rss() {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"));
      return Number(m?.[1] ?? 0) * 1024;
    },
    async stop() {
      proc.kill();
      await proc.exited;
    },
  };
}
