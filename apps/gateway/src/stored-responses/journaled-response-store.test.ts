import { afterEach, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GatewayError } from "@turnpike/providers";
import type { ResponseStore } from "./response-store";
import type { StoredResponse } from "../vocabulary/stored-response";
import { JournaledResponseStore } from "./journaled-response-store";

const NOW = "2026-11-20T00:00:00.000Z";
const stored = (id: string, keyId = "key_a"): StoredResponse => ({
  id,
  key_id: keyId,
  model: "beta-5",
  response: { id, object: "response", status: "completed", output: [] },
  input_items: [{ role: "user", content: `asked in ${id}` }],
  created_at: NOW,
  expires_at: "2026-12-20T00:00:00.000Z",
});

/** A store in memory that can be made unreachable (a 503, as the PostgreSQL store throws). */
function memoryStore() {
  const rows = new Map<string, StoredResponse>();
  const calls: string[] = [];
  const check = () => {
    if (s.down)
      throw new GatewayError({
        status: 503,
        type: "api_error",
        message: "The gateway's store (PostgreSQL) is unreachable; try again shortly.",
      });
  };
  const s: ResponseStore & { down: boolean; rows: Map<string, StoredResponse>; calls: string[] } = {
    down: false,
    rows,
    calls,
    async put(r) {
      check();
      calls.push(`put ${r.id}`);
      rows.set(r.id, r);
    },
    async get(keyId, id, nowIso) {
      check();
      const r = rows.get(id);
      return r && r.key_id === keyId && r.expires_at > nowIso ? r : undefined;
    },
    async delete(keyId, id) {
      check();
      calls.push(`delete ${id}`);
      const r = rows.get(id);
      return r?.key_id === keyId ? rows.delete(id) : false;
    },
    async purgeExpired() {
      return 0;
    },
  };
  return s;
}

const dirs: string[] = [];
const dir = () => {
  const d = mkdtempSync(join(tmpdir(), "turnpike-responses-journal-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Waits for `ok`, checking every 5 ms, for at most 10 s. */
async function until(ok: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !ok() && Date.now() < deadline; ) await Bun.sleep(5);
}

describe("JournaledResponseStore", () => {
  test("with the store up it writes through and journals nothing", async () => {
    const inner = memoryStore();
    const d = dir();
    const s = JournaledResponseStore.open(d, inner);
    await s.put(stored("resp_1"));
    expect(inner.rows.has("resp_1")).toBe(true);
    expect(s.backlog).toBe(0);
    expect(readFileSync(join(d, "stored-responses.ndjson"), "utf8")).toBe("");
    await s.close();
  });

  test("unreachable: journaled, read back (by its key only), deleted, then shipped in order and the file emptied", async () => {
    const inner = memoryStore();
    const d = dir();
    const states: [boolean, number][] = [];
    const s = JournaledResponseStore.open(d, inner, { retryMs: 5, onState: (up, n) => states.push([up, n]) });
    inner.down = true;
    await s.put(stored("resp_1"));
    await s.put(stored("resp_2"));
    await s.put(stored("resp_3"));
    expect(s.backlog).toBe(3);
    expect(await s.get("key_a", "resp_2", NOW)).toEqual(stored("resp_2"));
    expect(await s.get("key_b", "resp_2", NOW)).toBeUndefined();
    expect(await s.get("key_a", "resp_2", "2027-01-01T00:00:00.000Z")).toBeUndefined();
    expect(await s.delete("key_b", "resp_3")).toBe(false);
    expect(await s.delete("key_a", "resp_3")).toBe(true);
    expect(await s.get("key_a", "resp_3", NOW)).toBeUndefined();
    // What only the store has is a 503, not a 404.
    await expect(s.get("key_a", "resp_elsewhere", NOW)).rejects.toMatchObject({ status: 503 });

    inner.down = false;
    await until(() => s.backlog === 0);
    // resp_3 was deleted while it waited: never written, so never seen elsewhere.
    expect(inner.calls).toEqual(["put resp_1", "put resp_2", "delete resp_3"]);
    expect([...inner.rows.keys()]).toEqual(["resp_1", "resp_2"]);
    expect(readFileSync(join(d, "stored-responses.ndjson"), "utf8")).toBe("");
    expect(states).toEqual([
      [false, 1],
      [true, 0],
    ]);
    // Reads go to the store again.
    expect(await s.get("key_a", "resp_1", NOW)).toEqual(stored("resp_1"));
    await s.close();
  });

  test("what a killed instance left is shipped at the next start; a line cut short by the kill is skipped", async () => {
    const d = dir();
    const first = memoryStore();
    first.down = true;
    const before = JournaledResponseStore.open(d, first, { retryMs: 60_000 });
    await before.put(stored("resp_a"));
    await before.put(stored("resp_b"));
    // Gone with its lines unshipped (closing with the store away leaves the file as a kill does),
    // its last write cut short.
    await before.close();
    appendFileSync(join(d, "stored-responses.ndjson"), '{"op":"put","r":{"id":"resp_to');
    const inner = memoryStore();
    const after = JournaledResponseStore.open(d, inner, { retryMs: 5 });
    expect(after.backlog).toBe(2);
    // Readable at once from the journal, before it is shipped.
    expect((await after.get("key_a", "resp_b", NOW))?.id).toBe("resp_b");
    await until(() => after.backlog === 0);
    expect([...inner.rows.keys()]).toEqual(["resp_a", "resp_b"]);
    // A later write starts a line of its own.
    inner.down = true;
    await after.put(stored("resp_c"));
    inner.down = false;
    await until(() => after.backlog === 0);
    expect(inner.rows.has("resp_c")).toBe(true);
    await after.close();
  });

  test("a change the store refuses for its content is dropped and said, not retried forever", async () => {
    const inner = memoryStore();
    const dropped: string[] = [];
    const s = JournaledResponseStore.open(dir(), inner, { retryMs: 5, onDropped: (id) => dropped.push(id) });
    inner.down = true;
    await s.put(stored("resp_bad"));
    await s.put(stored("resp_good"));
    const put = inner.put;
    inner.put = async (r) => {
      if (r.id === "resp_bad")
        throw new GatewayError({ status: 400, type: "invalid_request_error", message: "refused" });
      return put(r);
    };
    inner.down = false;
    await until(() => s.backlog === 0);
    expect(dropped).toEqual(["resp_bad"]);
    expect([...inner.rows.keys()]).toEqual(["resp_good"]);
    await s.close();
  });
});
