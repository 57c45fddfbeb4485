import type { Store } from "./store";
import type { SqlRunner, SqlValue } from "./sql-runner";

/**
 * Batch files, jobs and their lines, durable in the gateway's database (SQLite or PostgreSQL,
 * migrations 10 and 11), over the one SQL runner of storage/sql-runner.ts. One worker at a time holds a job (a lease in its row, taken by a single
 * conditional UPDATE, renewed while it works, given back on a clean stop); a line is marked
 * `sent` before its call, so a line whose worker died mid-call is never sent twice: the next
 * holder writes it to the error file as interrupted.
 */

/**
 * A stored file: a batch's input JSONL, or one of its output or error files. Its content is kept
 * apart, in chunks of about {@link FILE_CHUNK_BYTES} (migration 14), written and read one chunk
 * per statement ({@link BatchStore.putFile}, {@link BatchStore.fileChunks}).
 */
export interface BatchFile {
  id: string;
  key_id: string;
  purpose: string;
  filename: string;
  bytes: number;
  created_at: string;
}

/**
 * A file's content is stored and read in pieces of this size (1 MiB), one statement each with a
 * turn of the event loop between: a 100 MB file in one row held the loop for 0.5–2 s while
 * SQLite copied it (and again when its write-ahead log was checkpointed).
 */
export const FILE_CHUNK_BYTES = 1 << 20;

/** A file's row while its chunks are being written: not yet a file to any reader. */
const WRITING = -1;

const bytesOf = (v: unknown): Uint8Array => (v instanceof Uint8Array ? v : Buffer.from(str(v)));

/**
 * Rows of JSONL (a `null` row is left out) packed into chunks of about {@link FILE_CHUNK_BYTES},
 * the event loop given a turn every few milliseconds while the rows are made (`pause`).
 */
export async function* jsonlChunks(
  rows: AsyncIterable<string | null>,
  pause: () => Promise<void> = () => Promise.resolve(),
): AsyncGenerator<Uint8Array> {
  let parts: string[] = [];
  let size = 0;
  for await (const r of rows) {
    if (r !== null) {
      parts.push(r, "\n");
      size += r.length + 1;
      if (size >= FILE_CHUNK_BYTES) {
        yield Buffer.from(parts.join(""));
        parts = [];
        size = 0;
      }
    }
    await pause();
  }
  if (size > 0) yield Buffer.from(parts.join(""));
}

/** Which client API made the job: the chat family's `/v1/batches`, or the messages format's `/v1/messages/batches`. */
export type BatchKind = "openai" | "messages";

/** Where a job stands; `active` jobs are the ones a worker may claim. */
export type BatchState = "active" | "cancelling" | "done";

/** A job: its client-facing object kept as JSON (`object`), plus the fields the worker selects on. */
export interface BatchJob {
  id: string;
  key_id: string;
  kind: BatchKind;
  state: BatchState;
  /** The client's view, updated as the job goes (counts, status, file ids, timestamps). */
  object: Record<string, unknown>;
  created_at: string;
  expires_at: string;
  /** Its lines have been sorted between upstream batches and Turnpike's own queue (migration 11). */
  routed: boolean;
}

/**
 * A group of a job's lines sent to one upstream's own batch API (one vendor, one endpoint):
 * `new` (decided, not yet sent) → `submitted` (the upstream's batch id kept) → `ended` (its
 * results read into the lines); `queued` when the upstream would not take it (its lines went to
 * Turnpike's queue instead).
 */
export type GroupState = "new" | "submitted" | "cancelling" | "ended" | "queued";

export interface BatchGroup {
  batch_id: string;
  grp: number;
  vendor: string;
  /** The upstream endpoint its lines call (`/v1/chat/completions`, `/v1/embeddings`, `/v1/messages`). */
  endpoint: string;
  /** The upstream's batch id, once it took the batch. */
  upstream_id: string | null;
  state: GroupState;
}

/** A line: `pending` → `sent` → `done`; or `cancelled` / `expired` unsent. */
export type LineState = "pending" | "sent" | "done" | "cancelled" | "expired";

