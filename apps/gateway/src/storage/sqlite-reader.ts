import type { Database } from "bun:sqlite";
import type { ReadMessage, ReadReply } from "./sqlite-read-worker";

/** The longest a read waits for the worker's answer. */
const READ_TIMEOUT_MS = 120_000;

/**
 * Runs the SQLite store's admin reads (grouped totals, listings) on a worker thread with its own
 * connection, so that no read holds the server's event loop, however large the ledger (issue 46:
 * a chart over a big ledger held every client for seconds). An in-memory database has no file a
 * second connection could open, and a worker that cannot start or dies leaves the reads on the
 * server's thread, as they were before.
 *
 * A failed read (bad SQL, a missing table) is refused as soon as the worker's answer arrives; the
 * route that asked turns it into a 500 and its one log line (http/respond.ts). Under `bun test`,
 * do not wait on a read with `expect(promise).resolves` / `.rejects`: Bun 1.4.4 settles those
 * matchers by spinning the event loop inside the call, which runs timers and sockets but holds
 * back Worker messages until it returns, so the answer only lands when the timeout below fires.
 * Await the read first, then assert (see sqlite-reader.test.ts).
 */
export class SqliteReader {
  private worker: Worker | undefined;
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (rows: unknown[]) => void; reject: (e: Error) => void }>();
  /**
   * Held while a read is out, so a script awaiting it does not exit under it (the worker itself
   * stays unreferenced: turning its reference on and off lost replies under `bun test`).
   */
  private hold: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly db: Database,
    path: string,
  ) {
    if (path === ":memory:") return;
    try {
      const w = new Worker(new URL("./sqlite-read-worker.ts", import.meta.url).href);
      (w as Worker & { unref(): void }).unref(); // Bun's Worker has it; the DOM type does not
      w.onmessage = (e: MessageEvent<ReadReply>) => {
        const r = e.data;
        const wait = this.waiting.get(r.id);
        if (!wait) return;
        this.waiting.delete(r.id);
        if ("error" in r) wait.reject(new Error(`the ledger read failed: ${r.error}`));
        else wait.resolve(r.rows);
        this.release();
      };
      w.onerror = () => this.stop(new Error("the SQLite reader stopped"));
      w.postMessage({ path } satisfies ReadMessage);
      this.worker = w;
    } catch {
      this.worker = undefined;
    }
  }

  /** The rows of `sql`: from the worker when there is one, else on this thread. */
  all<T>(sql: string, params: (string | number)[]): Promise<T[]> {
    const w = this.worker;
    if (!w) return Promise.resolve(this.db.query<T, (string | number)[]>(sql).all(...params));
    const id = this.next++;
    this.hold ??= setInterval(() => {}, 1 << 30);
    return new Promise<T[]>((resolve, reject) => {
      // Bounded: a read the worker never answers is refused, not left to hold its caller.
      const timer = setTimeout(() => {
        if (!this.waiting.delete(id)) return;
        reject(new Error("the SQLite reader did not answer"));
        this.release();
      }, READ_TIMEOUT_MS);
      (timer as { unref?: () => void }).unref?.();
      const done = (f: () => void) => {
        clearTimeout(timer);
        f();
      };
      this.waiting.set(id, {
        resolve: (rows) => done(() => resolve(rows as T[])),
        reject: (e) => done(() => reject(e)),
      });
      w.postMessage({ id, sql, params } satisfies ReadMessage);
    });
  }

  private release(): void {
    if (this.waiting.size > 0 || !this.hold) return;
    clearInterval(this.hold);
    this.hold = undefined;
  }

  private stop(e: Error): void {
    this.worker?.terminate();
    this.worker = undefined;
    for (const w of this.waiting.values()) w.reject(e);
    this.waiting.clear();
    this.release();
  }

  close(): void {
    this.stop(new Error("the store is closed"));
  }
}
