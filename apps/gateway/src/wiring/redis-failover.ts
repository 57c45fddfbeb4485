import { GatewayError } from "@turnpike/providers";
import type { AuthFailureStore } from "../keys/auth-failures";
import type { BucketCheck, LimiterStore } from "../limits/limiter-store";
import type { Admission } from "../vocabulary/admission";
import { RedisDown, type RedisFailMode, type RedisLink } from "../storage/redis-link";
import type { RedisSpendStore } from "../limits/redis-spend-store";
import type { BudgetCheck, MemorySpendStore, Reserved, SpendStore } from "../limits/spend-store";

function refused(): GatewayError {
  return new GatewayError({
    status: 503,
    type: "overloaded_error",
    message: "Rate limits cannot be checked right now (the gateway's Redis is unreachable); retry shortly.",
    headers: { "retry-after": "1" },
  });
}

/**
 * Runs `shared` while Redis is up; when it is down (or goes down during the call), runs `local`
 * in `open` mode and refuses in `closed` mode. Other errors pass through.
 */
async function guarded<T>(
  link: RedisLink,
  mode: RedisFailMode,
  shared: () => Promise<T>,
  local: () => Promise<T>,
): Promise<T> {
  if (link.up) {
    try {
      return await shared();
    } catch (e) {
      if (!(e instanceof RedisDown)) throw e;
    }
  }
  if (mode === "closed") throw refused();
  return local();
}

/** Bookkeeping after the fact (settlements, spend): never refused; kept locally while Redis is away. */
async function recorded(link: RedisLink, shared: () => Promise<void>, local: () => Promise<void>): Promise<void> {
  if (link.up) {
    try {
      return await shared();
    } catch (e) {
      if (!(e instanceof RedisDown)) throw e;
    }
  }
  return local();
}

export class FailoverLimiterStore implements LimiterStore {
  constructor(
    private readonly link: RedisLink,
    private readonly mode: RedisFailMode,
    private readonly shared: LimiterStore,
    private readonly local: LimiterStore,
  ) {}

  admit(checks: readonly BucketCheck[], estimatedTokens: number): Promise<Admission[]> {
    return guarded(
      this.link,
      this.mode,
      () => this.shared.admit(checks, estimatedTokens),
      () => this.local.admit(checks, estimatedTokens),
    );
  }

  settle(checks: readonly BucketCheck[], estimatedTokens: number, actualTokens: number): Promise<void> {
    return recorded(
      this.link,
      () => this.shared.settle(checks, estimatedTokens, actualTokens),
      () => this.local.settle(checks, estimatedTokens, actualTokens),
    );
  }

  async reset(bucket: string): Promise<void> {
    await this.local.reset(bucket);
    await recorded(
      this.link,
      () => this.shared.reset(bucket),
      async () => {},
    );
  }
}

/**
 * Budgets through an outage (site/operations/scale-out.md "Running several instances"): while Redis answers, every
 * reservation and settlement is shared, and the local counters remember the spend Redis last
 * reported for each budget, plus this instance's own settlements. While it is down, admission
 * checks those local counters (raised from the store's totals when the outage begins), so a
 * budget found spent stays refused; a settlement waits in the shared store's queue until Redis
 * answers, so no spend is lost.
 */
export class FailoverSpendStore implements SpendStore {
  constructor(
    private readonly link: RedisLink,
    private readonly mode: RedisFailMode,
    private readonly shared: RedisSpendStore,
    /** Also told every settlement, so that it knows the spend when Redis goes away. */
    private readonly local: MemorySpendStore,
    /** The month's totals per budget from the ledger, read when an outage begins. */
    totals?: () => Promise<Map<string, number>>,
    onError?: (e: unknown) => void,
  ) {
    if (!totals) return;
    link.onState((up) => {
      if (up) return;
      // Admission on local counters waits for this (one query): a budget another instance spent
      // is refused here from the first request of the outage.
      this.raised = totals()
        .then((t) => {
          for (const [id, usd] of t) this.local.atLeast(id, usd);
        })
        .catch((e) => onError?.(e));
    });
  }

  private raised: Promise<void> = Promise.resolve();

  spent(keyId: string): Promise<number> {
    return guarded(
      this.link,
      this.mode,
      () => this.shared.spent(keyId),
      () => this.local.spent(keyId),
    );
  }

  async add(keyId: string, usd: number): Promise<void> {
    await this.settle([keyId], 0, usd, false);
  }

  reserve(checks: readonly BudgetCheck[], usd: number): Promise<Reserved> {
    return guarded(
      this.link,
      this.mode,
      async () => {
        const r = await this.shared.reserve(checks, usd);
        for (const [i, c] of checks.entries()) this.local.atLeast(c.id, r.spent[i] ?? 0);
        return { refusedBy: r.refusedBy, shared: true, ...(r.left === undefined ? {} : { left: r.left }) };
      },
      async () => {
        await this.raised;
        return this.local.reserve(checks, usd);
      },
    );
  }

  /** Both: the shared store gathers settlements and sends them when Redis answers, so none is lost to an outage. */
  async settle(ids: readonly string[], reservedUsd: number, actualUsd: number, shared: boolean): Promise<void> {
    // Each side releases only what it reserved; both count the spend.
    await this.local.settle(ids, shared ? 0 : reservedUsd, actualUsd);
    await this.shared.settle(ids, shared ? reservedUsd : 0, actualUsd);
  }
}

export class FailoverAuthFailures implements AuthFailureStore {
  constructor(
    private readonly link: RedisLink,
    private readonly mode: RedisFailMode,
    private readonly shared: AuthFailureStore,
    private readonly local: AuthFailureStore,
  ) {}

  get active(): boolean {
    return this.link.up ? this.shared.active : this.local.active;
  }

  blockedFor(address: string): Promise<number> {
    return guarded(
      this.link,
      this.mode,
      () => this.shared.blockedFor(address),
      () => this.local.blockedFor(address),
    );
  }

  fail(address: string): Promise<void> {
    return recorded(
      this.link,
      () => this.shared.fail(address),
      () => this.local.fail(address),
    );
  }
}
