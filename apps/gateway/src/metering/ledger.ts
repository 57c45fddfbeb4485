import type { Store, UsageRecord } from "../storage/store";

/**
 * The usage ledger as the pipeline sees it: a record is handed over once per request that
 * reached an upstream, and the promise settles when it is durable (docs/design.md, "State").
 */
export interface Ledger {
  record(r: UsageRecord): Promise<void>;
  /** Commits everything handed over so far. */
  flush(): Promise<void>;
  /** Records handed over and not yet committed. */
  readonly size: number;
  /** Records the store refused for their values and that were set aside (metering/journal-ledger.ts). */
  readonly setAside?: number;
}

/**
 * Writes usage records in group commits. A request hands its record over and may await the
 * commit that makes it durable; every record handed over in the same turn of the event loop
 * (and all that arrive while a commit runs) goes into one transaction, so under load one commit
 * serves many requests and an idle gateway commits at once, with no timer to wait for.
 *
 * A failed commit keeps its records and is retried; waiters are released after the first failure
 * (a client is not held hostage by a sick disk) but the records stay queued until they land.
 */
export class GroupCommitLedger implements Ledger {
  private pending: UsageRecord[] = [];
  /**
   * The one promise every record handed over since the last commit began waits for (not one
   * promise, executor and resolver per record: they are made on every request).
   */
  private waiting: ReturnType<typeof Promise.withResolvers<void>> | undefined;
  private scheduled = false;
  private running: Promise<void> | undefined;

  constructor(
    private readonly store: Pick<Store, "insertUsage">,
    private readonly opts: { retryMs?: number; onError?: (e: unknown) => void } = {},
  ) {}

  /** Queues a record; the promise settles once it is committed (or its first commit failed). */
  record(r: UsageRecord): Promise<void> {
    this.pending.push(r);
    this.waiting ??= Promise.withResolvers<void>();
    this.schedule();
    return this.waiting.promise;
  }

  private schedule(delayMs = 0): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      this.running ??= this.commit().finally(() => {
        this.running = undefined;
        if (this.pending.length) this.schedule();
      });
    };
    if (delayMs > 0) setTimeout(run, delayMs);
    else setImmediate(run);
  }

  private async commit(): Promise<void> {
    const batch = this.pending;
    const waiting = this.waiting;
    this.pending = [];
    this.waiting = undefined;
    if (batch.length === 0) {
      waiting?.resolve();
      return;
    }
    try {
      await this.store.insertUsage(batch);
    } catch (e) {
      this.opts.onError?.(e);
      // Keep them first in line; release the waiters, retry later.
      this.pending = batch.concat(this.pending);
      waiting?.resolve();
      this.scheduled = false;
      this.schedule(this.opts.retryMs ?? 500);
      return;
    }
    waiting?.resolve();
  }

  /** Commits everything handed over so far. */
  async flush(): Promise<void> {
    while (this.pending.length || this.running) {
      if (this.running) await this.running;
      else await this.commit();
    }
  }

  get size(): number {
    return this.pending.length;
  }
}
