import { type RedisLink, scriptSha } from "../storage/redis-link";
import { monthStart } from "./spend-store";
import type { BudgetCheck, Reserved, SpendStore } from "./spend-store";
import type { Store } from "../storage/store";

/**
 * Seeds a month's counters from the ledger, once: each field becomes the larger of what Redis
 * has and what the ledger says (both undercount at worst: the ledger by records still in a
 * journal, Redis by adds made while it was away), and the marker records that it was done. The
 * marker's `:2` came with the teams' counters (`team:<id>`): a month seeded by a build without them
 * is seeded once more, which only raises fields to the ledger's sums, so nothing counts twice.
 * KEYS[1]: the month's hash. ARGV: expiry ms, then key id and spend pairs.
 */
const SEED = `
if redis.call('HEXISTS', KEYS[1], '~seeded:2') == 1 then return 0 end
for i = 2, #ARGV, 2 do
  local have = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0')
  if tonumber(ARGV[i + 1]) > have then redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
redis.call('HSET', KEYS[1], '~seeded:2', '1')
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`;
const SEED_SHA = scriptSha(SEED);

/**
 * Admission's one atomic step (docs/design.md, step 4 "admit"): every budget must have room for
 * the request's worst case (its spend plus its reservations below the budget, and the worst case
 * within what is left: spend-store.ts `hasRoom`), and then the worst case is reserved on each.
 * A month not yet seeded answers -2 (the caller seeds it and asks again). Reservations of a
 * budget are the field `~r:<id>` beside its spend.
 * KEYS[1]: the month's hash. ARGV: the amount, then id and budget pairs.
 * Answers the refusing pair's index (0-based) or -1, then each budget's spend as text, then what
 * the refusing budget had left (as text; 0 when none refused).
 */
const RESERVE = `
if redis.call('HEXISTS', KEYS[1], '~seeded:2') == 0 then return {-2} end
local usd = tonumber(ARGV[1])
local out = {-1}
local left = 0
for i = 2, #ARGV, 2 do
  local spent = redis.call('HGET', KEYS[1], ARGV[i]) or '0'
  local held = tonumber(redis.call('HGET', KEYS[1], '~r:' .. ARGV[i]) or '0')
  local used = tonumber(spent) + held
  local budget = tonumber(ARGV[i + 1])
  out[#out + 1] = spent
  if out[1] == -1 and (used >= budget or used + usd > budget + 1e-9) then
    out[1] = (i - 2) / 2
    left = math.max(0, budget - used)
  end
end
if out[1] == -1 and usd > 0 then
  for i = 2, #ARGV, 2 do redis.call('HINCRBYFLOAT', KEYS[1], '~r:' .. ARGV[i], ARGV[1]) end
end
out[#out + 1] = tostring(left)
return out`;
const RESERVE_SHA = scriptSha(RESERVE);

/**
 * Settlements, many at once: each adds what was spent and releases what was reserved, in the
 * same step, so that other instances never see a request counted neither as reserved nor as
 * spent. A reservation never goes below zero (one made before Redis lost its data is gone).
 * KEYS[1]: the month's hash. ARGV: id, spent, released triples.
 */
const SETTLE = `
for i = 1, #ARGV, 3 do
  if tonumber(ARGV[i + 1]) ~= 0 then redis.call('HINCRBYFLOAT', KEYS[1], ARGV[i], ARGV[i + 1]) end
  if tonumber(ARGV[i + 2]) ~= 0 then
    local f = '~r:' .. ARGV[i]
    if tonumber(redis.call('HINCRBYFLOAT', KEYS[1], f, '-' .. ARGV[i + 2])) < 1e-9 then redis.call('HDEL', KEYS[1], f) end
  end
end
return 1`;
const SETTLE_SHA = scriptSha(SETTLE);

/** Spent and released by one budget, gathered until sent. */
interface Pending {
  spent: number;
  released: number;
}

/** Budgets kept for a month past its end, then dropped by Redis itself. */
const KEEP_MS = 40 * 86_400_000;

