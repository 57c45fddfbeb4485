import type { BucketCheck, LimiterStore } from "./limiter-store";
import type { Admission, LimitSnapshot } from "../vocabulary/admission";
import { type RedisLink, scriptSha } from "../storage/redis-link";

/**
 * The token buckets of limiter-store.ts, kept in Redis so that every instance draws from the same
 * ones. A limited subject is one hash {r, ra, t, ta}: its requests and tokens levels and when each
 * was last updated (ms); it expires once both would be full again (a missing level is a full
 * one). The arithmetic is the in-process limiter's, step for step (test/scaleout/redis-limiter.test.ts
 * compares them).
 *
 * The admissions of one key that arrive in the same turn of the event loop go to Redis as one
 * script call, which admits them one after the other, each to all its subjects or none: one round
 * trip, atomic against every other instance. Settlements of the same turn ride in the same call.
 *
 * KEYS: the subjects. ARGV: now; the number of settlements, then per settlement the subject's
 * index in KEYS, the tokens to take (negative gives back) and its tpm; the number of requests,
 * then per request its estimate and number of checks, and per check the subject's index, rpm and
 * tpm (0 = none). Settlements are applied first, so the admissions see the tokens already used.
 * Returns per request one string, per check "requests-level tokens-level refused-by wait-ms"
 * (refused-by: 0 none, 1 requests, 2 tokens), checks separated by ";". Numbers go back as text
 * with 17 digits, so they round-trip exactly (Redis would truncate a Lua number to an integer).
 */
const ADMIT = `
local function num(x) return string.format('%.17g', x) end
local now = tonumber(ARGV[1])
local state = {}
local function get(k)
  local s = state[k]
  if not s then
    local v = redis.call('HMGET', KEYS[k], 'r', 'ra', 't', 'ta')
    s = {r = v[1], ra = v[2], t = v[3], ta = v[4], dirty = false, tcap = 0}
    state[k] = s
  end
  return s
end
local function refill(level, at, cap)
  if not level then return cap end
  local dt = now - tonumber(at)
  if dt < 0 then dt = 0 end
  level = tonumber(level) + dt / 60000 * cap
  if level > cap then level = cap end
  return level
end
local p = 3
for j = 1, tonumber(ARGV[2]) do
  local k, diff, tpm = tonumber(ARGV[p]), tonumber(ARGV[p + 1]), tonumber(ARGV[p + 2])
  p = p + 3
  local s = get(k)
  s.t = refill(s.t, s.ta, tpm) - diff
  s.ta = now
  s.dirty = true
  s.tcap = tpm
end
local out = {}
local nreq = tonumber(ARGV[p])
p = p + 1
for q = 1, nreq do
  local est = tonumber(ARGV[p])
  local n = tonumber(ARGV[p + 1])
  p = p + 2
  local rows = {}
  local all = true
  for i = 1, n do
    local k, rpm, tpm = tonumber(ARGV[p]), tonumber(ARGV[p + 1]), tonumber(ARGV[p + 2])
    p = p + 3
    local s = get(k)
    local rl, tl, by, wait = -1, -1, 0, 0
    if rpm > 0 then
      rl = refill(s.r, s.ra, rpm)
      if rl < 1 then by = 1; wait = (1 - rl) / rpm * 60000 end
    end
    if tpm > 0 then
      tl = refill(s.t, s.ta, tpm)
      if tl < 1 then
        local w = (1 - tl) / tpm * 60000
        if w > wait then wait = w; by = 2 end
      end
    end
    if by > 0 then all = false end
    rows[i] = {s, rpm, tpm, rl, tl, by, wait}
  end
  local parts = {}
  for i = 1, n do
    local r = rows[i]
    if all then
      local s = r[1]
      if r[2] > 0 then r[4] = r[4] - 1; s.r = r[4]; s.ra = now; s.dirty = true end
      if r[3] > 0 then r[5] = r[5] - est; s.t = r[5]; s.ta = now; s.dirty = true; s.tcap = r[3] end
    end
    parts[i] = num(r[4]) .. ' ' .. num(r[5]) .. ' ' .. r[6] .. ' ' .. num(r[7])
  end
  out[q] = table.concat(parts, ';')
end
for k, s in pairs(state) do
  if s.dirty then
    local ttl = 60000
    if s.r then redis.call('HSET', KEYS[k], 'r', num(tonumber(s.r)), 'ra', num(tonumber(s.ra))) end
    if s.t then
      redis.call('HSET', KEYS[k], 't', num(tonumber(s.t)), 'ta', num(tonumber(s.ta)))
      if s.tcap > 0 then ttl = math.max(ttl, math.ceil((s.tcap - tonumber(s.t)) / s.tcap * 60000)) end
    end
    redis.call('PEXPIRE', KEYS[k], ttl + 1000)
  end
end
return out`;

const ADMIT_SHA = scriptSha(ADMIT);

function snapshot(level: number, capacity: number): LimitSnapshot {
  const resetMs = Math.ceil(((capacity - level) / capacity) * 60_000);
  return { limit: capacity, remaining: Math.max(0, Math.floor(level)), resetMs: Math.max(0, resetMs) };
}

