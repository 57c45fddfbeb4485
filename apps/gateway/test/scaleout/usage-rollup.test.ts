import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { teamSpendId } from "../../src/storage/spend-ids";
import { MIGRATIONS, migrateSqlite } from "../../src/storage/migrations";
import { migratePostgres } from "../../src/storage/postgres-migrate";
import { PostgresStore } from "../../src/storage/postgres-store";
import { SqliteStore } from "../../src/storage/sqlite-store";
import type { KeyRecord, Store, UsageAggregate, UsageFilter, UsageGroup, UsageRecord } from "../../src/storage/store";
import type { LatencyGroup } from "../../src/storage/store";
import { LATENCY_BOUNDS, LATENCY_COLUMNS, latencyBucket, PRUNE_SLICE, planRange } from "../../src/storage/usage-rollup";
import { freshDatabase, postgresUp } from "./servers";

/**
 * The rollups read back exactly what the raw rows sum to: every grouping, with and without each
 * filter, over ranges that fill months, days and hours and ranges that cut them anywhere; the
 * rows written before the rollups existed are rolled up by the migration, and a replayed record is
 * counted once. Both stores.
 */

const KEYS = ["key_a", "key_b", "key_c", "key_d"];
const TEAM: Record<string, string> = { key_a: "team_x", key_b: "team_x", key_c: "team_y", key_d: "team_default" };
const MODELS = ["beta-5", "gamma-3-pro", "delta-mini"];
const STATUSES = [200, 200, 200, 429, 502];

/** A small seeded generator, so a failure reproduces. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** `n` records spread over 70 days from 2026-09-20 (three months, both month ends crossed). */
function records(n: number, seed: number, prefix: string): UsageRecord[] {
  const r = rng(seed);
  const from = Date.parse("2026-09-20T00:00:00.000Z");
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  return Array.from({ length: n }, (_, i) => {
    const input = Math.floor(r() * 5000);
    const output = Math.floor(r() * 800);
    return {
      request_id: `${prefix}-${i}`,
      key_id: pick(KEYS),
      model: pick(MODELS),
      endpoint: "chat",
      stream: r() < 0.5,
      input_tokens: input,
      output_tokens: output,
      cache_read_tokens: Math.floor(r() * 100),
      cache_write_tokens: 20,
      cache_write_1h_tokens: r() < 0.3 ? 10 : 0,
      reasoning_tokens: Math.floor(r() * 50),
      cost_usd: Math.round(r() * 1e6) / 1e7,
      status: pick(STATUSES),
      upstream_status: 200,
      latency_ms: Math.round(r() * 30_000 * r()) + r(),
      aborted: false,
      estimated: false,
      deployment: r() < 0.2 ? null : pick(["east", "west"]),
      created_at: new Date(from + Math.floor(r() * 70 * 86_400_000)).toISOString(),
    };
  });
}

/** The aggregates of `rows` as the raw rows give them, computed here independently of any store. */
function expected(rows: readonly UsageRecord[], f: UsageFilter, groupBy: readonly UsageGroup[]): UsageAggregate[] {
  const groups = new Map<string, UsageAggregate>();
  for (const r of rows) {
    if (f.key_id && r.key_id !== f.key_id) continue;
    if (f.model && r.model !== f.model) continue;
    if (f.since && r.created_at < f.since) continue;
    if (f.until && r.created_at >= f.until) continue;
    if (f.failed && r.status < 400) continue;
    const g: Partial<UsageAggregate> = {};
    if (groupBy.includes("key")) g.key_id = r.key_id;
    if (groupBy.includes("model")) g.model = r.model;
    if (groupBy.includes("day")) g.day = r.created_at.slice(0, 10);
    const id = JSON.stringify([g.key_id, g.model, g.day]);
    let a = groups.get(id);
    if (!a)
      groups.set(
        id,
        (a = {
          ...g,
          requests: 0,
          input_tokens: 0,
          output_tokens: 0,
          cache_read_tokens: 0,
          cache_write_tokens: 0,
          reasoning_tokens: 0,
          cost_usd: 0,
        }),
      );
    a.requests++;
    a.input_tokens += r.input_tokens;
    a.output_tokens += r.output_tokens;
    a.cache_read_tokens += r.cache_read_tokens;
    a.cache_write_tokens += r.cache_write_tokens;
    a.reasoning_tokens += r.reasoning_tokens;
    a.cost_usd += r.cost_usd;
  }
  const order = (a: UsageAggregate) => [a.key_id ?? "", a.model ?? "", a.day ?? ""];
  return [...groups.values()].sort((x, y) => {
    const [a, b] = [order(x), order(y)];
    for (const g of groupBy) {
      const i = g === "key" ? 0 : g === "model" ? 1 : 2;
      const c = a[i]! < b[i]! ? -1 : a[i]! > b[i]! ? 1 : 0;
      if (c) return c;
    }
    return 0;
  });
}

