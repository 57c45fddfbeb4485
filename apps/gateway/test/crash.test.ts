/**
 * kill -9 under load: every request a client saw complete has its usage record after a restart.
 * A real gateway process on a real SQLite file, killed mid-load and started again on the same file.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "./scaleout/cluster";
import { spawnGateway } from "./spawned";

const ADMIN = "sk-admin-crash-test-0123456789abcdef";
const dir = mkdtempSync(join(tmpdir(), "turnpike-crash-"));
const db = join(dir, "turnpike.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const startGateway = () => spawnGateway({ TURNPIKE_DB: db, TURNPIKE_ADMIN_KEY: ADMIN });

interface Seen {
  requestId: string;
  outputTokens: number;
}

describe("crash safety of the usage ledger", () => {
  test("after kill -9 under load, every completed request has its record", async () => {
    const first = await startGateway();
    const created = await fetch(`${first.url}/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ name: "load" }),
    });
    const { key } = (await created.json()) as { key: string };
    const seen: Seen[] = [];
    let stop = false;
    const models = ["alpha-haiku-4-5", "beta-5", "gamma-3-flash", "delta-m3"];
    const worker = async (n: number) => {
      for (let i = 0; !stop; i++) {
        const model = models[(n + i) % models.length]!;
        const stream = i % 2 === 1;
        try {
          const res = await fetch(`${first.url}/v1/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}` },
            body: JSON.stringify({
              model,
              stream,
              ...(stream ? { stream_options: { include_usage: true } } : {}),
              messages: [{ role: "user", content: `load ${n}/${i}` }],
            }),
          });
          const rid = res.headers.get("x-request-id")!;
          if (!stream) {
            const body = (await res.json()) as { usage: { completion_tokens: number } };
            seen.push({ requestId: rid, outputTokens: body.usage.completion_tokens });
          } else {
            const text = await res.text();
            if (!text.trimEnd().endsWith("data: [DONE]")) continue; // cut by the kill: not completed
            const usageLine = text
              .split("\n")
              .filter((l) => l.includes('"choices":[]'))
              .pop()!;
            const usage = JSON.parse(usageLine.slice("data: ".length)).usage as { completion_tokens: number };
            seen.push({ requestId: rid, outputTokens: usage.completion_tokens });
          }
        } catch {
          return; // the gateway is gone
        }
      }
    };
    const workers = Array.from({ length: 16 }, (_, n) => worker(n));
    // Killed under load, once enough requests completed (a loaded machine takes longer to get there).
    await waitFor("50 completed requests", async () => seen.length > 50 || undefined, 40_000);
    first.proc.kill(9);
    stop = true;
    await Promise.all(workers);
    await first.proc.exited;
    expect(seen.length).toBeGreaterThan(50);

    const second = await startGateway();
    try {
      const res = await fetch(`${second.url}/admin/usage?limit=10000`, {
        headers: { authorization: `Bearer ${ADMIN}` },
      });
      const rows = ((await res.json()) as { data: { request_id: string; output_tokens: number }[] }).data;
      const byId = new Map(rows.map((r) => [r.request_id, r]));
      const missing = seen.filter((s) => !byId.has(s.requestId));
      expect(missing).toEqual([]);
      for (const s of seen) expect(byId.get(s.requestId)!.output_tokens).toBe(s.outputTokens);
      // And nothing was counted twice.
      expect(new Set(rows.map((r) => r.request_id)).size).toBe(rows.length);
    } finally {
      second.proc.kill();
      await second.proc.exited;
    }
  }, 90_000);
});
