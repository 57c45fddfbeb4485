import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { guardrailRollupInsert, guardrailTotalsSql } from "../../src/storage/guardrail-rollup";
import { MIGRATIONS, migrateSqlite } from "../../src/storage/migrations";
import { migratePostgres } from "../../src/storage/postgres-migrate";
import { PostgresStore } from "../../src/storage/postgres-store";
import { SqliteStore } from "../../src/storage/sqlite-store";
import type { GuardrailNote, GuardrailTotal, Store, UsageRecord } from "../../src/storage/store";
import { freshDatabase, postgresUp } from "./servers";

/**
 * `GET /admin/guardrails` at scale: a ledger of ROWS requests (200,000 by default;
 * `TURNPIKE_GUARDRAIL_ROWS=1000000` for the figures in site/guide/guardrails.md), written before the
 * guardrail rollups existed, is rolled up by their migration; records written after are rolled up
 * as they are inserted (a replayed one counted once). The totals equal the notes' own sums exactly,
 * over any range of days, and are read by one statement that touches the rollups only, never a
 * usage row; they stay when retention deletes the raw rows. Both stores.
 */

const ROWS = Number(process.env.TURNPIKE_GUARDRAIL_ROWS) || 200_000;
const DAY_MS = 86_400_000;
/** Row `i` of the bulk ledger falls on this day: 40 days from 2026-10-15, a month's end crossed. */
const dayOf = (i: number) => new Date(Date.UTC(2026, 9, 15) + (i % 40) * DAY_MS).toISOString().slice(0, 10);

const EMAIL = (n: number) => ({ policy: "pii", category: "email", action: "redact", dry_run: false, n });
const CARD = { policy: "trial-cards", category: "card", action: "block", dry_run: true, n: 2 };
/** Row `i`'s note: a third with one email policy's detections, a third with two policies (one a dry run), a third none. */
function noteOf(i: number): GuardrailNote | null {
  if (i % 3 === 0)
    return {
      policies: ["pii"],
      categories: ["email"],
      action: "redact",
      dry_run: false,
      detections: [EMAIL(1 + (i % 5))],
    };
  if (i % 3 === 1)
    return {
      policies: ["pii", "trial-cards"],
      categories: ["email", "card"],
      action: "redact",
      dry_run: false,
      detections: [EMAIL(1), CARD],
    };
  return null;
}

/** Row `i` of the bulk ledger as a record (the test's replay of one, and the reference sums). */
function bulkRecord(i: number): UsageRecord {
  const note = noteOf(i);
  return {
    request_id: `bulk-${i}`,
    key_id: `key_${(i % 7) % 4}`,
    model: "beta-5",
    endpoint: "chat",
    stream: false,
    input_tokens: 10,
    output_tokens: 5,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    cache_write_1h_tokens: 0,
    reasoning_tokens: 0,
    cost_usd: 0.001,
    status: 200,
    upstream_status: 200,
    latency_ms: 100,
    aborted: false,
    estimated: false,
    created_at: `${dayOf(i)}T12:00:00.000Z`,
    ...(note ? { guardrail: note } : {}),
  };
}

/** The bulk ledger in SQL, the same rows as {@link bulkRecord}: `i` the row number, `day` its date's SQL. */
function bulkSelect(day: string, bool: string): string {
  const email = (n: string) =>
    `'{"policy":"pii","category":"email","action":"redact","dry_run":false,"n":' || ${n} || '}'`;
  const card = `'{"policy":"trial-cards","category":"card","action":"block","dry_run":true,"n":2}'`;
  const note = `CASE i % 3
  WHEN 0 THEN '{"policies":["pii"],"categories":["email"],"action":"redact","dry_run":false,"detections":[' || ${email("(1 + i % 5)")} || ']}'
  WHEN 1 THEN '{"policies":["pii","trial-cards"],"categories":["email","card"],"action":"redact","dry_run":false,"detections":[' || ${email("1")} || ',' || ${card} || ']}'
  END`;
  return `'bulk-' || i, 'key_' || (i % 7 % 4), 'beta-5', 'chat', ${bool}, 10, 5, 0, 0, 0, 0.001, 200, 200, 100, ${bool}, ${bool}, ${day} || 'T12:00:00.000Z', 0, ${note}`;
}
const BULK_COLUMNS =
  "request_id, key_id, model, endpoint, stream, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost_usd, status, upstream_status, latency_ms, aborted, estimated, created_at, cache_write_1h_tokens, guardrail";

/** Written after the rollups exist, through the store: five days of November, two new keys. */
const LATER: UsageRecord[] = Array.from({ length: 600 }, (_, i) => ({
  ...bulkRecord(i),
  request_id: `later-${i}`,
  key_id: `key_${4 + (i % 2)}`,
  created_at: `2026-11-${String(20 + (i % 5)).padStart(2, "0")}T0${i % 10}:30:00.000Z`,
  ...(i % 4 === 3 ? { guardrail: null } : {}),
}));

