import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type BucketCheck, type LimiterStore, MemoryLimiterStore } from "../../src/limits/limiter-store";
import type { Admission } from "../../src/vocabulary/admission";
import { RedisLimiterStore } from "../../src/limits/redis-limiter-store";
import { RedisLink } from "../../src/storage/redis-link";
import { freshPrefix, redisUp, TEST_REDIS_URL } from "./servers";

function clock(start = Date.parse("2026-11-22T10:00:00Z")) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

/** A script of admissions, settlements and clock steps; what each admission answered. */
async function play(make: (now: () => number) => LimiterStore): Promise<Admission[][]> {
  const c = clock();
  const l = make(c.now);
  const key: BucketCheck = { bucket: "key_x", limits: { rpm: 5, tpm: 1000 } };
  const model: BucketCheck = { bucket: "key_x|gamma-3-pro", limits: { rpm: 2, tpm: null } };
  const out: Admission[][] = [];
  out.push(await l.admit([key], 100));
  await l.settle([key], 100, 700);
  out.push(await l.admit([key, model], 100));
  out.push(await l.admit([key, model], 100));
  // The model's bucket refuses: the key's loses nothing.
  out.push(await l.admit([key, model], 100));
  out.push(await l.admit([key], 50));
  c.advance(7_000);
  out.push(await l.admit([key], 50));
  await l.settle([key, model], 50, 400);
  c.advance(20_000);
  out.push(await l.admit([key], 10));
  await l.reset("key_x");
  out.push(await l.admit([key, model], 10));
  c.advance(120_000);
  out.push(await l.admit([key, model], 10));
  return out;
}

let link: RedisLink;
let second: RedisLink;
let drop: () => Promise<void> = async () => {};
describe.skipIf(!redisUp)("Redis limiter", () => {
  beforeAll(async () => {
    const p = freshPrefix();
    drop = p.drop;
    link = new RedisLink(TEST_REDIS_URL, p.prefix);
    second = new RedisLink(TEST_REDIS_URL, p.prefix);
    await link.start();
    await second.start();
  });
  afterAll(async () => {
    link.close();
    second.close();
    await drop();
  });

  test("answers exactly what the in-process limiter answers: levels, refusals, waits, headers' numbers", async () => {
    const memory = await play((now) => new MemoryLimiterStore(now));
    const redis = await play((now) => new RedisLimiterStore(link, now));
    expect(redis).toEqual(memory);
    // The script itself did something: the model's limit refused the fourth.
    expect(memory[3]!.map((a) => a.ok)).toEqual([true, false]);
    expect(memory[3]![1]!.retryAfterS).toBe(30);
  });

  test("rpm 10 over two connections, 40 concurrent admissions: exactly 10 admitted", async () => {
    const a = new RedisLimiterStore(link);
    const b = new RedisLimiterStore(second);
    const check: BucketCheck = { bucket: "key_conc", limits: { rpm: 10, tpm: null } };
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).admit([check], 5)));
    expect(results.filter(([r]) => r!.ok)).toHaveLength(10);
    expect(results.filter(([r]) => !r!.ok).every(([r]) => r!.limitedBy === "requests" && r!.retryAfterS === 6)).toBe(
      true,
    );
  });

  test("tpm shared: a settlement on one instance is seen by the other's next admission", async () => {
    const a = new RedisLimiterStore(link);
    const b = new RedisLimiterStore(second);
    const check: BucketCheck = { bucket: "key_tpm", limits: { rpm: null, tpm: 1000 } };
    expect((await a.admit([check], 100))[0]!.tokens!.remaining).toBe(900);
    await a.settle([check], 100, 1200);
    const [refused] = await b.admit([check], 100);
    expect(refused!.ok).toBe(false);
    expect(refused!.limitedBy).toBe("tokens");
  });
});