export interface BatchLine {
  batch_id: string;
  n: number;
  custom_id: string;
  /** The line's request: `{method, url, body}` (chat family) or `{params}` (messages). JSON text. */
  request: string;
  state: LineState;
  /** The line's result as the client will read it, JSON text; set when `done`. */
  result: string | null;
  /** The line failed (it goes to the error file / `errored`). */
  failed: boolean;
  /** The upstream batch group it was sent in; null: Turnpike's own queue runs it. */
  grp: number | null;
  /** The upstream batch's answer to it, `{status, body}` JSON text, once read; replayed through the pipeline. */
  upstream_result: string | null;
  /**
   * The budget reservation (USD) its admission holds in the shared spend store (Redis) while the
   * vendor holds the line (migration 19): whoever settles or gives it back takes it from here
   * ({@link BatchStore.takeReserved}), once, whichever instance that is and across a restart.
   * Null: nothing held there (not sent, held in one process's memory, or already given back).
   */
  reserved_usd: number | null;
  /**
   * The external guardrail hooks' answers to the line, JSON text (migration 23): kept when it is
   * first prepared, read by its sending, its replay and a run in the queue, so a line asks a hook
   * once (batches/prepare-line.ts `LineHooks`). Spans and categories, never a value. Null: none asked.
   */
  hook_answers: string | null;
}

/** Counts of a job's lines by how they ended. */
export interface LineCounts {
  total: number;
  succeeded: number;
  failed: number;
  pending: number;
  cancelled: number;
  expired: number;
}

/**
 * The counts from lines grouped by state and failure (`n` lines each): the store counts them,
 * so a batch object never reads its lines' requests (50,000 lines of 2 KB were 100 MB read on
 * the event loop at each `GET` of the batch).
 */
export function lineCounts(groups: readonly { state: string; failed: boolean; n: number }[]): LineCounts {
  const c: LineCounts = { total: 0, succeeded: 0, failed: 0, pending: 0, cancelled: 0, expired: 0 };
  for (const g of groups) {
    c.total += g.n;
    if (g.state === "done") g.failed ? (c.failed += g.n) : (c.succeeded += g.n);
    else if (g.state === "cancelled") c.cancelled += g.n;
    else if (g.state === "expired") c.expired += g.n;
    else c.pending += g.n;
  }
  return c;
}

const str = (v: unknown): string => (typeof v === "string" ? v : String(v));

function jobOf(row: Record<string, unknown>): BatchJob {
  return {
    id: str(row.id),
    key_id: str(row.key_id),
    kind: str(row.kind) === "messages" ? "messages" : "openai",
    state: str(row.state) as BatchState, // written only by this store, from BatchState
    object: JSON.parse(str(row.object)) as Record<string, unknown>, // written only by this store, from an object
    created_at: str(row.created_at),
    expires_at: str(row.expires_at),
    routed: Number(row.routed ?? 0) === 1,
  };
}

function lineOf(row: Record<string, unknown>): BatchLine {
  return {
    batch_id: str(row.batch_id),
    n: Number(row.n),
    custom_id: str(row.custom_id),
    request: str(row.request),
    state: str(row.state) as LineState, // written only by this store, from LineState
    result: row.result === null || row.result === undefined ? null : str(row.result),
    failed: Number(row.failed) === 1,
    grp: row.grp === null || row.grp === undefined ? null : Number(row.grp),
    upstream_result:
      row.upstream_result === null || row.upstream_result === undefined ? null : str(row.upstream_result),
    reserved_usd: row.reserved_usd === null || row.reserved_usd === undefined ? null : Number(row.reserved_usd),
    hook_answers: row.hook_answers === null || row.hook_answers === undefined ? null : str(row.hook_answers),
  };
}

function groupOf(row: Record<string, unknown>): BatchGroup {
  return {
    batch_id: str(row.batch_id),
    grp: Number(row.grp),
    vendor: str(row.vendor),
    endpoint: str(row.endpoint),
    upstream_id: row.upstream_id === null || row.upstream_id === undefined ? null : str(row.upstream_id),
    state: str(row.state) as GroupState, // written only by this store, from GroupState
  };
}

/** The batch tables, over either database. */
export class BatchStore {
  constructor(private readonly db: SqlRunner) {}

  /**
   * Stores a file's content, `chunks` one per statement with `between` (a turn of the event
   * loop) after each. The file's row comes first, marked as being written, so that a purge never
   * takes the chunks of a file still arriving for orphans; it becomes a file, its size set, once
   * its last chunk is in. With `skipEmpty`, content with no chunk stores nothing (returns
   * undefined). A failure removes what was written. Returns the file as stored.
   */
  async putFile(
    f: Omit<BatchFile, "bytes">,
    chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    between: () => Promise<void> = () => Promise.resolve(),
    skipEmpty = false,
  ): Promise<BatchFile | undefined> {
    let n = 0;
    let bytes = 0;
    let started = false;
    const start = () =>
      this.db.run(
        "INSERT INTO batch_files (id, key_id, purpose, filename, bytes, content, created_at, chunks) VALUES (?, ?, ?, ?, 0, '', ?, ?)",
        [f.id, f.key_id, f.purpose, f.filename, f.created_at, WRITING],
      );
    try {
      for await (const chunk of chunks) {
        if (chunk.byteLength === 0) continue;
        if (!started) {
          started = true;
          await start();
        }
        await this.db.run("INSERT INTO batch_file_chunks (file_id, n, content) VALUES (?, ?, ?)", [f.id, n, chunk]);
        n++;
        bytes += chunk.byteLength;
        await between();
      }
      if (!started) {
        if (skipEmpty) return undefined;
        await start();
      }
      await this.db.run("UPDATE batch_files SET chunks = ?, bytes = ? WHERE id = ?", [n, bytes, f.id]);
      return { ...f, bytes };
    } catch (e) {
      if (started) await this.dropFile(f.id).catch(() => {});
      throw e;
    }
  }

