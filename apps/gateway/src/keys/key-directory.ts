import type { KeyRecord, Store } from "../storage/store";

/**
 * Where keys are looked up: by the hash of a presented secret (the current one, or a rotated-out
 * one still in its grace period) and by id. Async so that a shared directory fits behind the same
 * callers; `onChange` tells subscribers (caches, limiters) that a key changed, wherever the change
 * was made.
 */
export interface KeyDirectory {
  byHash(hash: string): Promise<KeyRecord | undefined>;
  /** The same, at once, for a directory that holds every key in memory (no promise on the hot path). */
  byHashNow?(hash: string): KeyRecord | undefined;
  byId(id: string): Promise<KeyRecord | undefined>;
  /** Every key, oldest first. */
  list(): Promise<KeyRecord[]>;
  create(record: KeyRecord): Promise<void>;
  /** Writes a key's new state (same id). */
  update(record: KeyRecord): Promise<void>;
  /** Calls `listener` with the id of every key that changes; returns the unsubscribe. */
  onChange(listener: (id: string) => void): () => void;
}

/**
 * Every key held in memory (authentication never waits on the store), written through to the
 * store, changes told to in-process subscribers. Subclasses decide how keys are loaded and
 * whether a change is announced further (`announce`).
 */
export abstract class CachedKeyDirectory implements KeyDirectory {
  protected hashes = new Map<string, KeyRecord>();
  protected ids = new Map<string, KeyRecord>();
  protected readonly listeners = new Set<(id: string) => void>();
  /** Every key in listing order, kept until a key changes (100k keys sort in tens of milliseconds). */
  private sorted: { of: Map<string, KeyRecord>; keys: KeyRecord[] } | undefined;

  protected constructor(protected readonly store: Pick<Store, "createKey" | "updateKey">) {}

  /** Tells others of a change written here (nothing by default). */
  protected announce(_id: string): void {}

  protected remember(record: KeyRecord): void {
    const old = this.ids.get(record.id);
    if (old) {
      this.hashes.delete(old.hash);
      if (old.prev_hash) this.hashes.delete(old.prev_hash);
    }
    this.ids.set(record.id, record);
    this.sorted = undefined;
    this.hashes.set(record.hash, record);
    if (record.prev_hash) this.hashes.set(record.prev_hash, record);
    for (const l of this.listeners) l(record.id);
  }

  byHash(hash: string): Promise<KeyRecord | undefined> {
    return Promise.resolve(this.hashes.get(hash));
  }

  byHashNow(hash: string): KeyRecord | undefined {
    return this.hashes.get(hash);
  }

  byId(id: string): Promise<KeyRecord | undefined> {
    return Promise.resolve(this.ids.get(id));
  }

  /** Oldest first (then by id); a copy, so the caller may keep or cut it. */
  list(): Promise<KeyRecord[]> {
    // A directory that swaps its whole map (a reload) is seen by the map's identity.
    if (this.sorted?.of !== this.ids) {
      const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
      const keys = [...this.ids.values()].sort((a, b) => cmp(a.created_at, b.created_at) || cmp(a.id, b.id));
      this.sorted = { of: this.ids, keys };
    }
    return Promise.resolve(this.sorted.keys.slice());
  }

  async create(record: KeyRecord): Promise<void> {
    await this.store.createKey(record);
    this.remember(record);
    this.announce(record.id);
  }

  async update(record: KeyRecord): Promise<void> {
    await this.store.updateKey(record);
    this.remember(record);
    this.announce(record.id);
  }

  onChange(listener: (id: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** The embedded directory: keys loaded once from the store, changes announced in-process only. */
export class StoreKeyDirectory extends CachedKeyDirectory {
  static async load(store: Pick<Store, "createKey" | "updateKey" | "listKeys">): Promise<StoreKeyDirectory> {
    const dir = new StoreKeyDirectory(store);
    for (const k of await store.listKeys()) dir.remember(k);
    return dir;
  }
}
