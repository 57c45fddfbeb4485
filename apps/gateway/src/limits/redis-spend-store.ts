import { type RedisLink, scriptSha } from "../storage/redis-link";
import { monthStart } from "./spend-store";
import type { SpendStore } from "./spend-store";
import type { Store } from "../storage/store";

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
 * a float counter per key. Adds are gathered for `batchMs` and sent as one increment per key (a
 * busy key costs Redis one command per interval, not one per request); this instance counts its
 * own unsent adds in what it reads, others see them after at most `batchMs`. A month with no
 * counters yet (the first instance of the month, or a Redis that lost its data) is seeded from the
 * ledger.
 */
export class RedisSpendStore implements SpendStore {
  /** Adds not yet sent, by month hash and key id. */
  private unsent = new Map<string, Map<string, number>>();
  /** Adds sent and not yet acknowledged, by `hash\nkey id`. */
  private readonly inflight = new Map<string, number>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly link: RedisLink,
    private readonly store: Pick<Store, "spendSince">,
    private readonly now: () => number = Date.now,
    private readonly batchMs = 50,
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
    const hash = this.hash(month);
    return Number(value ?? 0) + (this.unsent.get(hash)?.get(keyId) ?? 0) + (this.inflight.get(`${hash}\n${keyId}`) ?? 0);
  }

  async add(keyId: string, usd: number): Promise<void> {
    if (usd === 0) return;
    this.gather(this.hash(monthStart(this.now())), keyId, usd);
    this.timer ??= setTimeout(() => void this.send(), this.batchMs);
  }

  private gather(hash: string, keyId: string, usd: number): void {
    let keys = this.unsent.get(hash);
    if (!keys) this.unsent.set(hash, (keys = new Map()));
    keys.set(keyId, (keys.get(keyId) ?? 0) + usd);
  }

  /**
   * Sends the gathered adds. An amount in flight stays counted here until Redis has taken it (it
   * is taken off before any later read on the same connection answers), so this instance's reads
   * never miss it nor count it twice; what Redis did not take is sent again next round.
   */
  async send(): Promise<void> {
    this.timer = undefined;
    const batch = this.unsent;
    this.unsent = new Map();
    const sends: Promise<unknown>[] = [];
    for (const [hash, keys] of batch) {
      for (const [keyId, usd] of keys) {
        const field = `${hash}\n${keyId}`;
        this.inflight.set(field, (this.inflight.get(field) ?? 0) + usd);
        const settle = () => {
          const left = (this.inflight.get(field) ?? 0) - usd;
          if (Math.abs(left) < 1e-15) this.inflight.delete(field);
          else this.inflight.set(field, left);
        };
        sends.push(
          this.link.send("HINCRBYFLOAT", [hash, keyId, String(usd)]).then(settle, () => {
            settle();
            this.gather(hash, keyId, usd);
          }),
        );
      }
    }
    await Promise.all(sends);
    if (this.unsent.size && !this.timer) this.timer = setTimeout(() => void this.send(), Math.max(this.batchMs, 500));
  }

  close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    return this.send();
  }
}