  async getFile(keyId: string, id: string): Promise<BatchFile | undefined> {
    const [row] = await this.db.all(
      "SELECT id, key_id, purpose, filename, bytes, created_at FROM batch_files WHERE id = ? AND key_id = ? AND (chunks IS NULL OR chunks >= 0)",
      [id, keyId],
    );
    return row
      ? {
          id: str(row.id),
          key_id: str(row.key_id),
          purpose: str(row.purpose),
          filename: str(row.filename),
          bytes: Number(row.bytes),
          created_at: str(row.created_at),
        }
      : undefined;
  }

  /**
   * A file's content, a chunk per read (the caller gives the loop its turns between them). A
   * file stored before migration 14 has its content in its row (no chunks): read as one piece.
   */
  async *fileChunks(id: string): AsyncGenerator<Uint8Array> {
    const [row] = await this.db.all("SELECT chunks FROM batch_files WHERE id = ?", [id]);
    if (!row) return;
    if (row.chunks === null || row.chunks === undefined) {
      const [old] = await this.db.all("SELECT content FROM batch_files WHERE id = ?", [id]);
      if (old && str(old.content) !== "") yield Buffer.from(str(old.content));
      return;
    }
    const count = Number(row.chunks);
    for (let n = 0; n < count; n++) {
      const [c] = await this.db.all("SELECT content FROM batch_file_chunks WHERE file_id = ? AND n = ?", [id, n]);
      if (!c) throw new Error(`file ${id} lost its chunk ${n} while it was read (it was deleted)`);
      yield bytesOf(c.content);
    }
  }

  /**
   * Deletes a key's file and its chunks; false when the key has no such file. The row goes
   * first (no reader finds the file after that), then the chunks one per statement, `between`
   * after each: a 100 MB file's pages freed in one statement hold the loop as long as writing them.
   */
  async deleteFile(
    keyId: string,
    id: string,
    between: () => Promise<void> = () => Promise.resolve(),
  ): Promise<boolean> {
    const [row] = await this.db.all(
      "SELECT id FROM batch_files WHERE id = ? AND key_id = ? AND (chunks IS NULL OR chunks >= 0)",
      [id, keyId],
    );
    if (!row) return false;
    await this.dropFile(id, between);
    return true;
  }

  /** A file's row, then its chunks one per statement. */
  private async dropFile(id: string, between: () => Promise<void> = () => Promise.resolve()) {
    await this.db.run("DELETE FROM batch_files WHERE id = ?", [id]);
    const [last] = await this.db.all("SELECT MAX(n) AS n FROM batch_file_chunks WHERE file_id = ?", [id]);
    const count = last?.n === null || last?.n === undefined ? 0 : Number(last.n) + 1;
    for (let n = 0; n < count; n++) {
      await this.db.run("DELETE FROM batch_file_chunks WHERE file_id = ? AND n = ?", [id, n]);
      await between();
    }
  }

  /**
   * The job and all its lines. The lines are written first, a page per transaction with a turn
   * of the event loop between pages (`between`): 50,000 lines of 2 KB in one SQLite transaction
   * held the loop for over a second. Nothing reads a line but through its job, so the job row,
   * written last, is what makes them a batch; a failure removes the lines written, and lines a
   * crash left without a job are removed by the next purge.
   */
  async createJob(
    job: Omit<BatchJob, "routed">,
    lines: readonly Omit<BatchLine, "batch_id" | "grp" | "upstream_result" | "reserved_usd" | "hook_answers">[],
    between: () => Promise<void> = () => Promise.resolve(),
  ): Promise<void> {
    try {
      for (let at = 0; at < lines.length; at += LINES_PAGE) {
        const page = lines.slice(at, at + LINES_PAGE);
        const values = page.map(() => "(?, ?, ?, ?, ?, ?, ?)").join(", ");
        const params = page.flatMap((l) => [job.id, l.n, l.custom_id, l.request, l.state, l.result, l.failed ? 1 : 0]);
        await this.db.run(
          `INSERT INTO batch_lines (batch_id, n, custom_id, request, state, result, failed) VALUES ${values}`,
          params,
        );
        await between();
      }
      await this.db.run(
        "INSERT INTO batch_jobs (id, key_id, kind, state, object, created_at, expires_at, lease_owner, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL)",
        [job.id, job.key_id, job.kind, job.state, JSON.stringify(job.object), job.created_at, job.expires_at],
      );
    } catch (e) {
      await this.db.run("DELETE FROM batch_lines WHERE batch_id = ?", [job.id]).catch(() => {});
      throw e;
    }
  }

