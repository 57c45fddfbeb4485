import { randomBytes } from "node:crypto";
import type { SQL } from "bun";
import type { InflightBook, InflightRequest } from "./inflight";

/** A request billed by a survivor: what it reserved and what it was billed, to settle its budgets. */
export interface Reaped {
  request_id: string;
  key_id: string;
  budgets: string[];
  reserved_usd: number;
  cost_usd: number;
}

export interface InflightOptions {
  /** How often this instance says it is alive. */
  beatMs?: number;
  /** An instance silent this long is dead: its requests in flight are billed by the others. */
  leaseMs?: number;
  /** How often this instance looks for the requests of dead ones. */
  reapMs?: number;
  /**
   * A request is written to the book once it has run this long (default 20 ms); one that ends
   * sooner is never written (its usage record, in the journal, is its bill). 0 is the strict
   * mode: every request written at admission, and its record acknowledged only once its row is
   * written (`written`).
   */
  afterMs?: number;
  /** Told each request it billed for a dead instance (to settle that request's budgets). */
  onReaped?: (rows: Reaped[]) => void;
  onError?: (what: string, e: unknown) => void;
}

const COLUMNS =
  "request_id text, key_id text, model text, endpoint text, stream bool, input_tokens int4, cost_usd float8, reserved_usd float8, budgets json, created_at text";

/**
 * One statement per write: the rows of requests that ended with no record leave the book ($3, by
 * primary key), and the rows of requests still running past `afterMs` enter it ($1). Only rows
 * whose request has no record yet: a row that arrived after its record would be billed by nobody
 * and never leave (a request that ends while its row is being written is rare; the journal ships
 * after the write under way, see `idle`, and this is the second guard).
 */
const WRITE = `WITH gone AS (
  DELETE FROM inflight WHERE request_id = ANY (ARRAY(SELECT json_array_elements_text($3::text::json)))
)
INSERT INTO inflight (request_id, instance, key_id, model, endpoint, stream, input_tokens, cost_usd, reserved_usd, budgets, created_at)
SELECT r.request_id, $2, r.key_id, r.model, r.endpoint, r.stream, r.input_tokens, r.cost_usd, r.reserved_usd, r.budgets::text, r.created_at
FROM json_to_recordset($1::text::json) AS r(${COLUMNS})
WHERE NOT EXISTS (SELECT 1 FROM usage u WHERE u.request_id = r.request_id)
ON CONFLICT (request_id) DO NOTHING`;

/**
 * One statement, so one transaction: the rows of every instance whose lease ran out leave the
 * book and become usage records (aborted, estimated: the input estimated at admission, no
 * output), a request already recorded keeping its record. Two survivors reaping at once cannot
 * both take a row (the second's DELETE finds it gone).
 */
const REAP = `WITH dead AS (
  DELETE FROM inflight i
  WHERE NOT EXISTS (SELECT 1 FROM instances n WHERE n.id = i.instance AND n.beat_at > now() - make_interval(secs => $1::float8))
  RETURNING i.*
), billed AS (
  INSERT INTO usage (request_id, key_id, model, endpoint, stream, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
    reasoning_tokens, cost_usd, status, upstream_status, latency_ms, aborted, estimated, created_at)
  SELECT request_id, key_id, model, endpoint, stream, input_tokens, 0, 0, 0, 0, cost_usd, 499, 0, 0, true, true, created_at FROM dead d
  WHERE NOT EXISTS (SELECT 1 FROM usage u WHERE u.request_id = d.request_id)
  ON CONFLICT (request_id, created_at) DO NOTHING
  RETURNING request_id
)
SELECT d.request_id, d.key_id, d.budgets, d.reserved_usd, d.cost_usd FROM dead d JOIN billed b USING (request_id)`;

/**
 * The book of requests in flight in PostgreSQL (`inflight`), beside each instance's heartbeat
 * (`instances`). A request still running `afterMs` after its admission has its row written,
 * batched with every other one then due (one statement, at most one under way, never awaited by
 * a request); a request that ends sooner is never written, and its usage record alone bills it.
 * A written row leaves in the transaction that inserts its usage record (postgres-store.ts), or
 * with the next write when its request ends with no record. Every instance beats every
 * `beatMs`; one silent for `leaseMs` is dead, and whichever survivor looks first bills its
 * requests in flight. The ledger stays exactly-once: a record and a reaped row insert the same
 * request id, and the second is ignored (an instance that was only slow finds its request
 * already billed, as estimated).
 *
 * What a `kill -9` can take with it (decisions/0021-inflight-book-batching.md): a request
 * admitted less than `afterMs` (plus one write) before it, whose row was not yet written, is
 * billed by nobody unless the instance restarts on its journal; nobody waits for a row.
 *
 * Strict mode (`afterMs` 0): every request's row is written at admission, with the others of
 * the same turn of the event loop, and the journal acknowledges a record only once its
 * request's row is written (`written`, a bounded wait): a request its client saw complete is in
 * PostgreSQL, as its record or its row, even if its instance dies that instant.
 */