/**
 * Monthly spend per key and per team in Redis, shared by every instance: one hash per calendar month (UTC),
 * a float counter per key and the sum of its reservations. Reservations are taken at once, in
 * one script call per admission; settlements are gathered for `batchMs` and sent as one script
 * call per month (a busy key costs Redis one call per interval, not one per request). Until a
 * settlement is sent its reservation stays counted, so nothing a request may spend is ever
 * invisible to another instance. A month with no counters yet (the first instance of the month,
 * or a Redis that lost its data) is seeded from the ledger.
 */
export class RedisSpendStore implements SpendStore {
  /** Settlements not yet sent, by month hash and key id. */
  private unsent = new Map<string, Map<string, Pending>>();
  /** Spend sent and not yet acknowledged, by `hash\nkey id`. */
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
    await this.link.script(
      SEED,
      SEED_SHA,
      [this.hash(month)],
      [String(KEEP_MS), ...[...spend].flatMap(([k, v]) => [k, String(v)])],
    );
  }

  async spent(keyId: string): Promise<number> {
    const month = monthStart(this.now());
    let [value, seeded] = (await this.link.send("HMGET", [this.hash(month), keyId, "~seeded:2"])) as (string | null)[]; // HMGET's reply: one value or null per field
    if (seeded === null) {
      await this.seed(month);
      [value] = (await this.link.send("HMGET", [this.hash(month), keyId])) as (string | null)[]; // as above
    }
    const hash = this.hash(month);
    return (
      Number(value ?? 0) +
      (this.unsent.get(hash)?.get(keyId)?.spent ?? 0) +
      (this.inflight.get(`${hash}\n${keyId}`) ?? 0)
    );
  }

  async add(keyId: string, usd: number): Promise<void> {
    return this.settle([keyId], 0, usd);
  }

  /** Answers the spend of each budget too, so that the caller remembers it for an outage. */
  async reserve(checks: readonly BudgetCheck[], usd: number): Promise<Reserved & { spent: number[] }> {
    const month = monthStart(this.now());
    const args = [String(usd), ...checks.flatMap((c) => [c.id, String(c.budget)])];
    let out = (await this.link.script(RESERVE, RESERVE_SHA, [this.hash(month)], args)) as (number | string)[]; // the script's reply: index, then spends
    if (out[0] === -2) {
      await this.seed(month);
      out = (await this.link.script(RESERVE, RESERVE_SHA, [this.hash(month)], args)) as (number | string)[]; // as above
    }
    const refusedBy = Number(out[0]);
    return {
      refusedBy,
      shared: true,
      spent: out.slice(1, 1 + checks.length).map(Number),
      ...(refusedBy === -1 ? {} : { left: Number(out[1 + checks.length]) }),
    };
  }

  async settle(ids: readonly string[], reservedUsd: number, actualUsd: number): Promise<void> {
    if (reservedUsd === 0 && actualUsd === 0) return;
    const hash = this.hash(monthStart(this.now()));
    for (const id of ids) this.gather(hash, id, { spent: actualUsd, released: reservedUsd });
    this.timer ??= setTimeout(() => void this.send(), this.batchMs);
  }

  private gather(hash: string, keyId: string, p: Pending): void {
    let keys = this.unsent.get(hash);
    if (!keys) this.unsent.set(hash, (keys = new Map()));
    const had = keys.get(keyId);
    if (had) {
      had.spent += p.spent;
      had.released += p.released;
    } else keys.set(keyId, { ...p });
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
      const args: string[] = [];
      for (const [keyId, p] of keys) {
        const field = `${hash}\n${keyId}`;
        this.inflight.set(field, (this.inflight.get(field) ?? 0) + p.spent);
        args.push(keyId, String(p.spent), String(p.released));
      }
      const acknowledged = () => {
        for (const [keyId, p] of keys) {
          const field = `${hash}\n${keyId}`;
          const left = (this.inflight.get(field) ?? 0) - p.spent;
          if (Math.abs(left) < 1e-15) this.inflight.delete(field);
          else this.inflight.set(field, left);
        }
      };
      sends.push(
        this.link.script(SETTLE, SETTLE_SHA, [hash], args).then(acknowledged, () => {
          acknowledged();
          for (const [keyId, p] of keys) this.gather(hash, keyId, p);
        }),
      );
    }
    await Promise.all(sends);
    if (this.unsent.size && !this.timer) this.timer = setTimeout(() => void this.send(), Math.max(this.batchMs, 500));
  }

  close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    return this.send();
  }
}