  async getJob(keyId: string, id: string): Promise<BatchJob | undefined> {
    const [row] = await this.db.all("SELECT * FROM batch_jobs WHERE id = ? AND key_id = ?", [id, keyId]);
    return row ? jobOf(row) : undefined;
  }

  /** A key's jobs of one kind, newest first, after the cursor `after` (a job id) if given. */
  async listJobs(keyId: string, kind: BatchKind, limit: number, after?: string): Promise<BatchJob[]> {
    const rows = after
      ? await this.db.all(
          "SELECT * FROM batch_jobs WHERE key_id = ? AND kind = ? AND created_at || id < (SELECT created_at || id FROM batch_jobs WHERE id = ?) ORDER BY created_at DESC, id DESC LIMIT ?",
          [keyId, kind, after, limit],
        )
      : await this.db.all(
          "SELECT * FROM batch_jobs WHERE key_id = ? AND kind = ? ORDER BY created_at DESC, id DESC LIMIT ?",
          [keyId, kind, limit],
        );
    return rows.map(jobOf);
  }

  /** Writes the job's state and object. */
  async saveJob(job: Omit<BatchJob, "routed">): Promise<void> {
    await this.db.all("UPDATE batch_jobs SET state = ?, object = ? WHERE id = ?", [
      job.state,
      JSON.stringify(job.object),
      job.id,
    ]);
  }

  /**
   * Takes one job no live worker holds (never held, lease run out, or given back), for `owner`
   * until `until`: one conditional UPDATE, so two workers never hold the same job.
   */
  async claim(owner: string, nowIso: string, untilIso: string): Promise<BatchJob | undefined> {
    const [row] = await this.db.all(
      `UPDATE batch_jobs SET lease_owner = ?, lease_until = ?
       WHERE id = (SELECT id FROM batch_jobs WHERE state <> 'done' AND (lease_until IS NULL OR lease_until < ?) ORDER BY created_at, id LIMIT 1)
         AND state <> 'done' AND (lease_until IS NULL OR lease_until < ?)
       RETURNING *`,
      [owner, untilIso, nowIso, nowIso],
    );
    return row ? jobOf(row) : undefined;
  }

  /** Extends the lease; false when `owner` no longer holds the job. */
  async renew(id: string, owner: string, untilIso: string): Promise<boolean> {
    const rows = await this.db.all(
      "UPDATE batch_jobs SET lease_until = ? WHERE id = ? AND lease_owner = ? RETURNING id",
      [untilIso, id, owner],
    );
    return rows.length > 0;
  }

  /** Gives the job back (a clean stop): another worker may take it at once. */
  async release(id: string, owner: string): Promise<void> {
    await this.db.all("UPDATE batch_jobs SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?", [
      id,
      owner,
    ]);
  }

  /** The job's state as stored now (a cancel may have come through another instance). */
  async stateOf(id: string): Promise<BatchState | undefined> {
    const [row] = await this.db.all("SELECT state FROM batch_jobs WHERE id = ?", [id]);
    return row ? (str(row.state) as BatchState) : undefined; // written only by this store
  }

  /**
   * The next pending line Turnpike's queue runs (in no upstream group), or with `answered` the
   * next line whose upstream batch answered it; marked `sent` in the same statement.
   */
  async takeLine(batchId: string, answered = false): Promise<BatchLine | undefined> {
    const [row] = await this.db.all(takeLineSql(answered), [batchId, batchId]);
    return row ? lineOf(row) : undefined;
  }