export class PostgresInflightBook implements InflightBook {
  /** This process's name in `instances`: a new one at each start. */
  readonly instance = `i-${randomBytes(8).toString("hex")}`;
  /** Admitted, not yet written, oldest first (each due `afterMs` after its admission). */
  private waiting = new Map<string, { row: InflightRequest; due: number }>();
  /** Requests ended with no record whose row was written (or is being written). */
  private drops: string[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerAt = 0;
  private lastWrite = Number.NEGATIVE_INFINITY;
  /** The write under way: at most one; what falls due meanwhile goes into the next. */
  private writing: Promise<void> | undefined;
  /** Writes begun and ended, counted: a wait (`idle`, `written`) is for the write that carries a row. */
  private begun = 0;
  private ended = 0;
  private waiters: { upTo: number; done: () => void }[] = [];
  /**
   * Strict mode: the write that carries each request's row (0: not yet begun, so the next one),
   * until its record asks (`written`) or it ends with no record.
   */
  private carriedBy = new Map<string, number>();
  private immediate = false;
  private timers: ReturnType<typeof setInterval>[] = [];
  private reaps = 0;
  private vacuumRefused = false;
  private readonly opts: Required<Pick<InflightOptions, "beatMs" | "leaseMs" | "reapMs" | "afterMs">> & InflightOptions;

  constructor(
    private readonly sql: SQL,
    opts: InflightOptions = {},
  ) {
    this.opts = { beatMs: 3000, leaseMs: 20_000, reapMs: 5000, afterMs: 20, ...opts };
  }

  /** Every row written at admission, every record waiting for its row. */
  get strict(): boolean {
    return this.opts.afterMs === 0;
  }

  /** Says this instance is alive before it admits anything, then keeps saying it and reaping. */
  async start(): Promise<void> {
    await this.beat();
    const beat = setInterval(
      () => void this.beat().catch((e) => this.opts.onError?.("heartbeat", e)),
      this.opts.beatMs,
    );
    const reap = setInterval(
      () => void this.reap().catch((e) => this.opts.onError?.("billing dead instances' requests", e)),
      this.opts.reapMs,
    );
    for (const t of [beat, reap]) t.unref?.();
    this.timers.push(beat, reap);
  }

  private async beat(): Promise<void> {
    await this
      .sql`INSERT INTO instances (id, beat_at) VALUES (${this.instance}, now()) ON CONFLICT (id) DO UPDATE SET beat_at = now()`;
  }

  open(r: InflightRequest): void {
    this.waiting.set(r.request_id, { row: r, due: performance.now() + this.opts.afterMs });
    if (this.strict) this.carriedBy.set(r.request_id, 0);
    this.schedule();
  }

  end(requestId: string, recorded: boolean): void {
    if (this.strict && recorded) {
      // Its record waits for its row (`written`), so the row is written even if the request
      // already ended; the record's insert takes it out. Nothing to wait for once it is written.
      const n = this.carriedBy.get(requestId);
      if (n !== undefined && n !== 0 && n <= this.ended) this.carriedBy.delete(requestId);
      return;
    }
    this.carriedBy.delete(requestId);
    // Not written yet: it never will be, and nothing needs deleting.
    if (this.waiting.delete(requestId)) return;
    // Written (or being written): the insert of its record takes it out; without one, the next write does.
    if (recorded) return;
    this.drops.push(requestId);
    this.schedule();
  }

  /**
   * The next write: when the oldest waiting row falls due (deletes at once), but no sooner than a
   * quarter of `afterMs` after the last one began, so that rows falling due together go together.
   */
  private schedule(): void {
    if (this.writing) return; // its end schedules the next
    if (this.strict) {
      // Everything handed over in this turn of the event loop, in one write.
      if (this.immediate || (!this.waiting.size && !this.drops.length)) return;
      this.immediate = true;
      setImmediate(() => {
        this.immediate = false;
        this.flush(false);
      });
      return;
    }
    let at: number | undefined;
    if (this.drops.length) at = performance.now();
    else
      for (const w of this.waiting.values()) {
        at = w.due;
        break;
      }
    if (at === undefined) return;
    at = Math.max(at, this.lastWrite + this.opts.afterMs / 4);
    if (this.timer) {
      if (this.timerAt <= at) return;
      clearTimeout(this.timer);
    }
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.flush(false);
      },
      Math.max(0, at - performance.now()),
    );
  }

  /** One write for every row due (every row, with `all`) and every delete; then the next is scheduled. */
  private flush(all: boolean): void {
    if (this.writing) return;
    const now = performance.now();
    const rows: InflightRequest[] = [];
    for (const [id, w] of this.waiting) {
      if (!all && w.due > now) break;
      rows.push(w.row);
      this.waiting.delete(id);
    }
    const drops = this.drops;
    this.drops = [];
    if (!rows.length && !drops.length) {
      this.schedule();
      return;
    }
    this.lastWrite = now;
    const n = ++this.begun;
    if (this.strict) for (const r of rows) if (this.carriedBy.has(r.request_id)) this.carriedBy.set(r.request_id, n);
    this.writing = this.write(rows, drops)
      .catch((e) => this.opts.onError?.("writing requests in flight", e))
      .finally(() => {
        this.writing = undefined;
        this.ended = n;
        if (this.waiters.length) {
          const due = this.waiters.filter((w) => w.upTo <= n);
          this.waiters = this.waiters.filter((w) => w.upTo > n);
          for (const w of due) w.done();
        }
        this.schedule();
      });
  }

  private async write(rows: InflightRequest[], drops: string[]): Promise<void> {
    // Unreachable store: not retried; the request's record waits in the journal of a live instance.
    await this.sql.unsafe(WRITE, [JSON.stringify(rows), this.instance, JSON.stringify(drops)]);
  }

  /**
   * Settles once the write under way, if any, has ended (or failed); in strict mode, once the
   * rows handed over so far are written. The journal ships records only after: a request whose
   * row was being written when it ended has that row in the book before its record's insert
   * looks for it to take it out.
   */
  idle(): Promise<void> {
    const upTo =
      this.strict && (this.waiting.size || this.drops.length) ? this.begun + 1 : this.writing ? this.begun : this.ended;
    return this.until(upTo);
  }

  /**
   * Strict mode: settles once this request's row is written (or its write failed); undefined
   * when it already is, or in the default mode (nobody waits for a row there). The journal
   * waits for it, bounded, before it tells the client the request is done.
   */
  written(requestId: string): Promise<void> | undefined {
    if (!this.strict) return undefined;
    const n = this.carriedBy.get(requestId);
    if (n === undefined) return undefined;
    this.carriedBy.delete(requestId);
    // Not begun: the next write carries it (every row is due at once, at most one write is under way).
    const upTo = n === 0 ? this.begun + 1 : n;
    return upTo <= this.ended ? undefined : this.until(upTo);
  }

  private until(upTo: number): Promise<void> {
    if (upTo <= this.ended) return Promise.resolve();
    return new Promise((done) => this.waiters.push({ upTo, done }));
  }

  /** Bills the requests of dead instances; now and then also clears rows whose record landed, and old instances. */
  async reap(): Promise<Reaped[]> {
    const rows: { request_id: string; key_id: string; budgets: string; reserved_usd: number; cost_usd: number }[] =
      await this.sql.unsafe(REAP, [this.opts.leaseMs / 1000]);
    // The book's rows live for one request each, thousands a second under load: its dead rows
    // are cleared at every look, whatever the server's autovacuum does (left a minute, they made
    // every insert of records scan them: 3,700 → 900 requests/s in 20 s).
    await this.sql.unsafe("VACUUM (ANALYZE) inflight").catch((e) => {
      // A role that may not vacuum the table (not its owner): said once, the book still works.
      if (!this.vacuumRefused) this.opts.onError?.("vacuuming the book of requests in flight", e);
      this.vacuumRefused = true;
    });
    if (++this.reaps % 12 === 0) {
      // Rows whose record landed (rare: a row written while its record's insert ran on another
      // connection, neither seeing the other), looked up by key in the ledger, which is large
      // where the book is small. Harmless meanwhile: a survivor's reaping skips a recorded request.
      const old: { request_id: string }[] = await this
        .sql`SELECT request_id FROM inflight WHERE created_at < ${new Date(Date.now() - 60_000).toISOString()} LIMIT 10000`;
      const ids = old.map((r) => r.request_id);
      if (ids.length) {
        await this.sql.unsafe(
          "DELETE FROM inflight WHERE request_id IN (SELECT request_id FROM usage WHERE request_id = ANY (ARRAY(SELECT json_array_elements_text($1::text::json))))",
          [JSON.stringify(ids)],
        );
      }
      await this.sql`DELETE FROM instances WHERE beat_at < now() - interval '1 day'`;
    }
    const reaped = rows.map((r) => ({ ...r, budgets: JSON.parse(r.budgets) as string[] })); // written by `open` as a JSON array of ids
    if (reaped.length) this.opts.onReaped?.(reaped);
    return reaped;
  }

  /**
   * Stops beating; writes what is left (a request still running at close is in the book, for the
   * others to bill); the instance's row goes once its requests are all recorded (`close` runs
   * after the journal's).
   */
  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (;;) {
      await this.idle();
      if (!this.waiting.size && !this.drops.length) break;
      this.flush(true);
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this
      .sql`DELETE FROM instances WHERE id = ${this.instance} AND NOT EXISTS (SELECT 1 FROM inflight WHERE instance = ${this.instance})`.catch(
      () => {},
    );
  }
}
