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

/**
 * Spend per key in the current calendar month (UTC). Async so that a shared counter can stand
 * behind the same callers; `add` is told every usage record's cost as it is made.
 */
export interface SpendStore {
  spent(keyId: string): Promise<number>;
  add(keyId: string, usd: number): Promise<void>;
}

/**
 * The in-process spend counters: loaded from the ledger at start, then added to as each usage
 * record is made; cleared when the month turns.
 */
export class MemorySpendStore implements SpendStore {
  private spend = new Map<string, number>();
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
}