  /**
   * Where each line goes, decided once per job: the upstream groups made (`new`), each line's
   * group set, and the job marked routed — in one transaction.
   */
  async route(
    batchId: string,
    groups: readonly Pick<BatchGroup, "grp" | "vendor" | "endpoint">[],
    lines: readonly { n: number; grp: number }[],
    between: () => Promise<void> = () => Promise.resolve(),
  ): Promise<void> {
    // The groups first (a routing cut short before, by a crash, is undone), then the lines' groups
    // a page per transaction with a turn of the event loop between (50,000 lines rewritten in one
    // SQLite transaction held the loop for over a second), and last the job marked routed: until
    // then no line of a group is sent, and a worker that takes the job over routes it again.
    await this.db.transaction(async (tx) => {
      const [again] = await tx.all("SELECT COUNT(*) AS n FROM batch_groups WHERE batch_id = ?", [batchId]);
      if (Number(again?.n ?? 0) > 0) {
        await tx.all("DELETE FROM batch_groups WHERE batch_id = ?", [batchId]);
        await tx.all("UPDATE batch_lines SET grp = NULL WHERE batch_id = ? AND grp IS NOT NULL", [batchId]);
      }
      for (const g of groups)
        await tx.all(
          "INSERT INTO batch_groups (batch_id, grp, vendor, endpoint, upstream_id, state) VALUES (?, ?, ?, ?, NULL, 'new')",
          [batchId, g.grp, g.vendor, g.endpoint],
        );
    });
    for (let at = 0; at < lines.length; at += LINES_PAGE) {
      const page = lines.slice(at, at + LINES_PAGE);
      await this.db.transaction(async (tx) => {
        for (const l of page)
          await tx.all("UPDATE batch_lines SET grp = ? WHERE batch_id = ? AND n = ?", [l.grp, batchId, l.n]);
      });
      await between();
    }
    await this.db.all("UPDATE batch_jobs SET routed = 1 WHERE id = ?", [batchId]);
  }

  async groups(batchId: string): Promise<BatchGroup[]> {
    return (await this.db.all("SELECT * FROM batch_groups WHERE batch_id = ? ORDER BY grp", [batchId])).map(groupOf);
  }

  /** A group's lines still waiting (pending), in order. */
  async groupLines(batchId: string, grp: number): Promise<BatchLine[]> {
    return (
      await this.db.all("SELECT * FROM batch_lines WHERE batch_id = ? AND grp = ? AND state = 'pending' ORDER BY n", [
        batchId,
        grp,
      ])
    ).map(lineOf);
  }

  /** The upstream took the group's batch: its id kept, so that no instance sends it again. */
  async submitted(batchId: string, grp: number, upstreamId: string): Promise<void> {
    await this.db.all(
      "UPDATE batch_groups SET upstream_id = ?, state = 'submitted' WHERE batch_id = ? AND grp = ? AND state = 'new'",
      [upstreamId, batchId, grp],
    );
  }

  async setGroupState(batchId: string, grp: number, state: GroupState): Promise<void> {
    await this.db.all("UPDATE batch_groups SET state = ? WHERE batch_id = ? AND grp = ?", [state, batchId, grp]);
  }

  /**
   * The upstream would not take the group: its lines go to Turnpike's own queue, a page per
   * statement with `between` after each (50,000 lines moved in one statement held the loop for
   * 0.3 s), then the group is marked. A stop part way leaves the group as it was, with its lines
   * still in it sent as before and the ones moved run by the queue: each line runs once.
   */
  /** One line out of its upstream group, back to Turnpike's queue (refused admission when it was to be sent). */
  async unroute(batchId: string, n: number): Promise<void> {
    await this.db.all("UPDATE batch_lines SET grp = NULL WHERE batch_id = ? AND n = ? AND state = 'pending'", [
      batchId,
      n,
    ]);
  }

  async requeue(batchId: string, grp: number, between: () => Promise<void> = () => Promise.resolve()): Promise<void> {
    for (;;) {
      const moved = await this.db.all(
        "UPDATE batch_lines SET grp = NULL WHERE batch_id = ? AND n IN (SELECT n FROM batch_lines WHERE batch_id = ? AND grp = ? AND state = 'pending' ORDER BY n LIMIT ?) RETURNING n",
        [batchId, batchId, grp, LINES_PAGE],
      );
      if (moved.length === 0) break;
      await between();
    }
    await this.db.all("UPDATE batch_groups SET state = 'queued' WHERE batch_id = ? AND grp = ?", [batchId, grp]);
  }

