import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import type { Ledger } from "./ledger";
import { isRecordRefusal } from "../storage/postgres-errors";
import type { Store, UsageRecord } from "../storage/store";

interface Segment {
  n: number;
  path: string;
  fd: number | undefined;
  bytes: number;
  /** Records of this segment not yet in the store. */
  unshipped: number;
}

export interface JournalOptions {
  /** A segment is closed and a new one begun past this size. */
  segmentBytes?: number;
  /** Records per insert when shipping. */
  batch?: number;
  /** Wait before shipping again after the store refused. */
  retryMs?: number;
  /**
   * How long appended records gather before they are shipped: fewer, larger inserts cost the
   * database far less per record, and nobody waits on them (default 20 ms).
   */
  shipDelayMs?: number;
  onError?: (e: unknown) => void;
  /** Awaited before each insert: rows that must be in the store first (the book of requests in flight). */
  beforeShip?: () => Promise<void>;
  /**
   * Awaited (for at most `companionWaitMs`) before a record's promise settles: a row that must
   * be in the store before its client is told the request is done (its entry in the book of
   * requests in flight in strict mode, limits/postgres-inflight.ts); undefined: nothing to wait for.
   */
  companion?: (r: UsageRecord) => Promise<void> | undefined;
  companionWaitMs?: number;
  /** Told when shipping starts failing (false) and succeeds again (true). */
  onStoreState?: (up: boolean) => void;
  /** Told of each record the store refused for its values (it is set aside; the others go on). */
  onSetAside?: (record: UsageRecord, e: unknown) => void;
}

/** Where records the store refused for their values are kept, one JSON line each (never replayed). */
export const SET_ASIDE_FILE = "set-aside.jsonl";

const SEGMENT = /^segment-(\d+)\.ndjson$/;

/**
 * The ledger of an instance whose store is shared (PostgreSQL): a record is durable once it is in
 * a local append-only journal, so no request waits on the store. Records handed over in the same
 * turn of the event loop are appended with one write; the promise of each settles after that
 * write, so a `kill -9` of the process loses nothing a client saw complete (the OS holds the
 * written bytes). A shipper sends the journal to the store in batches, in order, with inserts that
 * ignore a request id already there, so a segment replayed after a crash cannot duplicate a
 * record; a segment whose records have all landed is deleted. While the store is unreachable,
 * records wait in the journal and the shipper retries.
 *
 * The directory belongs to one process at a time (`owner.pid`); at start the previous owner's
 * segments are read back and shipped first.
 *
 * A record the store refuses for its values (a NUL PostgreSQL cannot keep, a number out of range:
 * {@link isRecordRefusal}) must not hold the records behind it: the batch is split until the
 * refused records are alone, the others are shipped, and each refused one is appended to
 * `set-aside.jsonl` in the directory (with why and when), told to `onSetAside` (the log line and
 * the `turnpike_ledger_set_aside` metric) and taken out of the journal, so that a restart does
 * not meet it again.
 */
export class JournalLedger implements Ledger {
  private pending: { record: UsageRecord; done: () => void }[] = [];
  private appendScheduled = false;
  /** Appended, not yet shipped, oldest first. */
  private queue: { record: UsageRecord; seg: Segment }[] = [];
  private shipping: Promise<unknown> | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private current: Segment;
  private readonly closed: Segment[] = [];
  private closing = false;
  /** Did the last shipment reach the store? */
  storeUp = true;
  private readonly opts: Required<Pick<JournalOptions, "segmentBytes" | "batch" | "retryMs" | "shipDelayMs">> &
    JournalOptions;
  private shipTimer: ReturnType<typeof setTimeout> | undefined;
  /** Records in `set-aside.jsonl` (those of earlier runs included). */
  setAside = 0;

  private constructor(
    private readonly dir: string,
    private readonly store: Pick<Store, "insertUsage">,
    opts: JournalOptions,
    next: number,
  ) {
    this.opts = { segmentBytes: 8 << 20, batch: 1000, retryMs: 500, shipDelayMs: 20, ...opts };
    this.current = this.openSegment(next);
  }

