import { closeSync, ftruncateSync, openSync, readFileSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import { GatewayError } from "@turnpike/providers";
import { isConnectionError } from "../storage/postgres-errors";
import type { ResponseStore } from "./response-store";
import type { StoredResponse } from "../vocabulary/stored-response";

/** One change not yet in the shared store, as a journal line. */
type Op = { op: "put"; r: StoredResponse } | { op: "delete"; key_id: string; id: string };

/** Where an op's line is in the journal file. */
interface Entry {
  id: string;
  offset: number;
  length: number;
}

/** The newest change to an id that the shared store does not have yet. */
interface Waiting {
  entry: Entry;
  kind: Op["op"];
  key_id: string;
}

export interface ResponseJournalOptions {
  /** Wait before shipping again after the store refused (default 500 ms). */
  retryMs?: number;
  /** Told once when changes start waiting in the journal, and once when they have all landed. */
  onState?: (up: boolean, waiting: number) => void;
  /** A change the store refused for its content (not for being unreachable): dropped, and said why. */
  onDropped?: (id: string, e: unknown) => void;
  /** Shipping stopped on something else (a journal line that cannot be read). */
  onError?: (e: unknown) => void;
}

const FILE = "stored-responses.ndjson";

/** Did the store fail for being unreachable (rather than for the value)? */
const unreachable = (e: unknown) => (e instanceof GatewayError && e.status === 503) || isConnectionError(e);

/**
 * Stored responses over PostgreSQL that survive an outage (decisions/0016-stored-responses-journal.md): a response that
 * cannot be written is appended to a local journal (one line, written synchronously before its
 * client sees the end of the reply, like a usage record) and shipped, in order, when PostgreSQL
 * answers again; while it waits, this instance reads it (and `previous_response_id` continues from
 * it) from the journal. Memory holds only where each waiting line is; the lines stay on disk. A
 * read that needs PostgreSQL while it is away is a 503, never a 404 for something that exists.
 * The journal file lives in the instance's journal directory, which one process owns at a time;
 * at start the lines a previous owner left are shipped first.
 */
export class JournaledResponseStore implements ResponseStore {
  private readonly queue: Entry[] = [];
  private readonly waiting = new Map<string, Waiting>();
  private bytes = 0;
  private shipping: Promise<void> | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  private readonly retryMs: number;

  private constructor(
    private readonly inner: ResponseStore,
    private readonly fd: number,
    private readonly opts: ResponseJournalOptions,
  ) {
    this.retryMs = opts.retryMs ?? 500;
  }

  /** Opens (or creates) the journal in `dir`, reads back what it holds and starts shipping it. */
  static open(dir: string, inner: ResponseStore, opts: ResponseJournalOptions = {}): JournaledResponseStore {
    const path = join(dir, FILE);
    const fd = openSync(path, "a+");
    const store = new JournaledResponseStore(inner, fd, opts);
    const text = readFileSync(path, "utf8");
    // A line cut short by a kill mid-write was never acknowledged: the file is cut back to the
    // last whole line, so that the next append starts a line of its own.
    const whole = text.lastIndexOf("\n") + 1;
    if (whole < Buffer.byteLength(text)) ftruncateSync(fd, Buffer.byteLength(text.slice(0, whole)));
    let offset = 0;
    for (const line of text.slice(0, whole).split("\n")) {
      const length = Buffer.byteLength(line) + 1;
      if (line) {
        try {
          store.track(JSON.parse(line) as Op, { id: "", offset, length }); // written by append() as one op per line
        } catch {
          // Not an op (never acknowledged): skipped.
        }
      }
      offset += length;
    }
    store.bytes = Buffer.byteLength(text.slice(0, whole));
    if (store.queue.length) {
      opts.onState?.(false, store.queue.length);
      store.ship().catch((e) => opts.onError?.(e));
    }
    return store;
  }

  /** Changes waiting for PostgreSQL. */
  get backlog(): number {
    return this.queue.length;
  }

  async put(r: StoredResponse): Promise<void> {
    if (this.queue.length === 0) {
      try {
        await this.inner.put(r);
        return;
      } catch (e) {
        if (!unreachable(e)) throw e;
      }
    }
    this.append({ op: "put", r });
  }

  async get(keyId: string, id: string, nowIso: string): Promise<StoredResponse | undefined> {
    const w = this.waiting.get(id);
    if (!w) return this.inner.get(keyId, id, nowIso);
    if (w.kind === "delete" || w.key_id !== keyId) return undefined;
    const op = this.read(w.entry);
    return op.op === "put" && op.r.expires_at > nowIso ? op.r : undefined;
  }

  async delete(keyId: string, id: string): Promise<boolean> {
    const w = this.waiting.get(id);
    if (!w) return this.inner.delete(keyId, id);
    if (w.kind === "delete" || w.key_id !== keyId) return false;
    this.append({ op: "delete", key_id: keyId, id });
    return true;
  }

  purgeExpired(nowIso: string): Promise<number> {
    return this.inner.purgeExpired(nowIso);
  }

  /** Tries once more to ship what waits, then lets the file go (what is left is shipped at the next start). */
  async close(): Promise<void> {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.queue.length) await this.ship();
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    closeSync(this.fd);
  }

  private append(op: Op): void {
    const line = JSON.stringify(op) + "\n";
    const length = Buffer.byteLength(line);
    // Synchronous on purpose: the bytes are the kernel's before the client sees its reply end.
    writeSync(this.fd, line);
    const first = this.queue.length === 0;
    this.track(op, { id: "", offset: this.bytes, length });
    this.bytes += length;
    if (first) {
      this.opts.onState?.(false, 1);
      this.shipSoon();
    }
  }

  private track(op: Op, at: Entry): void {
    const id = op.op === "put" ? op.r.id : op.id;
    const entry = { ...at, id };
    this.queue.push(entry);
    this.waiting.set(id, { entry, kind: op.op, key_id: op.op === "put" ? op.r.key_id : op.key_id });
  }

  private read(e: Entry): Op {
    const buf = Buffer.alloc(e.length);
    readSync(this.fd, buf, 0, e.length, e.offset);
    return JSON.parse(buf.toString("utf8")) as Op; // a line append() wrote
  }

  private shipSoon(): void {
    if (this.retryTimer || this.shipping || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.ship().catch((e) => this.opts.onError?.(e));
    }, this.retryMs);
  }

  /** Ships the queue in order; on an unreachable store, tries again later. */
  private ship(): Promise<void> {
    if (this.shipping) return this.shipping;
    this.shipping = this.shipLoop().finally(() => {
      this.shipping = undefined;
    });
    return this.shipping;
  }

  private async shipLoop(): Promise<void> {
    while (this.queue.length) {
      const e = this.queue[0]!;
      const op = this.read(e);
      try {
        // A response deleted while it waited is never written: no other instance sees it, even briefly.
        if (op.op === "put") {
          if (this.waiting.get(e.id)?.kind !== "delete") await this.inner.put(op.r);
        } else await this.inner.delete(op.key_id, op.id);
      } catch (err) {
        if (unreachable(err)) {
          this.shipSoon();
          return;
        }
        this.opts.onDropped?.(e.id, err);
      }
      this.queue.shift();
      if (this.waiting.get(e.id)?.entry === e) this.waiting.delete(e.id);
    }
    // Everything landed: the file starts over empty (no await since the last check).
    ftruncateSync(this.fd, 0);
    this.bytes = 0;
    this.opts.onState?.(true, 0);
  }
}