  /**
   * The upstream batch ended: each answered line's result kept, a page per transaction with
   * `between` after each (50,000 answers kept in one transaction would hold the loop for
   * seconds), then the lines it never answered closed as `unanswered` (cancelled or expired) and
   * the group ended, together. A stop part way leaves the group `submitted`: it is read again at
   * the next poll, and a line already replayed is no longer pending, so not kept twice.
   */
  async groupEnded(
    batchId: string,
    grp: number,
    results: ReadonlyMap<number, string>,
    unanswered: "cancelled" | "expired",
    between: () => Promise<void> = () => Promise.resolve(),
  ): Promise<void> {
    const answers = [...results];
    for (let at = 0; at < answers.length; at += LINES_PAGE) {
      const page = answers.slice(at, at + LINES_PAGE);
      await this.db.transaction(async (tx) => {
        for (const [n, result] of page)
          await tx.all(
            "UPDATE batch_lines SET upstream_result = ? WHERE batch_id = ? AND n = ? AND grp = ? AND state = 'pending'",
            [result, batchId, n, grp],
          );
      });
      await between();
    }
    await this.db.transaction(async (tx) => {
      await tx.all(
        "UPDATE batch_lines SET state = ? WHERE batch_id = ? AND grp = ? AND state = 'pending' AND upstream_result IS NULL",
        [unanswered, batchId, grp],
      );
      await tx.all("UPDATE batch_groups SET state = 'ended' WHERE batch_id = ? AND grp = ?", [batchId, grp]);
    });
  }

  /** Lines not yet done (pending or sent). */
  async openLines(batchId: string): Promise<number> {
    const [row] = await this.db.all(
      "SELECT COUNT(*) AS n FROM batch_lines WHERE batch_id = ? AND state IN ('pending', 'sent')",
      [batchId],
    );
    return Number(row?.n ?? 0);
  }

  /**
   * Gives the job back until `untilIso`: it waits on upstream batches only, so no worker needs to
   * hold it; any worker takes it again after that (or at once after {@link wake}).
   */
  async park(id: string, owner: string, untilIso: string): Promise<void> {
    await this.db.all("UPDATE batch_jobs SET lease_owner = NULL, lease_until = ? WHERE id = ? AND lease_owner = ?", [
      untilIso,
      id,
      owner,
    ]);
  }

  /** A parked job may be taken at once (it was cancelled). */
  async wake(id: string): Promise<void> {
    await this.db.all("UPDATE batch_jobs SET lease_until = NULL WHERE id = ? AND lease_owner IS NULL", [id]);
  }

  async finishLine(
    batchId: string,
    n: number,
    state: LineState,
    result: string | null,
    failed: boolean,
  ): Promise<void> {
    await this.db.all("UPDATE batch_lines SET state = ?, result = ?, failed = ? WHERE batch_id = ? AND n = ?", [
      state,
      result,
      failed ? 1 : 0,
      batchId,
      n,
    ]);
  }

  /**
   * Lines `sent` whose worker went away before their result: the caller writes them off. Found
   * by the state index and put in order here (ordered by the database, they were found by
   * reading every line of the job: 33 ms at 50,000 lines, as each job is taken).
   */
  async orphans(batchId: string): Promise<BatchLine[]> {
    return (await this.db.all(ORPHANS_SQL, [batchId])).map(lineOf).sort((a, b) => a.n - b.n);
  }

  /** Keeps a line's external-hook answers (JSON text), for every later reading of the line. */
  async keepHookAnswers(batchId: string, n: number, answers: string): Promise<void> {
    await this.db.all("UPDATE batch_lines SET hook_answers = ? WHERE batch_id = ? AND n = ?", [answers, batchId, n]);
  }

  /** Keeps what a line's admission holds in the shared spend store (null: nothing there). */
  async reserved(batchId: string, n: number, usd: number | null): Promise<void> {
    await this.db.all("UPDATE batch_lines SET reserved_usd = ? WHERE batch_id = ? AND n = ?", [usd, batchId, n]);
  }

  /**
   * Takes the shared reservations of a job's lines (one line, one group's, or all), in one
   * statement: each is answered to one caller only, so two instances (or one before and after a
   * restart) never give the same reservation back twice. `unanswered`: only lines with no upstream
   * answer kept (the answered keep theirs until they are replayed and metered).
   */
  async takeReserved(
    batchId: string,
    which: { n?: number; grp?: number; unanswered?: boolean } = {},
  ): Promise<Map<number, number>> {
    const where = ["batch_id = ?", "reserved_usd IS NOT NULL"];
    const params: SqlValue[] = [batchId];
    for (const col of ["n", "grp"] as const) {
      const v = which[col];
      if (v === undefined) continue;
      where.push(`${col} = ?`);
      params.push(v);
    }
    if (which.unanswered) where.push("upstream_result IS NULL");
    const cond = where.join(" AND ");
    const read = (db: SqlRunner) => db.all(`SELECT n, reserved_usd FROM batch_lines WHERE ${cond}`, params);
    // Most lines keep none (no Redis, or not sent to a vendor): found so without a write.
    if ((await read(this.db)).length === 0) return new Map();
    // RETURNING gives the new value (null): the amounts are read first, in the same transaction,
    // and only the lines this UPDATE cleared are this caller's (another's, waited for, clear none).
    return this.db.transaction(async (tx) => {
      const usd = new Map((await read(tx)).map((r) => [Number(r.n), Number(r.reserved_usd)]));
      const cleared = await tx.all(`UPDATE batch_lines SET reserved_usd = NULL WHERE ${cond} RETURNING n`, params);
      return new Map(cleared.flatMap((r) => (usd.has(Number(r.n)) ? [[Number(r.n), usd.get(Number(r.n))!]] : [])));
    });
  }

