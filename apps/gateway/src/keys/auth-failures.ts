/**
 * Failed authentication attempts per client address: after `maxFailures` within a window the
 * address is refused (429) without its key being checked, until the window has passed. Slows
 * down key guessing without touching well-behaved clients. Async so that a shared counter can
 * stand behind the same callers.
 */
export interface AuthFailureStore {
  /** Has any address failed lately? (When none has, callers need not look up their address.) */
  readonly active: boolean;
  /** Seconds to wait if this address is locked out, else 0. */
  blockedFor(address: string): Promise<number>;
  fail(address: string): Promise<void>;
}

/** The in-process failure counters (bounded: the oldest addresses go first). */
export class MemoryAuthFailures implements AuthFailureStore {
  private readonly failures = new Map<string, { count: number; since: number }>();

  constructor(
    private readonly maxFailures = 30,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  get active(): boolean {
    return this.failures.size > 0;
  }

  blockedFor(address: string): Promise<number> {
    const f = this.failures.get(address);
    if (!f) return Promise.resolve(0);
    const elapsed = this.now() - f.since;
    if (elapsed >= this.windowMs) {
      this.failures.delete(address);
      return Promise.resolve(0);
    }
    return Promise.resolve(f.count >= this.maxFailures ? Math.ceil((this.windowMs - elapsed) / 1000) : 0);
  }

  fail(address: string): Promise<void> {
    const t = this.now();
    const f = this.failures.get(address);
    if (!f || t - f.since >= this.windowMs) this.failures.set(address, { count: 1, since: t });
    else f.count++;
    // Bounded memory under a spray of addresses: drop the oldest entries.
    if (this.failures.size > 100_000) {
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
    return Promise.resolve();
  }
}
