import type { Store } from "../storage/store";

/** `2026-11-01T00:00:00.000Z` for any instant in November 2026 (UTC). */
export function monthStart(ms: number): string {
  const d = new Date(ms);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)).toISOString();
}

/** When the month of `ms` ends and the next budget period starts (UTC). */
export function nextMonthStart(ms: number): string {
  const d = new Date(ms);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString();
}

/** One budget a request is held against: a key's or its team's, by the id its spend is kept under. */
export interface BudgetCheck {
  id: string;
  budget: number;
}

/** What {@link SpendStore.reserve} answered. */
export interface Reserved {
  /** The index of the first budget with no room left (nothing was reserved), or -1: held on every one. */
  refusedBy: number;
  /** Held in the shared store (Redis), so the release goes there too. */
  shared: boolean;
  /** When refused: what the refusing budget had left (budget − spent − reserved, at least 0). */
  left?: number;
}

/** Float noise allowed when a worst case exactly fills what is left. */
const FIT_SLACK = 1e-9;

/**
 * Whether a budget with `used` (spent plus reserved) has room for `usd` more: none once spent,
 * and none for a request whose worst case is more than what is left (issue 41: one embeddings
 * call once spent 60× a budget that had room only for its first cent).
 */
export function hasRoom(used: number, usd: number, budget: number): boolean {
  return used < budget && used + usd <= budget + FIT_SLACK;
}

/**
 * Spend per budget in the current calendar month (UTC), and the money reserved by requests still
 * running (docs/design.md, step 4 "admit"). Async so that a shared counter can stand behind the same
 * callers.
 */
export interface SpendStore {
  /** What was spent this month (reservations not included). */
  spent(id: string): Promise<number>;
  /** Spend with no reservation before it (a record billed by someone else, a test). */
  add(id: string, usd: number): Promise<void>;
  /**
   * In one atomic step for every budget: if each has room for `usd` ({@link hasRoom}: spent +
   * reserved + usd ≤ budget), `usd` is reserved on each; else nothing is, and the first without
   * room is named. So a budget is never overspent by requests that cost at most their
   * reservation, however many requests and instances race for it.
   */
  reserve(checks: readonly BudgetCheck[], usd: number): Promise<Reserved>;
  /** Replaces a reservation of `reservedUsd` on each id by the `actualUsd` really spent. */
  settle(ids: readonly string[], reservedUsd: number, actualUsd: number, shared: boolean): Promise<void>;
}

/**
 * The in-process spend counters: loaded from the ledger at start, then added to as each usage
 * record is made; cleared when the month turns.
 */
export class MemorySpendStore implements SpendStore {
  private spend = new Map<string, number>();
  private reserved = new Map<string, number>();
  private month = "";
  /** The current month's span in epoch ms, so that most calls compare numbers only. */
  private monthFrom = 0;
  private monthUntil = 0;

  private constructor(private readonly now: () => number) {}

  static async load(store: Store, now: () => number = Date.now): Promise<MemorySpendStore> {
    const t = new MemorySpendStore(now);
    t.month = monthStart(now());
    t.spend = await store.spendSince(t.month);
    return t;
  }

  private roll(): void {
    const t = this.now();
    if (t >= this.monthFrom && t < this.monthUntil) return;
    const m = monthStart(t);
    const d = new Date(m);
    this.monthFrom = d.getTime();
    this.monthUntil = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    if (m !== this.month) {
      this.month = m;
      this.spend.clear();
      this.reserved.clear();
    }
  }

  add(keyId: string, usd: number): Promise<void> {
    this.roll();
    this.spend.set(keyId, (this.spend.get(keyId) ?? 0) + usd);
    return Promise.resolve();
  }

  spent(keyId: string): Promise<number> {
    this.roll();
    return Promise.resolve(this.spend.get(keyId) ?? 0);
  }

  /** Raises a budget's spend to what another source knows it is at least (the shared store's last word). */
  atLeast(id: string, usd: number): void {
    this.roll();
    if (usd > (this.spend.get(id) ?? 0)) this.spend.set(id, usd);
  }

  reserve(checks: readonly BudgetCheck[], usd: number): Promise<Reserved> {
    this.roll();
    const used = (c: BudgetCheck) => (this.spend.get(c.id) ?? 0) + (this.reserved.get(c.id) ?? 0);
    const refusedBy = checks.findIndex((c) => !hasRoom(used(c), usd, c.budget));
    if (refusedBy === -1) {
      if (usd > 0) for (const c of checks) this.reserved.set(c.id, (this.reserved.get(c.id) ?? 0) + usd);
      return Promise.resolve({ refusedBy, shared: false });
    }
    const refusing = checks[refusedBy]!; // findIndex found it
    return Promise.resolve({ refusedBy, shared: false, left: Math.max(0, refusing.budget - used(refusing)) });
  }

  settle(ids: readonly string[], reservedUsd: number, actualUsd: number): Promise<void> {
    this.roll();
    for (const id of ids) {
      // A reservation from last month was cleared with it: never below zero.
      const left = (this.reserved.get(id) ?? 0) - reservedUsd;
      if (left > 1e-12) this.reserved.set(id, left);
      else this.reserved.delete(id);
      if (actualUsd !== 0) this.spend.set(id, (this.spend.get(id) ?? 0) + actualUsd);
    }
    return Promise.resolve();
  }
}