  /** Takes the directory, reads back what the previous owner left, and starts shipping it. */
  static open(dir: string, store: Pick<Store, "insertUsage">, opts: JournalOptions = {}): JournalLedger {
    mkdirSync(dir, { recursive: true });
    claim(dir);
    const found = readdirSync(dir)
      .map((f) => SEGMENT.exec(f))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    const ledger = new JournalLedger(dir, store, opts, (found.at(-1) ?? 0) + 1);
    const asidePath = join(dir, SET_ASIDE_FILE);
    if (existsSync(asidePath))
      ledger.setAside = readFileSync(asidePath, "utf8")
        .split("\n")
        .filter((l) => l.length > 0).length;
    for (const n of found) {
      const seg: Segment = {
        n,
        path: join(dir, `segment-${String(n).padStart(10, "0")}.ndjson`),
        fd: undefined,
        bytes: 0,
        unshipped: 0,
      };
      for (const line of readFileSync(seg.path, "utf8").split("\n")) {
        if (!line) continue;
        try {
          ledger.queue.push({ record: JSON.parse(line) as UsageRecord, seg }); // written by append() as one record per line
          seg.unshipped++;
        } catch {
          // A line cut short by a crash mid-write was never acknowledged to its client.
        }
      }
      if (seg.unshipped === 0) rmSync(seg.path, { force: true });
      else ledger.closed.push(seg);
    }
    void ledger.ship();
    return ledger;
  }

  /** Records left by a previous owner or waiting for the store. */
  get backlog(): number {
    return this.queue.length;
  }

  private openSegment(n: number): Segment {
    const path = join(this.dir, `segment-${String(n).padStart(10, "0")}.ndjson`);
    return { n, path, fd: openSync(path, "a"), bytes: 0, unshipped: 0 };
  }

  record(r: UsageRecord): Promise<void> {
    if (this.closing) return Promise.reject(new Error("the ledger is closed"));
    return new Promise<void>((done) => {
      this.pending.push({ record: r, done });
      if (!this.appendScheduled) {
        this.appendScheduled = true;
        setImmediate(() => this.append());
      }
    });
  }

  /** One write for everything handed over since the last one. */
  private append(): void {
    this.appendScheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    let text = "";
    for (const b of batch) text += JSON.stringify(b.record) + "\n";
    const seg = this.current;
    // Synchronous on purpose: the bytes are the kernel's before any client hears "done".
    writeSync(seg.fd as number, text); // an open segment always has its fd
    seg.bytes += text.length;
    seg.unshipped += batch.length;
    for (const b of batch) this.queue.push({ record: b.record, seg });
    if (seg.bytes >= this.opts.segmentBytes) this.rotate();
    const waits: Promise<void>[] = [];
    if (this.opts.companion) {
      for (const b of batch) {
        const w = this.opts.companion(b.record);
        if (w) waits.push(w);
      }
    }
    if (waits.length) {
      // Bounded: a store that stops answering must not hold every client.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = new Promise<void>((r) => (timer = setTimeout(r, this.opts.companionWaitMs ?? 2000)));
      void Promise.race([Promise.all(waits), waited]).then(() => {
        clearTimeout(timer);
        for (const b of batch) b.done();
      });
    } else for (const b of batch) b.done();
    this.shipSoon();
  }

  private shipSoon(): void {
    if (this.shipTimer || this.shipping || this.retryTimer) return;
    this.shipTimer = setTimeout(() => {
      this.shipTimer = undefined;
      void this.ship();
    }, this.opts.shipDelayMs);
  }

  private rotate(): void {
    const old = this.current;
    closeSync(old.fd as number); // an open segment always has its fd
    old.fd = undefined;
    this.closed.push(old);
    this.current = this.openSegment(old.n + 1);
    this.sweep();
  }

  /** Deletes closed segments whose records are all in the store. */
  private sweep(): void {
    for (let i = this.closed.length - 1; i >= 0; i--) {
      const seg = this.closed[i]!;
      if (seg.unshipped > 0) continue;
      rmSync(seg.path, { force: true });
      this.closed.splice(i, 1);
    }
  }

  /** Starts the shipper unless it runs or waits to retry; settles with the last error, if any. */
  private ship(): Promise<unknown> {
    if (this.shipping || this.retryTimer) return this.shipping ?? Promise.resolve(this.lastError);
    const run = this.shipLoop().finally(() => {
      this.shipping = undefined;
      if (this.queue.length && !this.closing) this.shipSoon();
    });
    this.shipping = run;
    return run;
  }

  private lastError: unknown;