/** The notes' sums computed here, row by row, as the raw records give them. */
function expected(first: string, last: string): GuardrailTotal[] {
  const rows = new Map<string, GuardrailTotal>();
  const add = (r: UsageRecord) => {
    const day = r.created_at.slice(0, 10);
    if (day < first || day > last) return;
    for (const d of r.guardrail?.detections ?? []) {
      const k = [d.policy, d.category, d.action, d.dry_run, r.key_id].join("|");
      const row = rows.get(k);
      if (row) {
        row.requests++;
        row.detections += d.n;
      } else rows.set(k, { ...d, key_id: r.key_id, requests: 1, detections: d.n });
    }
  };
  for (let i = 0; i < ROWS; i++) add(bulkRecord(i));
  for (const r of LATER) add(r);
  return [...rows.values()].map(({ n: _, ...r }: GuardrailTotal & { n?: number }) => r);
}
const sorted = (xs: GuardrailTotal[]) => [...xs].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

/** Ranges of days: everything, one month, a month's end crossed, one day, the later days, none. */
const RANGES: [string, string][] = [
  ["2026-01-01", "2026-12-31"],
  ["2026-10-01", "2026-10-31"],
  ["2026-10-30", "2026-11-02"],
  ["2026-10-17", "2026-10-17"],
  ["2026-11-20", "2026-11-24"],
  ["2026-12-01", "2026-12-31"],
];

interface Backend {
  /**
   * Makes a store at version 21 holding the bulk ledger, migrates it to the newest (how long that
   * took, in ms: the rollup of the bulk rows), then opens it.
   */
  open(): Promise<{ store: Store; migrateMs: number }>;
  /** The relations the read's plan touches. */
  planned(first: string, last: string): Promise<string[]>;
  /** The rollup table, every row in order. */
  table(): Promise<unknown[]>;
  /** Empties the rollup table and fills it again from the raw rows, as the migration does. */
  refill(): Promise<void>;
  close(): Promise<void>;
}

function suite(name: string, backend: () => Backend, enabled = true) {
  describe.skipIf(!enabled)(`guardrail rollups: ${name}`, () => {
    let store: Store;
    let b: Backend;
    beforeAll(async () => {
      b = backend();
      const opened = await b.open();
      store = opened.store;
      for (let i = 0; i < LATER.length; i += 200)
        // A bulk row and a record of the batch before replayed (a journal read back): counted once.
        await store.insertUsage([...LATER.slice(i, i + 200), bulkRecord(i), ...(i > 0 ? [LATER[i - 1]!] : [])]);
      // Figures, not assertions (site/guide/guardrails.md records them): the first read (the
      // SQLite reader's thread starts with it) and the median of five more.
      const timed = async () => {
        const t = performance.now();
        await store.guardrailTotals("2026-10-01", "2026-10-31");
        return performance.now() - t;
      };
      const cold = await timed();
      const warm: number[] = [];
      for (let i = 0; i < 5; i++) warm.push(await timed());
      warm.sort((x, y) => x - y);
      console.log(
        `${name}: ${ROWS} rows; migration 22 (the bulk rows rolled up) ${opened.migrateMs.toFixed(0)} ms; a month's totals read in ${cold.toFixed(1)} ms first, then ${warm[2]!.toFixed(1)} ms (median of 5)`,
      );
    }, 600_000);
    afterAll(async () => {
      await store?.close();
      await b?.close();
    });

    // Generous timeouts: the rows are many and the test machine may be shared; nothing here is timed.
    test("every range of days sums exactly what the notes hold", async () => {
      for (const [first, last] of RANGES)
        expect(sorted(await store.guardrailTotals(first, last))).toEqual(sorted(expected(first, last)));
      const all = await store.guardrailTotals("2026-01-01", "2026-12-31");
      // Six keys × (email, and card as a dry run) — most detections first.
      expect(all).toHaveLength(12);
      expect(all.map((r) => r.detections)).toEqual([...all.map((r) => r.detections)].sort((x, y) => y - x));
      expect(all.reduce((n, r) => n + r.requests, 0)).toBe(
        expected("2026-01-01", "2026-12-31").reduce((n, r) => n + r.requests, 0),
      );
    }, 300_000);

    test("one statement that reads the rollups only, never a usage row", async () => {
      expect(await b.planned("2026-10-01", "2026-10-31")).toEqual(["guardrail_rollup"]);
    });

    test("the rollups written as records come equal those the migration makes from the raw rows", async () => {
      const written = await b.table();
      expect(written.length).toBeGreaterThan(300);
      await b.refill();
      expect(await b.table()).toEqual(written);
    }, 300_000);

    // Last: it deletes rows.
    test("past a retention cut the raw rows go and the totals stay", async () => {
      const before = await store.guardrailTotals("2026-10-01", "2026-10-31");
      expect(await store.pruneUsage("2026-11-01T00:00:00.000Z")).toBeGreaterThan(0);
      expect(await store.queryUsage({ until: "2026-11-01T00:00:00.000Z", limit: 1 })).toEqual([]);
      expect(await store.guardrailTotals("2026-10-01", "2026-10-31")).toEqual(before);
    }, 300_000);
  });
}

