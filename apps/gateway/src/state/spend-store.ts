import type { Store } from "../storage/store";

/** `2026-11-01T00:00:00.000Z` for any instant in November 2026 (UTC). */
export function monthStart(ms: number): string {
  const d = new Date(ms);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)).toISOString();
}

/**
 * Spend per key in the current calendar month (UTC), kept in memory: loaded from the ledger at
 * start, then added to as each usage record is made. A key whose spend has reached its monthly
 * budget is refused until the month turns or the budget is raised.
 */
export class BudgetTracker {
  private spend = new Map<string, number>();
  private month = "";
  /** The current month's span in epoch ms, so that most calls compare numbers only. */
  private monthFrom = 0;
  private monthUntil = 0;

  private constructor(private readonly now: () => number) {}

  static async load(store: Store, now: () => number = Date.now): Promise<BudgetTracker> {
    const t = new BudgetTracker(now);
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

  add(keyId: string, usd: number): void {
    this.roll();
    this.spend.set(keyId, (this.spend.get(keyId) ?? 0) + usd);
  }

  spent(keyId: string): number {
    this.roll();
    return this.spend.get(keyId) ?? 0;
  }

  /** When the month's budget resets (the start of next month, UTC). */
  resetsAt(): string {
    const d = new Date(this.now());
    return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString();
  }
}