  /** Every pending line of Turnpike's queue (with `all`, every pending line) becomes `state`, unsent. */
  async closePending(batchId: string, state: "cancelled" | "expired", all = true): Promise<void> {
    await this.db.all(
      `UPDATE batch_lines SET state = ? WHERE batch_id = ? AND state = 'pending'${all ? "" : " AND grp IS NULL"}`,
      [state, batchId],
    );
  }

  /**
   * Forgets ended jobs made before `beforeIso`, their lines, and every file made before it (its
   * chunks deleted one per statement, `between` after each); returns the jobs removed.
   */
  async purgeBefore(beforeIso: string, between: () => Promise<void> = () => Promise.resolve()): Promise<number> {
    const removed = await this.db.transaction(async (tx) => {
      const jobs = await tx.all("SELECT id, object FROM batch_jobs WHERE state = 'done' AND created_at < ?", [
        beforeIso,
      ]);
      for (const j of jobs) {
        await tx.all("DELETE FROM batch_lines WHERE batch_id = ?", [str(j.id)]);
        await tx.all("DELETE FROM batch_groups WHERE batch_id = ?", [str(j.id)]);
        await tx.all("DELETE FROM batch_jobs WHERE id = ?", [str(j.id)]);
      }
      // Lines whose job was never written (the process died while creating it).
      await tx.all("DELETE FROM batch_lines WHERE batch_id NOT IN (SELECT id FROM batch_jobs)");
      return jobs.length;
    });
    // A job ends within its 24-hour window, so a file older than the retention serves no running
    // job; one whose writing a crash cut short is among them once it is that old.
    const files = await this.db.all("SELECT id FROM batch_files WHERE created_at < ?", [beforeIso]);
    for (const f of files) await this.dropFile(str(f.id), between);
    // Chunks whose file row is gone (a deletion cut short by a crash).
    const orphans = await this.db.all(
      "SELECT DISTINCT file_id FROM batch_file_chunks WHERE file_id NOT IN (SELECT id FROM batch_files)",
    );
    for (const o of orphans) await this.dropFile(str(o.file_id), between);
    return removed;
  }

  /** How many of a job's lines are in each state, counted by the database (no line is read). */
  async lineCounts(batchId: string): Promise<LineCounts> {
    const rows = await this.db.all(
      "SELECT state, failed, COUNT(*) AS n FROM batch_lines WHERE batch_id = ? GROUP BY state, failed",
      [batchId],
    );
    return lineCounts(rows.map((r) => ({ state: str(r.state), failed: Number(r.failed) === 1, n: Number(r.n) })));
  }

  async lines(batchId: string): Promise<BatchLine[]> {
    return (await this.db.all("SELECT * FROM batch_lines WHERE batch_id = ? ORDER BY n", [batchId])).map(lineOf);
  }

  /**
   * A job's lines in order (with `grp`: that group's pending lines), read a page at a time: a
   * job of 50,000 lines holds up to 100 MB of requests, which one read would hold the event loop
   * for while SQLite copies them. The caller gives the loop its turns between lines.
   */
  async *eachLine(batchId: string, grp?: number): AsyncGenerator<BatchLine> {
    let after = 0;
    for (;;) {
      const rows =
        grp === undefined
          ? await this.db.all("SELECT * FROM batch_lines WHERE batch_id = ? AND n > ? ORDER BY n LIMIT ?", [
              batchId,
              after,
              LINES_PAGE,
            ])
          : await this.db.all(
              "SELECT * FROM batch_lines WHERE batch_id = ? AND grp = ? AND state = 'pending' AND n > ? ORDER BY n LIMIT ?",
              [batchId, grp, after, LINES_PAGE],
            );
      for (const row of rows) {
        const line = lineOf(row);
        after = line.n;
        yield line;
      }
      if (rows.length < LINES_PAGE) return;
    }
  }
}

/**
 * The statement that takes the next line (with `answered`, the next one an upstream batch
 * answered): its subquery is answered by one of migration 15's indexes alone.
 */