/** Costs compared to a micro-dollar (sums in another order round differently at the 15th digit). */
function same(got: UsageAggregate[], want: UsageAggregate[]): void {
  const strip = (xs: UsageAggregate[]) => xs.map(({ cost_usd: _, ...r }) => r);
  expect(strip(got)).toEqual(strip(want));
  got.forEach((g, i) => expect(g.cost_usd).toBeCloseTo(want[i]!.cost_usd, 6));
}

const GROUPINGS: UsageGroup[][] = [
  [],
  ["key"],
  ["model"],
  ["day"],
  ["key", "model"],
  ["day", "model"],
  ["day", "key"],
  ["key", "model", "day"],
];

/** Ranges that fill whole months, days and hours, and ones that cut each at an odd instant. */
const RANGES: { since?: string; until?: string }[] = [
  {},
  { since: "2026-10-01T00:00:00.000Z", until: "2026-11-01T00:00:00.000Z" },
  { since: "2026-10-01T00:00:00.000Z" },
  { until: "2026-10-17T05:00:00.000Z" },
  { since: "2026-09-28T13:27:41.512Z", until: "2026-11-03T07:02:00.000Z" },
  { since: "2026-10-05T10:15:00.000Z", until: "2026-10-05T10:45:00.000Z" },
  { since: "2026-10-05T10:15:00.000Z", until: "2026-10-06T00:00:00.000Z" },
  { since: "2026-10-31T22:00:00.000Z", until: "2026-11-01T03:00:00.000Z" },
  { since: "2026-11-20T00:00:00.000Z", until: "2026-11-27T00:00:00.000Z" },
];

const key = (id: string): KeyRecord => ({
  id,
  name: id,
  hash: `hash-${id}`,
  prefix: "sk-tp-abcd",
  models: null,
  rpm: null,
  tpm: null,
  model_limits: null,
  budget_usd: null,
  expires_at: null,
  prev_hash: null,
  prev_valid_until: null,
  created_at: "2026-09-01T00:00:00.000Z",
  updated_at: "2026-09-01T00:00:00.000Z",
  revoked_at: null,
  team_id: TEAM[id] ?? null,
});

/** Rows written before the rollups existed (a store at version 15), then the ones written after. */
const before = records(1200, 7, "old");
const after = records(1800, 11, "new");
const all = [...before, ...after];

interface Backend {
  /** Makes a store at version 15 holding `rows`, then opens it (migrating to the newest). */
  open(rows: readonly UsageRecord[]): Promise<Store>;
  /** The rollup table's latency buckets per grain, summed. */
  latency(store: Store): Promise<Record<string, number[]>>;
  close(): Promise<void>;
}

