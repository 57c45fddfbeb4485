/**
 * SIGTERM with streams in flight: a real gateway process stops taking connections; a stream that
 * ends within TURNPIKE_DRAIN_SECONDS finishes whole, one that would not is ended with the in-band
 * error and billed for what it relayed; the process exits 0 with every record in the ledger.
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "../scaleout/cluster";
import { spawnGateway } from "../spawned";

const ADMIN = "sk-admin-drain-test-0123456789abcdef";
const dir = mkdtempSync(join(tmpdir(), "turnpike-drain-"));
const db = join(dir, "turnpike.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const startGateway = () => spawnGateway({ TURNPIKE_DB: db, TURNPIKE_ADMIN_KEY: ADMIN, TURNPIKE_DRAIN_SECONDS: "5" });

/** Starts a stream and resolves once its first bytes arrived, with a promise of its whole text. */
async function openStream(url: string, key: string, format: "messages" | "chat", directives: string) {
  const messages = [{ role: "user", content: `Tell me [sim ${directives}]` }];
  const res = await fetch(`${url}${format === "messages" ? "/v1/messages" : "/v1/chat/completions"}`, {
    method: "POST",
    headers:
      format === "messages"
        ? { "x-api-key": key, "anthropic-version": "2023-06-01" }
        : { authorization: `Bearer ${key}` },
    body: JSON.stringify({
      model: format === "messages" ? "alpha-haiku-4-5" : "beta-5",
      stream: true,
      max_tokens: 200,
      messages,
    }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  let text = new TextDecoder().decode((await reader.read()).value);
  const rest = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return text;
      text += new TextDecoder().decode(value);
    }
  })();
  return { id: res.headers.get("x-request-id")!, rest };
}

test("SIGTERM: streams finish within the drain, the rest end in-band and are billed, exit 0, every record kept", async () => {
  const gw = await startGateway();
  const created = await fetch(`${gw.url}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify({ name: "drain" }),
  });
  const { key } = (await created.json()) as { key: string };
  // Short: about 0.3 s in all, well within the 5 s drain on a loaded machine. Long: about 12 s, far past it.
  const short = [
    await openStream(gw.url, key, "messages", "chunks=3 latency=100"),
    await openStream(gw.url, key, "chat", "chunks=3 latency=100"),
  ];
  const long = [
    await openStream(gw.url, key, "messages", "chunks=40 latency=300"),
    await openStream(gw.url, key, "chat", "chunks=40 latency=300"),
  ];
  gw.proc.kill("SIGTERM");
  // No new connection is taken once draining (however long the signal takes to be handled).
  await waitFor("new connections to be refused", () =>
    fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } }).then(
      () => false,
      () => true,
    ),
  );
  const [m, c] = await Promise.all(short.map((s) => s.rest));
  expect(m).toContain("event: message_stop");
  expect(c!.trimEnd().endsWith("data: [DONE]")).toBe(true);
  const [lm, lc] = await Promise.all(long.map((s) => s.rest));
  expect(lm).toContain("event: error");
  expect(lm).not.toContain("event: message_stop");
  expect(lc).toContain('"error"');
  expect(await gw.proc.exited).toBe(0);

  const rows = new Database(db, { readonly: true })
    .query("SELECT request_id, status, output_tokens, cost_usd, deployment, attempts FROM usage")
    .all() as {
    request_id: string;
    status: number;
    output_tokens: number;
    cost_usd: number;
    deployment: string;
    attempts: number;
  }[];
  const by = new Map(rows.map((r) => [r.request_id, r]));
  for (const s of short) expect(by.get(s.id)).toMatchObject({ status: 200, attempts: 1 });
  for (const s of long) {
    const row = by.get(s.id)!;
    expect(row.status).toBe(502);
    // Billed for what was relayed before the cut.
    expect(row.output_tokens).toBeGreaterThan(0);
    expect(row.cost_usd).toBeGreaterThan(0);
  }
}, 30_000);
