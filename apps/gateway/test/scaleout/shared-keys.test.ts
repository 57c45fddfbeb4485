import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KeyService } from "../../src/keys/key-service";
import { PostgresStore } from "../../src/storage/postgres-store";
import { SharedKeyDirectory } from "../../src/keys/shared-key-directory";
import { waitFor } from "./cluster";
import { freshDatabase, postgresUp } from "./servers";

/** No Redis: two instances' key directories over one PostgreSQL converge within the reload interval. */
describe.skipIf(!postgresUp)("keys shared through PostgreSQL alone", () => {
  let drop: () => Promise<void> = async () => {};
  let stores: PostgresStore[] = [];
  beforeAll(async () => {
    const db = await freshDatabase();
    drop = db.drop;
    stores = await Promise.all([PostgresStore.open(db.url), PostgresStore.open(db.url)]);
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    await drop();
  });

  test("a key made and revoked on one is known, then refused, on the other after a re-read", async () => {
    // No notices here (no Redis): only the re-read every TTL carries a change across.
    const ttlMs = 300;
    const [dirA, dirB] = await Promise.all(stores.map((s) => SharedKeyDirectory.load(s, { ttlMs })));
    const a = new KeyService(dirA!);
    const b = new KeyService(dirB!);
    const changed: string[] = [];
    dirB!.onChange((id) => changed.push(id));
    const { record, secret } = await a.create({ name: "shared" });
    expect((await b.authenticate(secret)).ok).toBe(false);
    await waitFor("the key on b", async () => (await b.authenticate(secret)).ok || undefined, 10_000, 10);
    expect(changed).toEqual([record.id]);

    await a.revoke(record.id);
    const result = await waitFor(
      "the revocation on b",
      async () => {
        const r = await b.authenticate(secret);
        return r.ok ? undefined : r;
      },
      10_000,
      10,
    );
    expect(result).toEqual({ ok: false, reason: "revoked" });
    dirA!.close();
    dirB!.close();
  });

  test("while the store is unreachable the cached keys keep working", async () => {
    const dir = await SharedKeyDirectory.load(stores[0]!, { ttlMs: 100 });
    const keys = new KeyService(dir);
    const { secret } = await keys.create({ name: "cached" });
    const errors: unknown[] = [];
    // The same database behind a switch the test throws.
    let failedReads = 0;
    const flaky = {
      down: false,
      listKeys: () => {
        if (!flaky.down) return stores[0]!.listKeys();
        failedReads++;
        return Promise.reject(new Error("connection refused"));
      },
      createKey: (k: Parameters<PostgresStore["createKey"]>[0]) => stores[0]!.createKey(k),
      updateKey: (k: Parameters<PostgresStore["updateKey"]>[0]) => stores[0]!.updateKey(k),
    };
    const offline = await SharedKeyDirectory.load(flaky, { ttlMs: 100, onError: (e) => errors.push(e) });
    flaky.down = true;
    // Three re-reads failed (however long the machine takes to get there).
    await waitFor("three failed re-reads", async () => failedReads >= 3 || undefined, 10_000, 10);
    expect(offline.storeUp).toBe(false);
    // Logged once per outage, not once per reload.
    expect(errors).toHaveLength(1);
    expect((await new KeyService(offline).authenticate(secret)).ok).toBe(true);
    dir.close();
    offline.close();
  });
});
