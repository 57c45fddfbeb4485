import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { StoreKeyDirectory } from "./key-directory";
import { SqliteStore } from "../storage/sqlite-store";
import type { KeyRecord } from "../storage/store";

let store: SqliteStore;
let dir: StoreKeyDirectory;
beforeEach(async () => {
  store = new SqliteStore(":memory:");
  dir = await StoreKeyDirectory.load(store);
});
afterEach(() => store.close());

function record(id: string, hash: string, created_at = "2026-11-01T00:00:00.000Z"): KeyRecord {
  return {
    id,
    name: `key ${id}`,
    hash,
    prefix: "sk-tp-abcd",
    models: null,
    rpm: null,
    tpm: null,
    model_limits: null,
    budget_usd: null,
    expires_at: null,
    prev_hash: null,
    prev_valid_until: null,
    created_at,
    updated_at: created_at,
    revoked_at: null,
  };
}

describe("StoreKeyDirectory lookups", () => {
  test("byHash and byId find a created key; unknown ones are undefined", async () => {
    await dir.create(record("k1", "h1"));
    expect((await dir.byHash("h1"))?.id).toBe("k1");
    expect((await dir.byId("k1"))?.hash).toBe("h1");
    expect(await dir.byHash("h2")).toBeUndefined();
    expect(await dir.byId("k2")).toBeUndefined();
  });

  test("after a rotation both the current and the previous hash find the new record", async () => {
    const k = record("k1", "h1");
    await dir.create(k);
    await dir.update({ ...k, hash: "h2", prev_hash: "h1", prev_valid_until: "2026-11-01T01:00:00.000Z" });
    expect((await dir.byHash("h2"))?.hash).toBe("h2");
    expect((await dir.byHash("h1"))?.hash).toBe("h2");
    // A second rotation forgets the first secret.
    await dir.update({ ...k, hash: "h3", prev_hash: "h2", prev_valid_until: "2026-11-01T02:00:00.000Z" });
    expect(await dir.byHash("h1")).toBeUndefined();
    expect((await dir.byHash("h2"))?.hash).toBe("h3");
    expect((await dir.byHash("h3"))?.id).toBe("k1");
  });

  test("a rotation without grace drops the old hash at once", async () => {
    const k = record("k1", "h1");
    await dir.create(k);
    await dir.update({ ...k, hash: "h2" });
    expect(await dir.byHash("h1")).toBeUndefined();
    expect((await dir.byHash("h2"))?.id).toBe("k1");
  });

  test("list: oldest first, ties broken by id", async () => {
    await dir.create(record("k_b", "hb", "2026-11-02T00:00:00.000Z"));
    await dir.create(record("k_c", "hc", "2026-11-01T00:00:00.000Z"));
    await dir.create(record("k_a", "ha", "2026-11-02T00:00:00.000Z"));
    expect((await dir.list()).map((k) => k.id)).toEqual(["k_c", "k_a", "k_b"]);
  });
});

describe("StoreKeyDirectory changes", () => {
  test("onChange tells the id of each created and updated key, until unsubscribed", async () => {
    const seen: string[] = [];
    const off = dir.onChange((id) => seen.push(id));
    const k = record("k1", "h1");
    await dir.create(k);
    await dir.update({ ...k, rpm: 10 });
    await dir.create(record("k2", "h2"));
    expect(seen).toEqual(["k1", "k1", "k2"]);
    off();
    await dir.update({ ...k, rpm: 20 });
    expect(seen).toHaveLength(3);
  });

  test("writes go through to the store: a directory loaded later sees the latest state", async () => {
    const k = record("k1", "h1");
    await dir.create(k);
    await dir.update({
      ...k,
      name: "renamed",
      models: ["beta-*"],
      model_limits: { "beta-5": { rpm: 2 } },
      revoked_at: "2026-11-03T00:00:00.000Z",
    });
    const again = await StoreKeyDirectory.load(store);
    const loaded = await again.byHash("h1");
    expect(loaded).toMatchObject({
      id: "k1",
      name: "renamed",
      models: ["beta-*"],
      model_limits: { "beta-5": { rpm: 2 } },
      revoked_at: "2026-11-03T00:00:00.000Z",
    });
  });

  test("a failed store write does not change the directory nor announce anything", async () => {
    await dir.create(record("k1", "h1"));
    const seen: string[] = [];
    dir.onChange((id) => seen.push(id));
    // The hash is UNIQUE in the store: a second key with it is refused there.
    await expect(dir.create(record("k2", "h1"))).rejects.toThrow();
    expect((await dir.byHash("h1"))?.id).toBe("k1");
    expect(await dir.byId("k2")).toBeUndefined();
    expect(seen).toEqual([]);
  });
});