export function takeLineSql(answered: boolean): string {
  const which = answered ? "grp IS NOT NULL AND upstream_result IS NOT NULL" : "grp IS NULL";
  return `UPDATE batch_lines SET state = 'sent' WHERE batch_id = ? AND n = (SELECT MIN(n) FROM batch_lines WHERE batch_id = ? AND state = 'pending' AND ${which}) AND state = 'pending' RETURNING *`;
}

/** A job's lines in flight ({@link BatchStore.orphans}): by the state index, in no order. */
export const ORPHANS_SQL = "SELECT * FROM batch_lines WHERE batch_id = ? AND state = 'sent'";

/** Lines read or written at once by the paged reads and the job's creation. */
const LINES_PAGE = 200;

/**
 * Migration 15: the next line the queue runs (in no group: `grp IS NULL`), and the next line an
 * upstream batch answered, found from an index alone ({@link BatchStore.takeLine}, once per line:
 * without them each take read through every pending line of the job, 0.1 s a line for 50,000
 * lines of 2 KB); the first also gives a group's pending lines in order (its submission, a requeue).
 */
export const BATCH_LINE_QUEUE_INDEXES = `
CREATE INDEX batch_lines_answered ON batch_lines (batch_id, n) WHERE state = 'pending' AND grp IS NOT NULL AND upstream_result IS NOT NULL;
CREATE INDEX batch_lines_by_group ON batch_lines (batch_id, grp, state, n);`;

/**
 * Migration 13: a job's line counts (each `GET` of a batch) read from this index alone, not from
 * the lines, whose requests a count would otherwise read through.
 */
export const BATCH_LINE_STATE_INDEX = "CREATE INDEX batch_lines_by_state ON batch_lines (batch_id, state, failed);";

/** The tables (migration 10), the same text for both databases. */
export const BATCH_TABLES = `
CREATE TABLE batch_files (id TEXT PRIMARY KEY, key_id TEXT NOT NULL, purpose TEXT NOT NULL, filename TEXT NOT NULL, bytes INTEGER NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE batch_jobs (id TEXT PRIMARY KEY, key_id TEXT NOT NULL, kind TEXT NOT NULL, state TEXT NOT NULL, object TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT NOT NULL, lease_owner TEXT, lease_until TEXT);
CREATE INDEX batch_jobs_by_key ON batch_jobs (key_id, kind, created_at);
CREATE INDEX batch_jobs_by_state ON batch_jobs (state, lease_until);
CREATE TABLE batch_lines (batch_id TEXT NOT NULL, n INTEGER NOT NULL, custom_id TEXT NOT NULL, request TEXT NOT NULL, state TEXT NOT NULL, result TEXT, failed INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (batch_id, n));`;

/**
 * Migration 14: a file's content in chunks, one row each ({@link FILE_CHUNK_BYTES}); the file's
 * row counts them (`chunks`: NULL for a file stored before, its content in its row; -1 while
 * being written). Bytes, so a chunk may end inside a character or a line.
 */
export const batchFileChunks = (bytes: "BLOB" | "BYTEA") => `
CREATE TABLE batch_file_chunks (file_id TEXT NOT NULL, n INTEGER NOT NULL, content ${bytes} NOT NULL, PRIMARY KEY (file_id, n));
ALTER TABLE batch_files ADD COLUMN chunks INTEGER;`;

/**
 * Migration 19: what a line sent to a vendor's batch API holds in the shared spend store, so that
 * whichever instance ends the line (after a restart too) gives back exactly that.
 */
export const batchLineReserve = (real: "REAL" | "DOUBLE PRECISION") =>
  `ALTER TABLE batch_lines ADD COLUMN reserved_usd ${real};`;

/** Migration 23: a line's external-hook answers, asked once per line (the same in both dialects). */
export const BATCH_LINE_HOOK_ANSWERS = "ALTER TABLE batch_lines ADD COLUMN hook_answers TEXT;";

/** Migration 11: lines sent to the upstreams' own batch APIs, in groups, and their answers. */
export const BATCH_GROUP_TABLES = `
ALTER TABLE batch_jobs ADD COLUMN routed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE batch_lines ADD COLUMN grp INTEGER;
ALTER TABLE batch_lines ADD COLUMN upstream_result TEXT;
CREATE TABLE batch_groups (batch_id TEXT NOT NULL, grp INTEGER NOT NULL, vendor TEXT NOT NULL, endpoint TEXT NOT NULL, upstream_id TEXT, state TEXT NOT NULL, PRIMARY KEY (batch_id, grp));`;

/** Batch files, jobs and lines, in the store's own database. */
export function batchStoreOf(store: Store): BatchStore {
  return new BatchStore(store.connection().runner);
}
