import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JournalLedger, SET_ASIDE_FILE } from "./journal-ledger";
import type { UsageRecord } from "../storage/store";

const record = (id: string): UsageRecord => ({
  request_id: id,
  key_id: "key_a",
  model: "beta-5",
  endpoint: "chat",
  stream: false,
  input_tokens: 10,
  output_tokens: 2,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  reasoning_tokens: 0,
  cost_usd: 0.001,
  status: 200,
  upstream_status: 200,
  latency_ms: 3,
  aborted: false,
  estimated: false,
  created_at: "2026-11-23T10:00:00.000Z",
});

/** A store that keeps rows by request id (as the real ones do) and can be made to refuse. */
function fakeStore() {
  const rows = new Map<string, UsageRecord>();
  let inserts = 0;
  const s = {
    down: false,
    rows,
    get inserts() {
      return inserts;
    },
    async insertUsage(records: readonly UsageRecord[]) {
      if (s.down) throw new Error("connection refused");
      inserts++;
      for (const r of records) if (!rows.has(r.request_id)) rows.set(r.request_id, r);
    },
  };
  return s;
}

/** Waits for `ok` to hold, checking every 5 ms, for at most 10 s (a bound for a loaded machine). */
async function until(ok: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !ok() && Date.now() < deadline; ) await Bun.sleep(5);
}

const dirs: string[] = [];
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), "turnpike-journal-test-"));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const segments = (d: string) => readdirSync(d).filter((f) => f.endsWith(".ndjson"));

describe("JournalLedger", () => {
  test("a record is settled once journaled; the records of one turn share one insert", async () => {
    const store = fakeStore();
    const ledger = JournalLedger.open(dir(), store);
    await Promise.all(["r1", "r2", "r3"].map((id) => ledger.record(record(id))));
    await ledger.flush();
    expect([...store.rows.keys()]).toEqual(["r1", "r2", "r3"]);
    expect(store.inserts).toBe(1);
    await ledger.close();
  });

  test("while the store refuses, records wait (and the client is not held); they land when it is back", async () => {
    const store = fakeStore();
    const states: boolean[] = [];
    const ledger = JournalLedger.open(dir(), store, { retryMs: 20, onStoreState: (up) => states.push(up) });
    store.down = true;
    await ledger.record(record("r1"));
    await ledger.record(record("r2"));
    expect(ledger.size).toBe(2);
    await expect(ledger.flush()).rejects.toThrow("connection refused");
    expect(store.rows.size).toBe(0);
    store.down = false;
    await until(() => store.rows.size >= 2);
    expect([...store.rows.keys()]).toEqual(["r1", "r2"]);
    expect(ledger.size).toBe(0);
    expect(states).toEqual([false, true]);
    await ledger.close();
  });

  test("what a crashed owner left is shipped by the next one, once; a torn last line is skipped", async () => {
    const d = dir();
    const store = fakeStore();
    store.down = true;
    const first = JournalLedger.open(d, store, { retryMs: 10_000 });
    await first.record(record("a1"));
    await first.record(record("a2"));
    // No close: the process "dies" with both records only in its journal, plus a half-written line.
    const [seg] = segments(d);
    writeFileSync(join(d, seg!), '{"request_id":"torn', { flag: "a" });
    store.down = false;
    store.rows.set("a1", record("a1")); // one of them did land before the crash
    const second = JournalLedger.open(d, store);
    expect(second.backlog).toBe(2);
    await second.flush();
    expect([...store.rows.keys()].sort()).toEqual(["a1", "a2"]);
    await second.close();
    expect(segments(d)).toEqual([]);
  });

  test("segments rotate past their size and are deleted once shipped", async () => {
    const d = dir();
    const store = fakeStore();
    store.down = true;
    const ledger = JournalLedger.open(d, store, { segmentBytes: 1000, retryMs: 10_000 });
    for (let i = 0; i < 20; i++) await ledger.record(record(`r${i}`));
    expect(segments(d).length).toBeGreaterThan(3);
    store.down = false;
    await ledger.flush();
    expect(store.rows.size).toBe(20);
    expect(segments(d).length).toBe(1); // the open one
    await ledger.close();
    expect(segments(d)).toEqual([]);
  });

  test("with a companion (the strict book of requests in flight), a record settles only once its companion has", async () => {
    const store = fakeStore();
    let rowWritten!: () => void;
    const row = new Promise<void>((r) => (rowWritten = r));
    const asked: string[] = [];
    const ledger = JournalLedger.open(dir(), store, {
      companion: (r) => {
        asked.push(r.request_id);
        return r.request_id === "req_short" ? row : undefined;
      },
    });
    let settled = false;
    const short = ledger.record(record("req_short")).then(() => (settled = true));
    // Journaled and even shipped, but its row is not written: the client is not told yet.
    await ledger.flush();
    expect(store.rows.has("req_short")).toBe(true);
    expect(settled).toBe(false);
    // A record of a later turn with nothing to wait for settles once journaled.
    await ledger.record(record("req_long"));
    expect(settled).toBe(false);
    rowWritten();
    await short;
    expect(asked).toEqual(["req_short", "req_long"]);
    await ledger.close();
  });

  test("a companion that never settles holds its record no longer than companionWaitMs", async () => {
    const ledger = JournalLedger.open(dir(), fakeStore(), {
      companion: () => new Promise<void>(() => {}),
      companionWaitMs: 50,
    });
    // Settles (the bound), where without it the test would time out.
    await ledger.record(record("req_stuck"));
    await ledger.close();
  });

  test("a directory owned by a live process is refused", () => {
    const d = dir();
    writeFileSync(join(d, "owner.pid"), String(process.ppid));
    expect(() => JournalLedger.open(d, fakeStore())).toThrow("give each instance its own TURNPIKE_JOURNAL_DIR");
  });
});

