import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PostgresStore } from "../../src/storage/postgres-store";
import type { UsageRecord } from "../../src/storage/store";
import { freshDatabase, postgresUp } from "./servers";

/**
 * The path past one database (docs/ledger-export.md), run for real: ClickHouse's engine (chdb, the
 * embedded ClickHouse, from npm) makes the documented table, pulls the ledger from PostgreSQL with
 * the documented statement — twice, as overlapping runs do — and its totals per key, model and
 * day equal the gateway's own rollups. chdb is not a dependency of the repository (its engine is
 * half a gigabyte): install it anywhere (`npm i chdb` in a scratch folder) and set
 * TURNPIKE_TEST_CHDB to its folder (`…/node_modules/chdb`), or have it resolvable as `chdb`.
 * Without it, or without PostgreSQL, the suite is skipped by name.
 */

interface ChdbSession {
  query(sql: string, format?: string): string;
  cleanup(): void;
}
type Chdb = { Session: new () => ChdbSession };

async function loadChdb(): Promise<Chdb | undefined> {
  for (const name of [process.env.TURNPIKE_TEST_CHDB, "chdb"].filter(Boolean) as string[]) {
    try {
      return (await import(name)) as Chdb; // the module's own shape, declared above
    } catch {}
  }
  return undefined;
}
const chdb = await loadChdb();

/** The SQL blocks of the export page, in order: the table, the pull, the check. */
const DOC = readFileSync(join(import.meta.dir, "../../../../docs/ledger-export.md"), "utf8");
const BLOCKS = [...DOC.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!);

const KEYS = ["key_a", "key_b", "key_c"];
const MODELS = ["beta-5", "gamma-3-pro", "delta-mini"];

function records(n: number): UsageRecord[] {
  const from = Date.parse("2026-10-30T00:00:00.000Z");
  return Array.from({ length: n }, (_, i) => ({
    request_id: `req-ch-${i}`,
    key_id: KEYS[i % 3]!,
    model: MODELS[Math.floor(i / 3) % 3]!,
    endpoint: "chat",
    stream: i % 2 === 0,
    input_tokens: 1000 + ((i * 37) % 5000),
    output_tokens: (i * 13) % 800,
    cache_read_tokens: i % 50,
    cache_write_tokens: 0,
    cache_write_1h_tokens: 0,
    reasoning_tokens: i % 30,
    cost_usd: ((i * 7919) % 10_000) / 1e6,
    status: i % 11 === 0 ? 429 : 200,
    upstream_status: 200,
    latency_ms: 50 + ((i * 31) % 9000),
    aborted: false,
    estimated: false,
    deployment: i % 4 === 0 ? null : "east",
    // Four days, two months: across a month's end.
    created_at: new Date(from + Math.floor((i * 4 * 86_400_000) / n)).toISOString(),
  }));
}

describe.skipIf(!chdb || !postgresUp)("the ledger exported to ClickHouse (chdb)", () => {
  let store: PostgresStore;
  let drop: () => Promise<void>;
  let ch: ChdbSession;
  const rows = records(3000);

  beforeAll(async () => {
    const db = await freshDatabase();
    drop = db.drop;
    store = await PostgresStore.open(db.url, { max: 2 });
    for (let i = 0; i < rows.length; i += 500) await store.insertUsage(rows.slice(i, i + 500));
    ch = new chdb!.Session();
    const u = new URL(db.url);
    ch.query(BLOCKS[0]!);
    // The documented pull, pointed at this test's database.
    const pull = BLOCKS[1]!.replace(
      "'db-host:5432', 'turnpike', 'usage', 'reader', 'secret'",
      `'${u.hostname}:${u.port || 5432}', '${u.pathname.slice(1)}', 'usage', '${decodeURIComponent(u.username)}', '${decodeURIComponent(u.password)}'`,
    );
    expect(pull).not.toContain("db-host");
    ch.query(pull);
    // A second run overlaps the first by its hour: the table's merge keeps each request once.
    ch.query(pull);
  });
  afterAll(async () => {
    ch?.cleanup();
    await store?.close();
    await drop?.();
  });

  test("every row arrives once, with its columns' values", () => {
    expect(Number(ch.query("SELECT count() FROM turnpike_usage FINAL", "CSV").trim())).toBe(rows.length);
    const one = JSON.parse(ch.query("SELECT * FROM turnpike_usage FINAL WHERE request_id = 'req-ch-4'", "JSONEachRow"));
    const r = rows[4]!;
    expect(one).toMatchObject({
      key_id: r.key_id,
      model: r.model,
      input_tokens: r.input_tokens,
      status: r.status,
      deployment: "",
      stream: true,
      created_at: r.created_at.replace("T", " ").replace("Z", ""),
    });
  });

  test("totals by key, model and day equal the gateway's rollups", async () => {
    const got = ch
      .query(
        `SELECT key_id, model, toString(toDate(created_at)) AS day, count() AS requests, sum(input_tokens) AS input_tokens,
                sum(output_tokens) AS output_tokens, sum(cost_usd) AS cost_usd
         FROM turnpike_usage FINAL GROUP BY key_id, model, day ORDER BY key_id, model, day`,
        "JSONEachRow",
      )
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const want = await store.aggregateUsage({}, ["key", "model", "day"]);
    expect(want.length).toBeGreaterThan(20);
    expect(
      got.map(({ cost_usd: _, ...g }) => ({
        ...g,
        requests: Number(g.requests),
        input_tokens: Number(g.input_tokens),
        output_tokens: Number(g.output_tokens),
      })),
    ).toEqual(
      want.map((w) => ({
        key_id: w.key_id,
        model: w.model,
        day: w.day,
        requests: w.requests,
        input_tokens: w.input_tokens,
        output_tokens: w.output_tokens,
      })),
    );
    got.forEach((g, i) => expect(g.cost_usd).toBeCloseTo(want[i]!.cost_usd, 6));
  });

  test("the page's own check: a month per model equals GET /admin/usage?group_by=model", async () => {
    const check = BLOCKS[2]!;
    const got = ch
      .query(check, "JSONEachRow")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const m = /created_at >= '([^']+)' AND created_at < '([^']+)'/.exec(check)!;
    const want = await store.aggregateUsage({ since: `${m[1]}T00:00:00.000Z`, until: `${m[2]}T00:00:00.000Z` }, [
      "model",
    ]);
    expect(got.map((g) => [g.model, Number(g.requests)])).toEqual(want.map((w) => [w.model, w.requests]));
    expect(want.length).toBe(3);
  });
});
