import type { AuthFailureStore } from "./auth-failures";
import { type RedisLink, scriptSha } from "../storage/redis-link";

/** KEYS: the address's counter, the "someone failed lately" marker. ARGV: window ms. */
const FAIL = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[1])
return n`;
/** KEYS: the address's counter. ARGV: the failures that lock it out. Returns the ms left locked, or 0. */
const BLOCKED = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n < tonumber(ARGV[1]) then return 0 end
return redis.call('PTTL', KEYS[1])`;
const FAIL_SHA = scriptSha(FAIL);
const BLOCKED_SHA = scriptSha(BLOCKED);

/**
 * Failed authentications per client address, counted in Redis so that a guesser spreading tries
 * over every instance meets one limit. The window starts at an address's first failure (the
 * counter's expiry), as in the in-process store. `active` is read from a marker any failure sets,
 * polled once a second, so that instances skip the lookup while nobody has failed.
 */
export class RedisAuthFailures implements AuthFailureStore {
  private seen = false;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly link: RedisLink,
    private readonly maxFailures = 30,
    private readonly windowMs = 60_000,
  ) {
    this.timer = setInterval(() => {
      this.link
        .send("EXISTS", [this.marker])
        .then((n) => {
          this.seen = Number(n) > 0;
        })
        .catch(() => {});
    }, 1000);
    this.timer.unref?.();
  }

  private get marker(): string {
    return `${this.link.prefix}af:recent`;
  }

  get active(): boolean {
    return this.seen;
  }

  async blockedFor(address: string): Promise<number> {
    const ms = Number(
      await this.link.script(BLOCKED, BLOCKED_SHA, [`${this.link.prefix}af:${address}`], [String(this.maxFailures)]),
    );
    return ms > 0 ? Math.ceil(ms / 1000) : 0;
  }

  async fail(address: string): Promise<void> {
    this.seen = true;
    await this.link.script(FAIL, FAIL_SHA, [`${this.link.prefix}af:${address}`, this.marker], [String(this.windowMs)]);
  }

  close(): void {
    clearInterval(this.timer);
  }
}
