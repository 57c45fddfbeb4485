import { type RedisLink, scriptSha } from "./redis-link";
import { monthStart } from "./spend-store";
import type { SpendStore } from "./spend-store";
import type { Store } from "./store";

/**
 * Seeds a month's counters from the ledger, once: each field becomes the larger of what Redis
 * has and what the ledger says (both undercount at worst: the ledger by records still in a
 * journal, Redis by adds made while it was away), and the marker records that it was done.
 * KEYS[1]: the month's hash. ARGV: expiry ms, then key id and spend pairs.
 */
const SEED = `
if redis.call('HEXISTS', KEYS[1], '~seeded') == 1 then return 0 end
for i = 2, #ARGV, 2 do
  local have = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0')
  if tonumber(ARGV[i + 1]) > have then redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
redis.call('HSET', KEYS[1], '~seeded', '1')
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`;
const SEED_SHA = scriptSha(SEED);

/** Budgets kept for a month past its end, then dropped by Redis itself. */
const KEEP_MS = 40 * 86_400_000;

/**
 * Monthly spend per key in Redis, shared by every instance: one hash per calendar month (UTC),
 * a float counter per key added to as each usage record is made. A month with no counters yet
 * (the first instance of the month, or a Redis that lost its data) is seeded from the ledger.
 */
export class RedisSpendStore implements SpendStore {
  constructor(
    private readonly link: RedisLink,
    private readonly store: Pick<Store, "spendSince">,
    private readonly now: () => number = Date.now,
  ) {}

  private hash(month: string): string {
    return `${this.link.prefix}spend:${month}`;
  }

  /** Seeds the current month if no instance has. */
  async seed(month = monthStart(this.now())): Promise<void> {
    const spend = await this.store.spendSince(month);
    await this.link.script(SEED, SEED_SHA, [this.hash(month)], [String(KEEP_MS), ...[...spend].flatMap(([k, v]) => [k, String(v)])]);
  }

  async spent(keyId: string): Promise<number> {
    const month = monthStart(this.now());
    let [value, seeded] = (await this.link.send("HMGET", [this.hash(month), keyId, "~seeded"])) as (string | null)[]; // HMGET's reply: one value or null per field
    if (seeded === null) {
      await this.seed(month);
      [value] = (await this.link.send("HMGET", [this.hash(month), keyId])) as (string | null)[]; // as above
    }
    return Number(value ?? 0);
  }

  async add(keyId: string, usd: number): Promise<void> {
    if (usd === 0) return;
    await this.link.send("HINCRBYFLOAT", [this.hash(monthStart(this.now())), keyId, String(usd)]);
  }
}
