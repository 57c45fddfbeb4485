import { CachedKeyDirectory } from "./key-directory";
import type { KeyNotices } from "./redis-key-notices";
import type { KeyRecord, Store } from "../storage/store";

/**
 * The key directory of an instance that shares its store with others: every key cached in memory
 * (authentication never waits on the store, and keeps working from the cache while the store is
 * unreachable), re-read from the store when another instance announces a change (`notices`) and
 * every `ttlMs` in any case, so a missed notice, or no Redis at all, still converges within the
 * interval. Writes go to the store first, then the notice.
 */
export class SharedKeyDirectory extends CachedKeyDirectory {
  private readonly timer: ReturnType<typeof setInterval>;
  private reloading: Promise<void> | undefined;
  private again = false;
  /** Did the last read of the store succeed? */
  storeUp = true;

  private constructor(
    private readonly source: Pick<Store, "createKey" | "updateKey" | "listKeys">,
    private readonly notices: KeyNotices | undefined,
    ttlMs: number,
    private readonly onError: (e: unknown) => void,
  ) {
    super(source);
    this.timer = setInterval(() => void this.reload(), ttlMs);
    this.timer.unref?.();
  }

  static async load(
    store: Pick<Store, "createKey" | "updateKey" | "listKeys">,
    opts: { notices?: KeyNotices; ttlMs?: number; onError?: (e: unknown) => void } = {},
  ): Promise<SharedKeyDirectory> {
    const dir = new SharedKeyDirectory(store, opts.notices, opts.ttlMs ?? 1000, opts.onError ?? (() => {}));
    dir.replace(await store.listKeys());
    await opts.notices?.subscribe(() => void dir.reload()).catch(dir.onError);
    return dir;
  }

  /** Re-reads every key; runs at most one read at a time, with one more queued behind it. */
  reload(): Promise<void> {
    if (this.reloading) {
      this.again = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      do {
        this.again = false;
        try {
          this.replace(await this.source.listKeys());
          this.storeUp = true;
        } catch (e) {
          if (this.storeUp) this.onError(e);
          this.storeUp = false;
        }
      } while (this.again);
    })().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  private replace(records: KeyRecord[]): void {
    const hashes = new Map<string, KeyRecord>();
    const ids = new Map<string, KeyRecord>();
    const changed: string[] = [];
    for (const r of records) {
      const old = this.ids.get(r.id);
      // Unchanged keys keep their object (callers cache per record, e.g. compiled allow-lists).
      const keep = old && JSON.stringify(old) === JSON.stringify(r) ? old : r;
      if (keep !== old) changed.push(r.id);
      ids.set(r.id, keep);
      hashes.set(keep.hash, keep);
      if (keep.prev_hash) hashes.set(keep.prev_hash, keep);
    }
    for (const id of this.ids.keys()) if (!ids.has(id)) changed.push(id);
    this.hashes = hashes;
    this.ids = ids;
    for (const id of changed) for (const l of this.listeners) l(id);
  }

  /** A change written here: the other instances re-read their keys. */
  protected override announce(id: string): void {
    // A notice that cannot be sent (Redis away, and logged as such) is covered by the others' reload interval.
    this.notices?.publish(id).catch(() => {});
  }

  close(): void {
    clearInterval(this.timer);
  }
}
