import type { Admission, BucketCheck, LimiterStore, LimitSnapshot } from "./limiter-store";
import { type RedisLink, scriptSha } from "./redis-link";

/**
 * The token buckets of limiter-store.ts, kept in Redis so that every instance draws from the same
 * ones. Each bucket is a hash {l: level, a: last update in ms} that expires once it would be full
 * again (a missing bucket is a full one). Admission checks every bucket and takes from all or
 * none, in one script: one round trip, atomic against every other instance.
 *
 * KEYS: two per check (requests, tokens). ARGV: now, estimate, then rpm and tpm per check (0 = none).
 * Returns per check: requests level, tokens level, refused by (0 none, 1 requests, 2 tokens), wait ms.
 * Levels go back as strings (17 digits, so they round-trip exactly): Redis would truncate a Lua
 * number to an integer.
 */
const ADMIT = `
local function num(x) return string.format('%.17g', x) end
local now = tonumber(ARGV[1])
local est = tonumber(ARGV[2])
local n = (#ARGV - 2) / 2
local function load(key, cap)
  local v = redis.call('HMGET', key, 'l', 'a')
  local level, at = tonumber(v[1]), tonumber(v[2])
  if not level then return cap end
  local dt = now - at
  if dt < 0 then dt = 0 end
  level = level + dt / 60000 * cap
  if level > cap then level = cap end
  return level
end
local function store(key, level, cap)
  redis.call('HSET', key, 'l', num(level), 'a', num(now))
  redis.call('PEXPIRE', key, math.ceil((cap - level) / cap * 60000) + 1000)
end
local rows = {}
local all = true
for i = 1, n do
  local rpm = tonumber(ARGV[1 + 2 * i])
  local tpm = tonumber(ARGV[2 + 2 * i])
  local rl, tl, by, wait = -1, -1, 0, 0
  if rpm > 0 then
    rl = load(KEYS[2 * i - 1], rpm)
    if rl < 1 then by = 1; wait = (1 - rl) / rpm * 60000 end
  end
  if tpm > 0 then
    tl = load(KEYS[2 * i], tpm)
    if tl < 1 then
      local w = (1 - tl) / tpm * 60000
      if w > wait then wait = w; by = 2 end
    end
  end
  if by > 0 then all = false end
  rows[i] = {rpm, tpm, rl, tl, by, wait}
end
local out = {}
for i = 1, n do
  local r = rows[i]
  if all then
    if r[1] > 0 then r[3] = r[3] - 1; store(KEYS[2 * i - 1], r[3], r[1]) end
    if r[2] > 0 then r[4] = r[4] - est; store(KEYS[2 * i], r[4], r[2]) end
  end
  out[i] = {num(r[3]), num(r[4]), r[5], num(r[6])}
end
return out`;

/** KEYS: token buckets. ARGV: now, tokens to take (negative gives back), then tpm per key. */
const SETTLE = `
local function num(x) return string.format('%.17g', x) end
local now = tonumber(ARGV[1])
local diff = tonumber(ARGV[2])
for i = 1, #KEYS do
  local cap = tonumber(ARGV[2 + i])
  local v = redis.call('HMGET', KEYS[i], 'l', 'a')
  local level, at = tonumber(v[1]), tonumber(v[2])
  if not level then level = cap else
    local dt = now - at
    if dt < 0 then dt = 0 end
    level = math.min(cap, level + dt / 60000 * cap)
  end
  level = level - diff
  redis.call('HSET', KEYS[i], 'l', num(level), 'a', num(now))
  redis.call('PEXPIRE', KEYS[i], math.ceil((cap - level) / cap * 60000) + 1000)
end
return 0`;

const ADMIT_SHA = scriptSha(ADMIT);
const SETTLE_SHA = scriptSha(SETTLE);

function snapshot(level: number, capacity: number): LimitSnapshot {
  const resetMs = Math.ceil(((capacity - level) / capacity) * 60_000);
  return { limit: capacity, remaining: Math.max(0, Math.floor(level)), resetMs: Math.max(0, resetMs) };
}

export class RedisLimiterStore implements LimiterStore {
  constructor(
    private readonly link: RedisLink,
    private readonly now: () => number = Date.now,
  ) {}

  /** `{key id}` as a hash tag keeps a key's buckets in one slot of a cluster, so one script may touch them all. */
  private key(bucket: string, kind: "r" | "t"): string {
    const keyId = bucket.split("|")[0];
    return `${this.link.prefix}rl:{${keyId}}${bucket}:${kind}`;
  }

  async admit(checks: readonly BucketCheck[], estimatedTokens: number): Promise<Admission[]> {
    const keys = checks.flatMap((c) => [this.key(c.bucket, "r"), this.key(c.bucket, "t")]);
    const args = [String(this.now()), String(estimatedTokens), ...checks.flatMap((c) => [String(c.limits.rpm ?? 0), String(c.limits.tpm ?? 0)])];
    const rows = (await this.link.script(ADMIT, ADMIT_SHA, keys, args)) as [string, string, number, string][]; // the script's reply shape, above
    return checks.map((c, i) => {
      const [rl, tl, by, wait] = rows[i] ?? ["-1", "-1", 0, "0"];
      const ok = Number(by) === 0;
      return {
        ok,
        retryAfterS: ok ? 0 : Math.max(1, Math.ceil(Number(wait) / 1000)),
        limitedBy: Number(by) === 1 ? "requests" : Number(by) === 2 ? "tokens" : null,
        requests: c.limits.rpm ? snapshot(Number(rl), c.limits.rpm) : null,
        tokens: c.limits.tpm ? snapshot(Number(tl), c.limits.tpm) : null,
      };
    });
  }

  async settle(checks: readonly BucketCheck[], estimatedTokens: number, actualTokens: number): Promise<void> {
    const limited = checks.filter((c) => c.limits.tpm);
    if (limited.length === 0 || actualTokens === estimatedTokens) return;
    const keys = limited.map((c) => this.key(c.bucket, "t"));
    await this.link.script(SETTLE, SETTLE_SHA, keys, [String(this.now()), String(actualTokens - estimatedTokens), ...limited.map((c) => String(c.limits.tpm))]);
  }

  async reset(bucket: string): Promise<void> {
    await this.link.send("DEL", [this.key(bucket, "r"), this.key(bucket, "t")]);
  }
}