function suite(name: string, backend: () => Backend, enabled = true) {
  describe.skipIf(!enabled)(`usage rollups: ${name}`, () => {
    let store: Store;
    let b: Backend;
    beforeAll(async () => {
      b = backend();
      store = await b.open(before);
      for (const id of KEYS) await store.createKey(key(id));
      // In batches as the ledger writes them, one record replayed in each (a journal read back).
      for (let i = 0; i < after.length; i += 250)
        await store.insertUsage([...after.slice(i, i + 250), before[i / 250]!]);
    });
    afterAll(async () => {
      await store?.close();
      await b?.close();
    });

    test("every grouping over every range equals the raw rows' sums", async () => {
      for (const range of RANGES)
        for (const groupBy of GROUPINGS)
          same(await store.aggregateUsage(range, groupBy), expected(all, range, groupBy));
    });

    test("filtered by key, model and failure, the same", async () => {
      const filters: UsageFilter[] = [
        { key_id: "key_b" },
        { model: "gamma-3-pro", failed: true },
        { failed: true, since: "2026-10-03T08:30:00.000Z", until: "2026-11-12T16:00:00.000Z" },
        { key_id: "key_c", model: "delta-mini", since: "2026-10-31T23:59:00.000Z" },
      ];
      for (const f of filters)
        for (const groupBy of GROUPINGS) same(await store.aggregateUsage(f, groupBy), expected(all, f, groupBy));
    });

    test("a month's spend per key and per team, as the budgets load it", async () => {
      const since = "2026-11-01T00:00:00.000Z";
      const spend = await store.spendSince(since);
      const want = new Map<string, number>();
      for (const r of all)
        if (r.created_at >= since)
          for (const id of [r.key_id, teamSpendId(TEAM[r.key_id]!)]) want.set(id, (want.get(id) ?? 0) + r.cost_usd);
      expect([...spend.keys()].sort()).toEqual([...want.keys()].sort());
      for (const [id, usd] of want) expect(spend.get(id)).toBeCloseTo(usd, 6);
    });

    test("latency buckets count every request once in each grain", async () => {
      const want = LATENCY_COLUMNS.map(() => 0);
      for (const r of all) want[latencyBucket(r.latency_ms)]!++;
      expect(want.filter((n) => n > 0).length).toBeGreaterThan(5);
      const every = ["d", "d:key", "d:model", "h", "m", "m:key", "m:model"];
      expect(await b.latency(store)).toEqual(Object.fromEntries(every.map((g) => [g, want])));
    });

    test("latency percentiles per key, model and deployment fall in the raw rows' own bucket", async () => {
      const groupings: LatencyGroup[][] = [
        [],
        ["model"],
        ["key"],
        ["deployment"],
        ["key", "model"],
        ["model", "deployment"],
      ];
      const filters: UsageFilter[] = [
        ...RANGES,
        { key_id: "key_b", since: "2026-10-03T08:30:00.000Z" },
        { model: "gamma-3-pro", until: "2026-11-12T16:20:00.000Z" },
      ];
      let checked = 0;
      for (const f of filters)
        for (const groupBy of groupings) {
          // The raw rows' latencies per group, computed here from the records themselves.
          const want = new Map<string, number[]>();
          for (const r of all) {
            if (r.status >= 400 || (f.key_id && r.key_id !== f.key_id) || (f.model && r.model !== f.model)) continue;
            if ((f.since && r.created_at < f.since) || (f.until && r.created_at >= f.until)) continue;
            const id = groupBy
              .map((g) => (g === "key" ? r.key_id : g === "model" ? r.model : (r.deployment ?? "")))
              .join("|");
            want.set(id, [...(want.get(id) ?? []), r.latency_ms]);
          }
          const got = await store.latencyUsage(f, groupBy);
          const ids = got.map((a) =>
            groupBy.map((g) => (g === "key" ? a.key_id : g === "model" ? a.model : a.deployment)).join("|"),
          );
          expect(ids.sort()).toEqual([...want.keys()].sort());
          for (const [i, a] of got.entries()) {
            const ms = want.get(ids[i]!)!.sort((x, y) => x - y);
            const buckets = LATENCY_COLUMNS.map(() => 0);
            for (const m of ms) buckets[latencyBucket(m)]!++;
            expect(a.latency_buckets).toEqual(buckets);
            expect(a.requests).toBe(ms.length);
            for (const [q, p] of [
              [0.5, a.p50_ms],
              [0.9, a.p90_ms],
              [0.99, a.p99_ms],
            ] as const) {
              // The true percentile (nearest rank) and the bounds of its bucket.
              const exact = ms[Math.ceil(q * ms.length) - 1]!;
              const b = latencyBucket(exact);
              const lo = b === 0 ? 0 : LATENCY_BOUNDS[b - 1]!;
              const hi = LATENCY_BOUNDS[b] ?? lo;
              expect(p).toBeGreaterThanOrEqual(lo);
              expect(p).toBeLessThanOrEqual(hi);
              checked++;
            }
          }
        }
      expect(checked).toBeGreaterThan(500);
    });

    // Last: it deletes rows.
    test("past a retention cut the raw rows go, a slice at a time, and the rollups still sum them", async () => {
      const cut = "2026-11-01T00:00:00.000Z";
      const gone = all.filter((r) => r.created_at < cut).length;
      expect(gone).toBeGreaterThan(PRUNE_SLICE);
      let slices = 0;
      expect(await store.pruneUsage(cut, async () => void slices++)).toBe(gone);
      // PostgreSQL's cut at a month's start drops whole months (storage/usage-partitions.ts): no slice.
      expect(slices).toBe(name === "PostgreSQL" ? 0 : Math.floor(gone / PRUNE_SLICE));
      expect(await store.queryUsage({ until: cut, limit: 10 })).toEqual([]);
      expect((await store.queryUsage({ since: cut, limit: 10_000 })).length).toBe(all.length - gone);
      // Every range whose ends before the cut fall on whole hours reads the same as before it.
      const whole = (t?: string) => !t || t >= cut || t.endsWith(":00:00.000Z");
      const ranges = RANGES.filter((r) => whole(r.since) && whole(r.until));
      expect(ranges.length).toBeGreaterThan(5);
      for (const range of ranges)
        for (const groupBy of GROUPINGS)
          same(await store.aggregateUsage(range, groupBy), expected(all, range, groupBy));
      expect(await store.pruneUsage(cut)).toBe(0);
    });
  });
}