describe("JournalLedger shipping rounds", () => {
  test("records appended while an insert runs are shipped in the next round, with no further traffic", async () => {
    const store = fakeStore();
    let release: (() => void) | undefined;
    const slow = {
      ...store,
      async insertUsage(records: readonly UsageRecord[]) {
        if (store.inserts === 0) await new Promise<void>((r) => (release = r));
        await store.insertUsage(records);
      },
    };
    const ledger = JournalLedger.open(dir(), slow, { shipDelayMs: 5 });
    await ledger.record(record("first"));
    await until(() => release !== undefined); // the first insert is now held
    await ledger.record(record("second"));
    release!();
    await until(() => store.rows.size >= 2);
    expect([...store.rows.keys()]).toEqual(["first", "second"]);
    expect(ledger.size).toBe(0);
    await ledger.close();
  });
});

describe("a record the store refuses for its values", () => {
  /** PostgreSQL's refusal of a NUL in text (SQLSTATE 22P05), as Bun.SQL reports it. */
  const refusing = () => {
    const s = fakeStore();
    const insertUsage = s.insertUsage;
    s.insertUsage = async (records) => {
      if (records.some((r) => r.model.includes("\0")))
        throw Object.assign(new Error("unsupported Unicode escape sequence"), { errno: "22P05" });
      return insertUsage(records);
    };
    return s;
  };
  const bad = (id: string): UsageRecord => ({ ...record(id), model: "files__x\u0000y" });

  test("is set aside with an alarm and never blocks the records behind it, also across a restart", async () => {
    const d = dir();
    // The first owner cannot reach the store: everything waits in its journal.
    const down = fakeStore();
    down.down = true;
    const first = JournalLedger.open(d, down, { retryMs: 10_000 });
    await Promise.all([first.record(record("r1")), first.record(bad("bad1")), first.record(record("r2"))]);
    await Promise.all([first.record(record("r3")), first.record(bad("bad2")), first.record(record("r4"))]);
    await first.close();
    // The next owner's store refuses the two bad records: the four others land, the two are set aside.
    const store = refusing();
    const told: string[] = [];
    const second = JournalLedger.open(d, store, { retryMs: 20, onSetAside: (r) => told.push(r.request_id) });
    expect(second.backlog).toBe(6);
    await until(() => store.rows.size === 4 && second.size === 0);
    expect([...store.rows.keys()].sort()).toEqual(["r1", "r2", "r3", "r4"]);
    expect(told.sort()).toEqual(["bad1", "bad2"]);
    expect(second.setAside).toBe(2);
    const aside = readFileSync(join(d, SET_ASIDE_FILE), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { reason: string; record: UsageRecord });
    expect(aside.map((a) => a.record.request_id).sort()).toEqual(["bad1", "bad2"]);
    expect(aside[0]?.record.model).toBe("files__x\u0000y");
    expect(aside[0]?.reason).toContain("unsupported Unicode escape sequence");
    // Records after them ship as ever.
    await second.record(record("r5"));
    await until(() => store.rows.has("r5"));
    expect(store.rows.has("r5")).toBe(true);
    await second.close();
    // A third start replays nothing of them, and still counts them for the alarm.
    const third = JournalLedger.open(d, store);
    expect(third.backlog).toBe(0);
    expect(third.setAside).toBe(2);
    await third.close();
  });

  test("while the store is unreachable nothing is set aside: records wait, as before", async () => {
    const store = refusing();
    store.down = true;
    const told: string[] = [];
    const ledger = JournalLedger.open(dir(), store, { retryMs: 20, onSetAside: (r) => told.push(r.request_id) });
    await Promise.all([ledger.record(record("a")), ledger.record(bad("b"))]);
    await Bun.sleep(100);
    expect(told).toEqual([]);
    expect(ledger.size).toBe(2);
    store.down = false;
    await until(() => store.rows.has("a"));
    expect(told).toEqual(["b"]);
    await ledger.close();
  });
});