const ORDER = "ORDER BY day, key_id, policy, category, action, dry_run";

suite("SQLite", () => {
  const dir = mkdtempSync(join(tmpdir(), "turnpike-guardrail-rollup-"));
  const path = join(dir, "turnpike.db");
  let store: SqliteStore;
  const db = () => {
    const c = store.connection();
    if (c.dialect !== "sqlite") throw new Error("not SQLite");
    return c.db;
  };
  return {
    async open() {
      const raw = new Database(path, { create: true, strict: true });
      raw.exec("PRAGMA journal_mode = WAL;");
      migrateSqlite(
        raw,
        MIGRATIONS.filter((m) => m.version <= 21),
      );
      raw.exec(`INSERT INTO usage (${BULK_COLUMNS})
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ${ROWS})
SELECT ${bulkSelect("strftime('%Y-%m-%d', '2026-10-15', '+' || (i % 40) || ' days')", "0")} FROM n`);
      const t = performance.now();
      migrateSqlite(raw);
      const migrateMs = performance.now() - t;
      raw.close();
      store = new SqliteStore(path);
      return { store, migrateMs };
    },
    async planned(first, last) {
      const params: string[] = [];
      const sql = guardrailTotalsSql(
        first,
        last,
        (v) => (params.push(v), "?"),
        (e) => e,
      );
      const plan = db()
        .query<{ detail: string }, string[]>(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...params);
      // The day range is a search of the table's primary key, not a scan.
      expect(plan.map((p) => p.detail).join("\n")).toMatch(
        /SEARCH guardrail_rollup USING PRIMARY KEY \(day>\? AND day<\?\)/,
      );
      return [...new Set(plan.flatMap((p) => p.detail.match(/\b(?:usage\w*|guardrail_rollup)\b/g) ?? []))];
    },
    async table() {
      return db().query(`SELECT * FROM guardrail_rollup ${ORDER}`).all();
    },
    async refill() {
      db().exec("DELETE FROM guardrail_rollup");
      db().exec(guardrailRollupInsert("sqlite", "usage", false));
    },
    async close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

suite(
  "PostgreSQL",
  () => {
    let drop: (() => Promise<void>) | undefined;
    let store: PostgresStore;
    return {
      async open() {
        const db = await freshDatabase();
        drop = db.drop;
        const sql = new SQL(db.url, { max: 1 });
        await migratePostgres(
          sql,
          MIGRATIONS.filter((m) => m.version <= 21),
        );
        await sql.unsafe(
          `INSERT INTO usage (${BULK_COLUMNS}) SELECT ${bulkSelect("to_char(date '2026-10-15' + i % 40, 'YYYY-MM-DD')", "false")} FROM generate_series(0, ${ROWS - 1}) AS i`,
        );
        await sql.unsafe("ANALYZE usage");
        const t = performance.now();
        await migratePostgres(sql);
        const migrateMs = performance.now() - t;
        await sql.unsafe("ANALYZE guardrail_rollup");
        await sql.close();
        store = await PostgresStore.open(db.url, { max: 2 });
        return { store, migrateMs };
      },
      async planned(first, last) {
        const [{ "QUERY PLAN": plan }] = await store.sql.unsafe(
          `EXPLAIN (FORMAT JSON) ${guardrailTotalsSql(
            first,
            last,
            (v) => `'${v}'`,
            (e) => `${e}::float8`,
          )}`,
        );
        const relations = new Set<string>();
        const walk = (node: Record<string, unknown>) => {
          if (typeof node["Relation Name"] === "string") relations.add(node["Relation Name"]);
          for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
        };
        walk((plan as { Plan: Record<string, unknown> }[])[0]!.Plan); // EXPLAIN's JSON: one plan in an array
        return [...relations];
      },
      async table() {
        return store.sql.unsafe(`SELECT * FROM guardrail_rollup ${ORDER}`);
      },
      async refill() {
        await store.sql.unsafe("DELETE FROM guardrail_rollup");
        await store.sql.unsafe(guardrailRollupInsert("postgres", "usage", false));
      },
      async close() {
        await drop?.();
      },
    };
  },
  postgresUp,
);
