import type { Admission, LimitSnapshot } from "../vocabulary/admission";
/**
 * Per-key rate limits: requests per minute and tokens per minute, each a token bucket that
 * refills continuously (capacity = the per-minute limit). Requests are admitted while their
 * bucket holds at least one unit; the token bucket is charged an estimate of the input up front
 * and settled with the real usage afterwards, so it may go into debt — the next requests then
 * wait until it refills. Pure: the clock is injected.
 */

export interface Limits {
  rpm: number | null;
  tpm: number | null;
}

interface Bucket {
  level: number;
  at: number;
}

/** One limited subject (a key, or a key and a model) and its limits. */
export interface BucketCheck {
  bucket: string;
  limits: Limits;
}

/**
 * Where rate-limit buckets live. Async so that a shared implementation (one round trip per
 * admission and one per settlement) fits behind the same callers.
 */
export interface LimiterStore {
  /**
   * Admits one request of `estimatedTokens` against every bucket at once, or none: if any bucket
   * refuses, nothing is taken from the others. One admission per check, in order.
   */
  admit(checks: readonly BucketCheck[], estimatedTokens: number): Promise<Admission[]>;
  /** The same, at once, for a store held in this process (no promise on the hot path). */
  admitNow?(checks: readonly BucketCheck[], estimatedTokens: number): Admission[];
  /** {@link settle} at once, for a store held in this process. */
  settleNow?(checks: readonly BucketCheck[], estimatedTokens: number, actualTokens: number): void;
  /** Charges the difference between the real token count and the estimate admitted. */
  settle(checks: readonly BucketCheck[], estimatedTokens: number, actualTokens: number): Promise<void>;
  /** Forgets a bucket (after its limits change): it starts full. */
  reset(bucket: string): Promise<void>;
}

/** The in-process limiter: the token-bucket arithmetic, synchronous inside. */
export class MemoryLimiterStore implements LimiterStore {
  readonly buckets: RateLimiter;

  constructor(now: () => number = Date.now) {
    this.buckets = new RateLimiter(now);
  }

  admit(checks: readonly BucketCheck[], estimatedTokens: number): Promise<Admission[]> {
    return Promise.resolve(this.admitNow(checks, estimatedTokens));
  }

  admitNow(checks: readonly BucketCheck[], estimatedTokens: number): Admission[] {
    // One bucket needs no dry run: its own check is all-or-nothing.
    if (checks.length === 1) return [this.buckets.admit(checks[0]!.bucket, checks[0]!.limits, estimatedTokens)];
    const probes = checks.map((c) => this.buckets.admit(c.bucket, c.limits, estimatedTokens, false));
    if (probes.some((p) => !p.ok)) return probes;
    return checks.map((c) => this.buckets.admit(c.bucket, c.limits, estimatedTokens));
  }

  settle(checks: readonly BucketCheck[], estimatedTokens: number, actualTokens: number): Promise<void> {
    this.settleNow(checks, estimatedTokens, actualTokens);
    return Promise.resolve();
  }

  settleNow(checks: readonly BucketCheck[], estimatedTokens: number, actualTokens: number): void {
    for (const c of checks) this.buckets.settle(c.bucket, c.limits, estimatedTokens, actualTokens);
  }

  reset(bucket: string): Promise<void> {
    this.buckets.reset(bucket);
    return Promise.resolve();
  }
}

/** Token buckets in one process's memory. Pure: the clock is injected. */
export class RateLimiter {
  /** A key's request and token buckets, each by the key's id (no name built per request). */
  private readonly requestBuckets = new Map<string, Bucket>();
  private readonly tokenBuckets = new Map<string, Bucket>();

  constructor(private readonly now: () => number = Date.now) {}

  private bucket(buckets: Map<string, Bucket>, id: string, capacity: number, t: number): Bucket {
    let b = buckets.get(id);
    if (!b) {
      b = { level: capacity, at: t };
      buckets.set(id, b);
      return b;
    }
    const refill = ((t - b.at) / 60_000) * capacity;
    b.level = Math.min(capacity, b.level + refill);
    b.at = t;
    return b;
  }

  private snapshot(b: Bucket, capacity: number): LimitSnapshot {
    const remaining = Math.max(0, Math.floor(b.level));
    const resetMs = Math.ceil(((capacity - b.level) / capacity) * 60_000);
    return { limit: capacity, remaining, resetMs: Math.max(0, resetMs) };
  }

  /**
   * Admits one request of `estimatedTokens` for key `id`, or says how long to wait. With `take`
   * false it only says whether it would (nothing is taken).
   */
  admit(id: string, limits: Limits, estimatedTokens: number, take = true): Admission {
    const t = this.now();
    const rb = limits.rpm ? this.bucket(this.requestBuckets, id, limits.rpm, t) : null;
    const tb = limits.tpm ? this.bucket(this.tokenBuckets, id, limits.tpm, t) : null;
    let limitedBy: Admission["limitedBy"] = null;
    let waitMs = 0;
    if (rb && limits.rpm && rb.level < 1) {
      limitedBy = "requests";
      waitMs = ((1 - rb.level) / limits.rpm) * 60_000;
    }
    if (tb && limits.tpm && tb.level < 1) {
      const w = ((1 - tb.level) / limits.tpm) * 60_000;
      if (w > waitMs) {
        waitMs = w;
        limitedBy = "tokens";
      }
    }
    if (limitedBy === null && take) {
      if (rb) rb.level -= 1;
      if (tb) tb.level -= estimatedTokens;
    }
    return {
      ok: limitedBy === null,
      retryAfterS: limitedBy === null ? 0 : Math.max(1, Math.ceil(waitMs / 1000)),
      limitedBy,
      requests: rb && limits.rpm ? this.snapshot(rb, limits.rpm) : null,
      tokens: tb && limits.tpm ? this.snapshot(tb, limits.tpm) : null,
    };
  }

  /** Charges the difference between the real token count and the estimate admitted. */
  settle(id: string, limits: Limits, estimatedTokens: number, actualTokens: number): void {
    if (!limits.tpm) return;
    const b = this.bucket(this.tokenBuckets, id, limits.tpm, this.now());
    b.level -= actualTokens - estimatedTokens;
  }

  /** Forgets a key's buckets (after its limits change). */
  reset(id: string): void {
    this.requestBuckets.delete(id);
    this.tokenBuckets.delete(id);
  }
}