  /**
   * Ships full batches back to back and then what is left; on a refusal, schedules a retry and
   * returns the error. Records appended meanwhile wait for the next round (`shipDelayMs`).
   */
  private async shipLoop(): Promise<unknown> {
    let rounds = Math.max(1, Math.ceil(this.queue.length / this.opts.batch));
    while (this.queue.length && rounds-- > 0) {
      const batch = this.queue.slice(0, this.opts.batch);
      const aside: typeof batch = [];
      try {
        await this.opts.beforeShip?.();
        await this.insertIsolating(batch, aside);
      } catch (e) {
        // Set aside before the store failed: out of the queue, so a retry does not meet them again.
        if (aside.length) this.drop(aside);
        this.lastError = e;
        if (this.storeUp) {
          this.storeUp = false;
          this.opts.onStoreState?.(false);
          this.opts.onError?.(e);
        }
        if (!this.closing) {
          this.retryTimer = setTimeout(() => {
            this.retryTimer = undefined;
            void this.ship();
          }, this.opts.retryMs);
        }
        return e;
      }
      this.lastError = undefined;
      if (!this.storeUp) {
        this.storeUp = true;
        this.opts.onStoreState?.(true);
      }
      this.queue.splice(0, batch.length);
      for (const b of batch) b.seg.unshipped--;
      this.sweep();
    }
    // Appended while the insert ran: shipped in the next round (ship() schedules it).
    if (this.queue.length) return undefined;
    // Everything shipped: a large open segment starts over empty, so that a restart replays little.
    const seg = this.current;
    if (seg.unshipped === 0 && seg.bytes >= 1 << 20 && this.pending.length === 0) {
      closeSync(seg.fd as number); // an open segment always has its fd
      rmSync(seg.path, { force: true });
      this.current = this.openSegment(seg.n + 1);
    }
    return undefined;
  }

  /**
   * Inserts a batch; when the store refuses its values, halves it until each refused record is
   * alone, inserts the rest, and sets each refused one aside (into `aside`). Any other failure
   * (the store is unreachable) is thrown: the batch waits and is tried again whole (inserts ignore
   * a request id already there, so the parts that landed are not doubled).
   */
  private async insertIsolating(part: { record: UsageRecord; seg: Segment }[], aside: typeof part): Promise<void> {
    try {
      await this.store.insertUsage(part.map((b) => b.record));
    } catch (e) {
      if (!isRecordRefusal(e)) throw e;
      if (part.length === 1) {
        this.putAside(part[0]!.record, e);
        aside.push(part[0]!);
        return;
      }
      const mid = part.length >> 1;
      await this.insertIsolating(part.slice(0, mid), aside);
      await this.insertIsolating(part.slice(mid), aside);
    }
  }

  /** Keeps a refused record in `set-aside.jsonl`, and tells of it. */
  private putAside(record: UsageRecord, e: unknown): void {
    const reason = e instanceof Error ? e.message : String(e);
    appendFileSync(
      join(this.dir, SET_ASIDE_FILE),
      `${JSON.stringify({ set_aside_at: new Date().toISOString(), reason, record })}\n`,
    );
    this.setAside++;
    this.opts.onSetAside?.(record, e);
  }

  /** Takes records out of the queue (set aside: they are not shipped). */
  private drop(entries: { record: UsageRecord; seg: Segment }[]): void {
    const gone = new Set(entries);
    this.queue = this.queue.filter((q) => !gone.has(q));
    for (const b of entries) b.seg.unshipped--;
  }

  /** Appends what is pending and ships everything; rejects if the store cannot take it now. */
  async flush(): Promise<void> {
    this.append();
    if (this.shipTimer) {
      clearTimeout(this.shipTimer);
      this.shipTimer = undefined;
    }
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
    }
    while (this.queue.length) {
      const err = await this.ship();
      if (err !== undefined) throw err;
    }
  }

  get size(): number {
    return this.pending.length + this.queue.length;
  }

  /** Appends what is pending, tries once to ship the rest, and lets the directory go. */
  async close(): Promise<void> {
    this.append();
    this.closing = true;
    if (this.shipTimer) clearTimeout(this.shipTimer);
    this.shipTimer = undefined;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    await this.flush().catch(() => {});
    if (this.current.fd !== undefined) closeSync(this.current.fd);
    if (this.current.unshipped === 0) rmSync(this.current.path, { force: true });
    rmSync(join(this.dir, "owner.pid"), { force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === "EPERM"; // exists, owned by someone else
  }
}

/** Makes this process the directory's owner, unless a live process already is. */
function claim(dir: string): void {
  const lock = join(dir, "owner.pid");
  if (existsSync(lock)) {
    const pid = Number(readFileSync(lock, "utf8").trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
      throw new Error(
        `The usage journal ${dir} is in use by process ${pid}; give each instance its own TURNPIKE_JOURNAL_DIR.`,
      );
    }
  }
  writeFileSync(lock, String(process.pid));
}
