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
  /** Told each request it billed for a dead instance (to settle that request's budgets). */
  onReaped?: (rows: Reaped[]) => void;
  onError?: (what: string, e: unknown) => void;
}

const COLUMNS =
  "request_id text, key_id text, model text, endpoint text, stream bool, input_tokens int4, cost_usd float8, reserved_usd float8, budgets json, created_at text";

/**
 * Only rows whose request has no record yet: a row that arrived after its record would be billed
 * by nobody and never leave (the journal ships after these writes, see `idle`, so this is the
 * second guard).
 */
const OPEN = `INSERT INTO inflight (request_id, instance, key_id, model, endpoint, stream, input_tokens, cost_usd, reserved_usd, budgets, created_at)
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
  SELECT request_id, key_id, model, endpoint, stream, input_tokens, 0, 0, 0, 0, cost_usd, 499, 0, 0, true, true, created_at FROM dead
  ON CONFLICT (request_id) DO NOTHING
  RETURNING request_id
)
SELECT d.request_id, d.key_id, d.budgets, d.reserved_usd, d.cost_usd FROM dead d JOIN billed b USING (request_id)`;

/**
 * The book of requests in flight in PostgreSQL (`inflight`), beside each instance's heartbeat
 * (`instances`). A request's row is written at admission, batched with the others of the same
 * turn of the event loop (one insert, never awaited by a request); it leaves in the transaction
 * that inserts its usage record (postgres-store.ts), or when it ends with no record. Every
 * instance beats every `beatMs`; one silent for `leaseMs` is dead, and whichever survivor looks
 * first bills its requests in flight. The ledger stays exactly-once: a record and a reaped row
 * insert the same request id, and the second is ignored (an instance that was only slow finds its
 * request already billed, as estimated).
 */
export class PostgresInflightBook implements InflightBook {
  /** This process's name in `instances`: a new one at each start. */
  readonly instance = `i-${randomBytes(8).toString("hex")}`;
  private pending: InflightRequest[] = [];
  private drops: string[] = [];
  private scheduled = false;
  /** The write under way: at most one; what is handed over meanwhile goes into the next. */
  private writing: Promise<void> | undefined;
  /** Writes begun and ended, counted: `idle` waits for the one that carries what it was handed. */
  private begun = 0;
  private ended = 0;
  private waiters: { upTo: number; done: () => void }[] = [];
  /** The write that carries each request's row, until its record asks (`written`). */
  private carriedBy = new Map<string, number>();
  private timers: ReturnType<typeof setInterval>[] = [];
  private reaps = 0;
  private vacuumRefused = false;
  private readonly opts: Required<Pick<InflightOptions, "beatMs" | "leaseMs" | "reapMs">> & InflightOptions;

  constructor(
    private readonly sql: SQL,
    opts: InflightOptions = {},
  ) {
    this.opts = { beatMs: 3000, leaseMs: 20_000, reapMs: 5000, ...opts };
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
    this.pending.push(r);
    this.carriedBy.set(r.request_id, this.begun + 1);
    this.schedule();
  }

  drop(requestId: string): void {
    this.carriedBy.delete(requestId);
    const i = this.pending.findIndex((r) => r.request_id === requestId);
    if (i !== -1) this.pending.splice(i, 1);
    else {
      this.drops.push(requestId);
      this.schedule();
    }
  }

  private schedule(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** One write for everything handed over since the last; when it ends, the next if more came. */
  private flush(): void {
    if (this.writing || (!this.pending.length && !this.drops.length)) return;
    const rows = this.pending;
    const drops = this.drops;
    this.pending = [];
    this.drops = [];
    const n = ++this.begun;
    for (const r of rows) if (this.carriedBy.has(r.request_id)) this.carriedBy.set(r.request_id, n);
    this.writing = this.write(rows, drops)
      .catch((e) => this.opts.onError?.("writing requests in flight", e))
      .finally(() => {
        this.writing = undefined;
        this.ended = n;
        const due = this.waiters.filter((w) => w.upTo <= n);
        this.waiters = this.waiters.filter((w) => w.upTo > n);
        for (const w of due) w.done();
        this.flush();
      });
  }

  private async write(rows: InflightRequest[], drops: string[]): Promise<void> {
    // Unreachable store: not retried; the request's record waits in the journal of a live instance.
    if (rows.length) await this.sql.unsafe(OPEN, [JSON.stringify(rows), this.instance]);
    if (drops.length) await this.sql`DELETE FROM inflight WHERE request_id IN ${this.sql(drops)}`;
  }

  /**
   * Settles once the rows handed over so far are written (or their write failed). The journal
   * ships records only after, and tells a client its request is done only after: a request
   * whose instance dies is then in the ledger, or in the book where the others bill it.
   */
  idle(): Promise<void> {
    // Rows not yet sent go in the next write (number begun + 1); else the one under way carries them.
    const upTo = this.pending.length || this.drops.length ? this.begun + 1 : this.writing ? this.begun : this.ended;
    if (upTo <= this.ended) return Promise.resolve();
    return new Promise((done) => this.waiters.push({ upTo, done }));
  }

  /**
   * Settles once this request's row is written (or its write failed); undefined for a request
   * that ran longer than a write, so only one that ended within a round trip of its admission
   * waits. The journal waits for it before it tells the client the request is done.
   */
  written(requestId: string): Promise<void> | undefined {
    const n = this.carriedBy.get(requestId);
    this.carriedBy.delete(requestId);
    if (n === undefined || n <= this.ended) return undefined;
    return new Promise((done) => this.waiters.push({ upTo: n, done }));
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
      // Rows whose record landed (none should be: the journal writes a row before its record),
      // looked up by key in the ledger, which is large where the book is small.
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

  /** Stops beating; the instance's row goes, once its requests are all recorded (`close` runs after the journal's). */
  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    await this.idle();
    await this
      .sql`DELETE FROM instances WHERE id = ${this.instance} AND NOT EXISTS (SELECT 1 FROM inflight WHERE instance = ${this.instance})`.catch(
      () => {},
    );
  }
}