interface Waiting {
  checks: readonly BucketCheck[];
  estimate: number;
  resolve: (a: Admission[]) => void;
  reject: (e: unknown) => void;
}

function admission(c: BucketCheck, row: string | undefined): Admission {
  const [rl = -1, tl = -1, by = 0, wait = 0] = (row ?? "").split(" ").map(Number);
  const ok = by === 0;
  return {
    ok,
    retryAfterS: ok ? 0 : Math.max(1, Math.ceil(wait / 1000)),
    limitedBy: by === 1 ? "requests" : by === 2 ? "tokens" : null,
    requests: c.limits.rpm ? snapshot(rl, c.limits.rpm) : null,
    tokens: c.limits.tpm ? snapshot(tl, c.limits.tpm) : null,
  };
}

export class RedisLimiterStore implements LimiterStore {
  /** Admissions waiting for this turn's script call, by key id. */
  private admits = new Map<string, Waiting[]>();
  /** Token settlements gathered this turn, by key id, then subject: tokens to take and the tpm. */
  private settles = new Map<
    string,
    Map<string, { diff: number; tpm: number; done: (() => void)[]; fail: ((e: unknown) => void)[] }>
  >();
  private scheduled = false;

  constructor(
    private readonly link: RedisLink,
    private readonly now: () => number = Date.now,
  ) {}

  /** `{key id}` as a hash tag keeps a key's subjects in one slot of a cluster, so one script may touch them all. */
  private key(bucket: string): string {
    return `${this.link.prefix}rl:{${keyOf(bucket)}}${bucket}`;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** One script call per key id with anything pending: its settlements, then its admissions. */
  private flush(): void {
    this.scheduled = false;
    const admits = this.admits;
    const settles = this.settles;
    this.admits = new Map();
    this.settles = new Map();
    const now = String(this.now());
    for (const id of new Set([...settles.keys(), ...admits.keys()])) {
      const subjects = settles.get(id);
      const waiting = admits.get(id) ?? [];
      const index = new Map<string, number>();
      const keys: string[] = [];
      const at = (bucket: string) => {
        let i = index.get(bucket);
        if (i === undefined) {
          keys.push(this.key(bucket));
          i = keys.length;
          index.set(bucket, i);
        }
        return String(i);
      };
      const args = [now, String(subjects?.size ?? 0)];
      for (const [bucket, st] of subjects ?? []) args.push(at(bucket), String(st.diff), String(st.tpm));
      args.push(String(waiting.length));
      for (const w of waiting) {
        args.push(String(w.estimate), String(w.checks.length));
        for (const c of w.checks) args.push(at(c.bucket), String(c.limits.rpm ?? 0), String(c.limits.tpm ?? 0));
      }
      this.link.script(ADMIT, ADMIT_SHA, keys, args).then(
        (reply) => {
          for (const st of subjects?.values() ?? []) for (const d of st.done) d();
          const rows = reply as string[]; // the script's reply: one string per request, described above
          waiting.forEach((w, q) => {
            const parts = (rows[q] ?? "").split(";");
            w.resolve(w.checks.map((c, i) => admission(c, parts[i])));
          });
        },
        (e) => {
          for (const st of subjects?.values() ?? []) for (const f of st.fail) f(e);
          for (const w of waiting) w.reject(e);
        },
      );
    }
  }

  admit(checks: readonly BucketCheck[], estimatedTokens: number): Promise<Admission[]> {
    if (checks.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const id = keyOf(checks[0]!.bucket);
      let list = this.admits.get(id);
      if (!list) this.admits.set(id, (list = []));
      list.push({ checks, estimate: estimatedTokens, resolve, reject });
      this.schedule();
    });
  }

  settle(checks: readonly BucketCheck[], estimatedTokens: number, actualTokens: number): Promise<void> {
    const limited = checks.filter((c) => c.limits.tpm);
    if (limited.length === 0 || actualTokens === estimatedTokens) return Promise.resolve();
    return new Promise((resolve, reject) => {
      let pending = limited.length;
      const done = () => {
        if (--pending === 0) resolve();
      };
      for (const c of limited) {
        const id = keyOf(c.bucket);
        let subjects = this.settles.get(id);
        if (!subjects) this.settles.set(id, (subjects = new Map()));
        const s = subjects.get(c.bucket);
        // tpm is set: filtered above.
        if (s) {
          s.diff += actualTokens - estimatedTokens;
          s.tpm = c.limits.tpm as number;
          s.done.push(done);
          s.fail.push(reject);
        } else
          subjects.set(c.bucket, {
            diff: actualTokens - estimatedTokens,
            tpm: c.limits.tpm as number,
            done: [done],
            fail: [reject],
          });
      }
      this.schedule();
    });
  }

  async reset(bucket: string): Promise<void> {
    await this.link.send("DEL", [this.key(bucket)]);
  }
}

/** The key id of a subject (`key_x` or `key_x|model`). */
function keyOf(bucket: string): string {
  const bar = bucket.indexOf("|");
  return bar < 0 ? bucket : bucket.slice(0, bar);
}