const latencySums = LATENCY_COLUMNS.map((c) => `SUM(${c}) AS ${c}`).join(", ");
/** Each narrow rollup (per model alone, per key alone) counted as a grain of its own. */
const GRAIN_OF = "grain || CASE WHEN key_id = '' THEN ':model' WHEN model = '' THEN ':key' ELSE '' END AS grain";
const byGrain = (rows: Record<string, unknown>[]) =>
  Object.fromEntries(rows.map((r) => [String(r.grain), LATENCY_COLUMNS.map((c) => Number(r[c]))]));

suite("SQLite", () => {
  const dir = mkdtempSync(join(tmpdir(), "turnpike-rollup-"));
  const path = join(dir, "turnpike.db");
  return {
    async open(rows) {
      const db = new Database(path, { create: true, strict: true });
      db.exec("PRAGMA journal_mode = WAL;");
      migrateSqlite(
        db,
        MIGRATIONS.filter((m) => m.version <= 15),
      );
      const cols = Object.keys(rows[0]!);
      const insert = db.prepare(`INSERT INTO usage (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`);
      db.transaction(() => {
        for (const r of rows)
          insert.run(
            ...cols.map((c) => {
              const v = r[c as keyof UsageRecord];
              // The records written here have no guardrail note (an object): plain values only.
              return typeof v === "boolean" ? Number(v) : ((v ?? null) as string | number | null);
            }),
          );
      })();
      db.close();
      return new SqliteStore(path);
    },
    async latency() {
      const db = new Database(path, { readonly: true });
      try {
        return byGrain(
          db
            .query<Record<string, unknown>, []>(`SELECT ${GRAIN_OF}, ${latencySums} FROM usage_rollup GROUP BY 1`)
            .all(),
        );
      } finally {
        db.close();
      }
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
    return {
      async open(rows) {
        const db = await freshDatabase();
        drop = db.drop;
        const sql = new SQL(db.url, { max: 1 });
        await migratePostgres(
          sql,
          MIGRATIONS.filter((m) => m.version <= 15),
        );
        const cols = Object.keys(rows[0]!);
        for (let i = 0; i < rows.length; i += 500)
          await sql`INSERT INTO usage ${sql(rows.slice(i, i + 500) as unknown as Record<string, unknown>[], ...cols)}`; // plain records
        await sql.close();
        return PostgresStore.open(db.url, { max: 2 });
      },
      async latency(store) {
        const rows: Record<string, unknown>[] = await (store as PostgresStore).sql.unsafe(
          `SELECT ${GRAIN_OF}, ${latencySums} FROM usage_rollup GROUP BY 1`,
        );
        return byGrain(rows);
      },
      async close() {
        await drop?.();
      },
    };
  },
  postgresUp,
);

describe("a range cut into reads", () => {
  test("whole months, days and hours from the rollups; less than an hour at each end from the raw rows", () => {
    expect(planRange("2026-09-28T13:27:41.512Z", "2026-11-03T07:02:00.000Z")).toEqual([
      { from: "usage", lo: "2026-09-28T13:27:41.512Z", hi: "2026-09-28T14:00:00.000Z" },
      { from: "usage", lo: "2026-11-03T07:00:00.000Z", hi: "2026-11-03T07:02:00.000Z" },
      { from: "h", lo: "2026-09-28T14", hi: "2026-09-29T00" },
      { from: "h", lo: "2026-11-03T00", hi: "2026-11-03T07" },
      { from: "d", lo: "2026-09-29", hi: "2026-10-01" },
      { from: "d", lo: "2026-11-01", hi: "2026-11-03" },
      { from: "m", lo: "2026-10", hi: "2026-11" },
    ]);
    expect(planRange(undefined, undefined)).toEqual([{ from: "m" }]);
    expect(planRange("2026-10-05T10:15:00.000Z", "2026-10-05T10:45:00.000Z")).toEqual([
      { from: "usage", lo: "2026-10-05T10:15:00.000Z", hi: "2026-10-05T10:45:00.000Z" },
    ]);
    expect(planRange("2026-10-05T00:00:00.000Z", "2026-10-05T00:00:00.000Z")).toEqual([]);
    // Grouped by day: no month rollup (its rows have no day).
    expect(planRange("2026-09-30T00:00:00.000Z", "2026-11-02T00:00:00.000Z", false)).toEqual([
      { from: "d", lo: "2026-09-30", hi: "2026-11-02" },
    ]);
  });
});
