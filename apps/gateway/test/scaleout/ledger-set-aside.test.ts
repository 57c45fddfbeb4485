/**
 * The usage journal in front of a real PostgreSQL: a record PostgreSQL cannot keep (a NUL in its
 * text) is set aside with an alarm, and every other record, before and after it, is shipped.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JournalLedger, SET_ASIDE_FILE } from "../../src/metering/journal-ledger";
import { PostgresStore } from "../../src/storage/postgres-store";
import type { UsageRecord } from "../../src/storage/store";
import { waitFor } from "./cluster";
import { freshDatabase, postgresUp } from "./servers";

const record = (id: string, model = "beta-5"): UsageRecord => ({
  request_id: id,
  key_id: "key_a",
  model,
  endpoint: "mcp",
  stream: false,
  input_tokens: 0,
  output_tokens: 0,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  reasoning_tokens: 0,
  cost_usd: 0,
  status: 200,
  upstream_status: 200,
  latency_ms: 3,
  aborted: false,
  estimated: false,
  created_at: new Date().toISOString(),
});

describe.skipIf(!postgresUp)("the usage journal on PostgreSQL, with a record it cannot keep", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let store: PostgresStore;
  const dir = mkdtempSync(join(tmpdir(), "turnpike-set-aside-"));
  beforeAll(async () => {
    db = await freshDatabase();
    store = await PostgresStore.open(db.url, { max: 2 });
  });
  afterAll(async () => {
    await store.sql.close();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the bad record is set aside (log, metric count, file); the others land, then and after a restart", async () => {
    const told: string[] = [];
    const ledger = JournalLedger.open(dir, store, { retryMs: 50, onSetAside: (r) => told.push(r.request_id) });
    await Promise.all([
      ledger.record(record("req_good_1")),
      ledger.record(record("req_bad", "files__x\u0000y")),
      ledger.record(record("req_good_2")),
    ]);
    const ids = async () =>
      ((await store.sql`SELECT request_id FROM usage ORDER BY request_id`) as { request_id: string }[]).map(
        (r) => r.request_id,
      );
    await waitFor("the good records", async () => (await ids()).length === 2);
    expect(await ids()).toEqual(["req_good_1", "req_good_2"]);
    expect(told).toEqual(["req_bad"]);
    expect(ledger.setAside).toBe(1);
    await ledger.record(record("req_good_3"));
    await ledger.close();
    const again = JournalLedger.open(dir, store);
    expect(again.backlog).toBe(0);
    expect(again.setAside).toBe(1);
    await again.record(record("req_good_4"));
    await again.flush();
    expect(await ids()).toEqual(["req_good_1", "req_good_2", "req_good_3", "req_good_4"]);
    await again.close();
    const kept = JSON.parse(readFileSync(join(dir, SET_ASIDE_FILE), "utf8").trim()) as { record: UsageRecord };
    expect(kept.record.request_id).toBe("req_bad");
  });
});
