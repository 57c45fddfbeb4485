import type { GatewayDeps } from "../wiring/deps";
import { newRequestId } from "../http/request-id";
import { admit, admittedBefore, type Admitted } from "../limits/admit";
import type { KeyRecord } from "../storage/store";
import { isRecord } from "../vocabulary/client-errors";
import { newId } from "./batch-objects";
import { type BatchGroup, type BatchJob, type BatchLine, type BatchStore, jsonlChunks } from "../storage/batch-store";
import { type LineHooks, prepareLine } from "./prepare-line";
import { Slicer, loopTurn } from "../vocabulary/loop-turns";
import { batchCostFactor, type LineEndpoint, runLine, waitAndRetry } from "./run-line";
import { PROTOCOLS, type UpstreamAnswer, UpstreamBatchError, type UpstreamLine } from "../protocols";

/** How often an idle worker looks for work another instance may have queued. */
const POLL_MS = 1000;
/** How often a batch of the built-in simulator is asked whether it has ended. */
const SIMULATED_POLL_MS = 200;
/** How many times a line refused by a rate limit is tried before it is written off. */
const MAX_WAITS = 20;

/** A line's result as the chat family's output or error file holds it. */
function openaiResultLine(line: BatchLine, status: number, requestId: string, body: unknown): string {
  return JSON.stringify({
    id: newId("batch_req_"),
    custom_id: line.custom_id,
    response: { status_code: status, request_id: requestId, body },
    error: null,
  });
}

/** A line that never reached a call, as the error file holds it. */
export function openaiErrorLine(customId: string, code: string, message: string): string {
  return JSON.stringify({ id: newId("batch_req_"), custom_id: customId, response: null, error: { code, message } });
}

/** A messages batch line's result. */
function messagesResultLine(line: BatchLine, status: number, body: unknown): string {
  if (status === 200)
    return JSON.stringify({ custom_id: line.custom_id, result: { type: "succeeded", message: body } });
  const error = isRecord(body) ? body : { type: "error", error: { type: "api_error", message: String(body) } };
  return JSON.stringify({ custom_id: line.custom_id, result: { type: "errored", error } });
}

/** A line never sent: written off in the job's own format. */
export function lineError(job: Pick<BatchJob, "kind">, customId: string, code: string, message: string): string {
  return job.kind === "openai"
    ? openaiErrorLine(customId, code, message)
    : JSON.stringify({
        custom_id: customId,
        result: { type: "errored", error: { type: "error", error: { type: "invalid_request_error", message } } },
      });
}

/** A line's id in an upstream batch: its number in the job (the client's ids may not fit the upstream's rules). */
/** The hook answers kept with a line (written by the worker from `LineHooks`), to be read again. */
const savedHooks = (l: BatchLine): LineHooks =>
  l.hook_answers ? { answers: JSON.parse(l.hook_answers) as Record<string, unknown> } : {};

const upstreamId = (n: number) => `line-${n}`;

/** A stored upstream answer as the reply of the upstream call the pipeline makes when it is replayed. */
function answerWith(a: UpstreamAnswer, calls: { n: number }): typeof fetch {
  const answer = () => {
    calls.n++;
    return Promise.resolve(
      new Response(typeof a.body === "string" ? a.body : JSON.stringify(a.body ?? null), {
        status: a.status,
        headers: { "content-type": "application/json" },
      }),
    );
  };
  return Object.assign(answer, { preconnect: fetch.preconnect });
}

/**
 * Runs batch jobs: takes one no live worker holds (a lease in the store). First it sorts the
 * job's lines once: a line whose model's upstream has a batch API of its own (and not switched
 * off) goes there, translated, in one upstream batch per vendor and endpoint, whose id is kept
 * in the store; the others run through Turnpike's own queue. Queue lines run one at a time
 * through the ordinary pipeline under the key that made the job — one line at a time per
 * instance is its background priority: interactive calls never queue behind a batch — with the
 * lease renewed after each. Upstream batches are polled; once one ends, each answer is replayed
 * through the pipeline (translated back, metered at the batch price, in the ledger). A job that
 * waits on upstream batches only is parked (given back until its next poll), so that any
 * instance resumes it. A stop gives the job back; a crash leaves the lease to run out, and the
 * next holder writes off the line that was in flight instead of sending it twice.
 */
export class BatchWorker {
  private readonly owner = newId("worker_");
  private stopped = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  /**
   * The admissions of lines sent to an upstream's batch API, by job and line: held (their budget
   * reservation with them) until the answer is replayed and metered, or given back when the line
   * is not run (cancelled, expired, the upstream batch refused or failed). A line whose admission
   * is not here (sent by another instance, or before a restart) is replayed as admitted before,
   * and what it holds in the shared spend store is given back from the line's `reserved_usd`.
   * A reservation held in Redis is kept with the line too, and taken from there first: whoever
   * takes it gives it back, so it is given back once, by whichever instance ends the line.
   */
  private readonly held = new Map<string, Map<number, { grp: number; admitted: Admitted }>>();

  constructor(
    private readonly deps: GatewayDeps,
    private readonly store: BatchStore,
  ) {}

  start(): void {
    this.loop ??= this.run();
  }

  /** Work was queued: look now rather than at the next poll. */
  kick(): void {
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }

  private hold(jobId: string, n: number, grp: number, admitted: Admitted): void {
    let lines = this.held.get(jobId);
    if (!lines) this.held.set(jobId, (lines = new Map()));
    lines.get(n)?.admitted.settle(0);
    lines.set(n, { grp, admitted });
  }

  /** A line's held admission, taken out of this process's map. */
  private takeHeld(jobId: string, n: number): Admitted | undefined {
    const lines = this.held.get(jobId);
    const h = lines?.get(n);
    if (!h) return undefined;
    lines!.delete(n);
    if (lines!.size === 0) this.held.delete(jobId);
    return h.admitted;
  }

  /**
   * A line's admission, to be settled by its replay or given back: the one this process holds,
   * or one that gives back what the line kept of a shared reservation. A shared reservation this
   * process holds but the line no longer keeps was given back by another instance: not again.
   */
  private async lineAdmission(job: BatchJob, n: number, key: KeyRecord | undefined): Promise<Admitted | undefined> {
    const usd = (await this.store.takeReserved(job.id, { n })).get(n);
    const own = this.takeHeld(job.id, n);
    if (own && (usd !== undefined || !own.sharedReserveUsd)) return own;
    return key && admittedBefore(this.deps, key, usd ?? 0);
  }

  /**
   * Gives back the admissions of a job's lines (of one group, or all) that will not be replayed;
   * the lines in `answered` keep theirs until they are replayed and metered.
   */
  private async giveBack(job: BatchJob, grp?: number, answered?: ReadonlySet<number>): Promise<void> {
    const taken = await this.store.takeReserved(job.id, { grp, unanswered: answered !== undefined });
    const lines = this.held.get(job.id);
    for (const [n, h] of lines ?? []) {
      if ((grp !== undefined && h.grp !== grp) || answered?.has(n)) continue;
      const usd = taken.get(n);
      taken.delete(n);
      // A shared reservation the line no longer keeps was given back by another instance: not again.
      if (usd !== undefined || !h.admitted.sharedReserveUsd) h.admitted.settle(0);
      lines!.delete(n);
    }
    if (lines?.size === 0) this.held.delete(job.id);
    if (taken.size === 0) return;
    // Held by an instance gone (or by this one before a restart): given back from what the lines kept.
    const key = await this.deps.keys.get(job.key_id);
    if (!key) return;
    for (const usd of taken.values()) admittedBefore(this.deps, key, usd).settle(0);
  }

  private iso(offsetMs = 0): string {
    return new Date(this.deps.now() + offsetMs).toISOString();
  }

  private async idle(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
    this.wake = undefined;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let job: BatchJob | undefined;
      let failed = false;
      try {
        job = await this.store.claim(this.owner, this.iso(), this.iso(this.deps.config.batches.leaseMs));
        if (job) await this.work(job);
      } catch (e) {
        // The store unreachable, or a job it cannot run: logged, and looked at again after a pause, not at once.
        failed = true;
        this.deps.logger.error("batch worker failed", { batch_id: job?.id }, e);
        if (job) await this.store.release(job.id, this.owner).catch(() => {});
      }
      if ((failed || !job) && !this.stopped) await this.idle(POLL_MS);
    }
  }

  private async work(job: BatchJob): Promise<void> {
    // Lines sent by a worker that went away: their outcome is unknown, so they are not sent again.
    for (const l of await this.store.orphans(job.id)) {
      await this.store.finishLine(
        job.id,
        l.n,
        "done",
        lineError(
          job,
          l.custom_id,
          "interrupted",
          "The gateway stopped while this line was in flight; it was not sent again.",
        ),
        true,
      );
    }
    if (!job.routed) await this.route(job);
    let polledAt = Number.NEGATIVE_INFINITY;
    for (;;) {
      if (this.stopped) return this.store.release(job.id, this.owner);
      const state = await this.store.stateOf(job.id);
      const expired = this.deps.now() >= Date.parse(job.expires_at);
      const ending = state === "cancelling" ? "cancelled" : expired ? "expired" : undefined;
      if (ending) await this.store.closePending(job.id, ending, false);
      if (!(await this.store.renew(job.id, this.owner, this.iso(this.deps.config.batches.leaseMs)))) return; // another worker holds it now
      for (const g of await this.store.groups(job.id)) {
        if (g.state === "new" && !ending) await this.submit(job, g);
        else if (g.state === "new") await this.store.groupEnded(job.id, g.grp, new Map(), ending!);
        else if (g.state === "submitted" && ending) await this.cancelUpstream(job, g);
      }
      const groups = await this.store.groups(job.id);
      // Upstream batches are asked at most once per poll interval; answers are replayed as they come.
      if (performance.now() - polledAt >= this.pollMs(groups)) {
        polledAt = performance.now();
        for (const g of groups)
          if (g.state === "submitted" || g.state === "cancelling") await this.poll(job, g, ending);
      }
      const answered = await this.store.takeLine(job.id, true);
      if (answered) {
        await this.runLineOf(job, answered);
        continue;
      }
      const line = ending ? undefined : await this.store.takeLine(job.id);
      if (line) {
        await this.runLineOf(job, line);
        continue;
      }
      if ((await this.store.openLines(job.id)) === 0) return this.finish(job, ending ?? "completed");
      // Only upstream batches are left: parked until the next poll, for whichever instance is free then.
      return this.store.park(job.id, this.owner, this.iso(this.pollMs(groups)));
    }
  }

  /** How long until upstream batches are asked again: the simulator's end quickly, so it is asked often. */
  private pollMs(groups: readonly BatchGroup[]): number {
    const every = this.deps.config.batches.pollMs;
    const simulated = groups.every((g) => this.deps.upstreams.get(g.vendor)?.simulated !== false);
    return simulated ? Math.min(every, SIMULATED_POLL_MS) : every;
  }

  /** A line taken from the queue or answered upstream: run under the job's key, if it is still good. */
  private async runLineOf(job: BatchJob, line: BatchLine): Promise<void> {
    // Read per line: a key revoked, expired or changed while its batch runs is seen at the next line.
    const key = await this.deps.keys.get(job.key_id);
    if (!key || key.revoked_at !== null || (key.expires_at !== null && Date.parse(key.expires_at) <= this.deps.now())) {
      await this.store.finishLine(
        job.id,
        line.n,
        "done",
        lineError(job, line.custom_id, "invalid_api_key", "The key that made this batch is revoked or gone."),
        true,
      );
      (await this.lineAdmission(job, line.n, key))?.settle(0);
      return;
    }
    await this.runOne(job, key, line);
  }

  /**
   * Sorts the job's lines, once: each is prepared as the pipeline would send it; those for an
   * upstream with a batch API are grouped per vendor and endpoint, the rest stay in the queue.
   */
  private async route(job: BatchJob): Promise<void> {
    const key = await this.deps.keys.get(job.key_id);
    const groups: Pick<BatchGroup, "grp" | "vendor" | "endpoint">[] = [];
    const assigned: { n: number; grp: number }[] = [];
    // Thousands of lines, each read and translated: the event loop gets a turn every few milliseconds.
    const slicer = new Slicer();
    if (key) {
      let read = 0;
      for await (const l of this.store.eachLine(job.id)) {
        // Sorting a large job outlasts a lease: it is renewed as the lines go by.
        if (++read % 1000 === 0) await this.store.renew(job.id, this.owner, this.iso(this.deps.config.batches.leaseMs));
        if (l.state !== "pending") continue;
        await slicer.pause();
        const req = JSON.parse(l.request) as { url: LineEndpoint; body: Record<string, unknown> }; // written by batch-routes from a checked line
        const hooks = savedHooks(l);
        const prepared = await prepareLine(this.deps, key, req.url, req.body, hooks);
        // What the hooks answered is kept with the line, refused here or not: asked once per line.
        if (hooks.answers && !l.hook_answers)
          await this.store.keepHookAnswers(job.id, l.n, JSON.stringify(hooks.answers));
        if (!prepared) continue;
        let g = groups.find((x) => x.vendor === prepared.vendor && x.endpoint === prepared.endpoint);
        if (!g) groups.push((g = { grp: groups.length, vendor: prepared.vendor, endpoint: prepared.endpoint }));
        assigned.push({ n: l.n, grp: g.grp });
      }
    }
    await this.store.route(job.id, groups, assigned, loopTurn);
  }

  /**
   * Sends a group to its upstream's batch API (its lines prepared again: the translation is the
   * same). A refusal (no batch API, a file it will not take) sends its lines to the queue instead;
   * an upstream that cannot be reached is tried again at the next poll.
   */
  private async submit(job: BatchJob, g: BatchGroup): Promise<void> {
    const upstream = this.deps.upstreams.get(g.vendor);
    const api = upstream ? PROTOCOLS[upstream.protocol].batches : undefined;
    const key = await this.deps.keys.get(job.key_id);
    if (!upstream || !api || !key) return this.store.requeue(job.id, g.grp, loopTurn);
    // Each line read from the store and prepared as the upstream's body is sent: none is held
    // longer than its piece of the body, and an upstream that refuses part way stops the reading.
    // Each line is admitted as it is about to be sent — the key's and its team's budgets (its
    // worst case reserved until its answer is metered) and its limits — exactly as a direct call
    // is; a line refused goes back to Turnpike's queue, which waits out a rate limit or answers
    // the refusal in the client's format. Nothing of a refused line reaches the upstream.
    const { deps, store } = this;
    const worker = this;
    let sent = 0;
    let refused = 0;
    const prepared = (async function* (): AsyncGenerator<UpstreamLine> {
      for await (const l of store.eachLine(job.id, g.grp)) {
        const req = JSON.parse(l.request) as { url: LineEndpoint; body: Record<string, unknown> }; // written by batch-routes from a checked line
        const p = await prepareLine(deps, key, req.url, req.body, savedHooks(l));
        if (!p) continue;
        let admitted: Admitted;
        try {
          const a = p.admission;
          admitted = await admit(deps, { format: a.format }, key, a.entry, a.size, {
            requestId: newRequestId(),
            stream: false,
            ...(a.outputCap === undefined ? {} : { outputCap: a.outputCap }),
            book: false,
          });
        } catch {
          refused++;
          await store.unroute(job.id, l.n);
          continue;
        }
        worker.hold(job.id, l.n, g.grp, admitted);
        // Kept with the line: given back exactly, by whoever ends it, after a restart too.
        if (admitted.sharedReserveUsd) await store.reserved(job.id, l.n, admitted.sharedReserveUsd);
        sent++;
        yield { customId: upstreamId(l.n), body: p.body };
      }
    })();
    const first = await prepared.next();
    if (refused > 0)
      this.deps.logger.warn(
        "batch lines refused admission when they were to be sent upstream; they run through Turnpike's queue",
        {
          batch_id: job.id,
          vendor: g.vendor,
          lines: refused,
        },
      );
    if (first.done) return this.store.requeue(job.id, g.grp, loopTurn);
    const lines = (async function* () {
      yield first.value;
      yield* prepared;
    })();
    try {
      const id = await api.submit(this.deps, upstream, g.endpoint, lines);
      await this.store.submitted(job.id, g.grp, id);
      this.deps.logger.info("batch lines sent to the upstream's batch API", {
        batch_id: job.id,
        vendor: g.vendor,
        endpoint: g.endpoint,
        upstream_batch_id: id,
        lines: sent,
        refused,
      });
    } catch (e) {
      // Not sent (or not taken): the lines' admissions are given back; they are admitted again when sent again.
      await this.giveBack(job, g.grp);
      if (e instanceof UpstreamBatchError && e.refused) {
        this.deps.logger.warn("upstream refused a batch; its lines run through Turnpike's queue", {
          batch_id: job.id,
          vendor: g.vendor,
          reason: e.message,
        });
        return this.store.requeue(job.id, g.grp, loopTurn);
      }
      this.deps.logger.warn("sending a batch upstream failed; tried again at the next poll", {
        batch_id: job.id,
        vendor: g.vendor,
        reason: e instanceof Error ? e.message : String(e),
      });
    }
  }

  /** The job was cancelled or expired: its upstream batch is cancelled too (what it finished still counts). */
  private async cancelUpstream(job: BatchJob, g: BatchGroup): Promise<void> {
    const upstream = this.deps.upstreams.get(g.vendor);
    const api = upstream ? PROTOCOLS[upstream.protocol].batches : undefined;
    if (upstream && api && g.upstream_id) {
      try {
        await api.cancel(this.deps, upstream, g.upstream_id);
      } catch (e) {
        // An upstream batch that ended meanwhile cannot be cancelled: its results are read all the same.
        this.deps.logger.warn("cancelling an upstream batch failed", {
          batch_id: job.id,
          upstream_batch_id: g.upstream_id,
          reason: e instanceof Error ? e.message : String(e),
        });
      }
    }
    await this.store.setGroupState(job.id, g.grp, "cancelling");
  }

  /** Asks an upstream batch where it stands; once it ended, keeps each line's answer for replay. */
  private async poll(job: BatchJob, g: BatchGroup, ending: "cancelled" | "expired" | undefined): Promise<void> {
    const upstream = this.deps.upstreams.get(g.vendor);
    const api = upstream ? PROTOCOLS[upstream.protocol].batches : undefined;
    if (!upstream || !api || !g.upstream_id) {
      await this.giveBack(job, g.grp);
      return this.store.requeue(job.id, g.grp, loopTurn);
    }
    try {
      const state = await api.poll(this.deps, upstream, g.upstream_id);
      if (state === "running") return;
      if (state === "failed") {
        this.deps.logger.warn("an upstream batch failed as a whole; its lines run through Turnpike's queue", {
          batch_id: job.id,
          upstream_batch_id: g.upstream_id,
        });
        await this.giveBack(job, g.grp);
        return this.store.requeue(job.id, g.grp, loopTurn);
      }
      const { outcomes, missing } = await api.results(this.deps, upstream, g.upstream_id);
      const results = new Map<number, string>();
      const closed: { n: number; how: "cancelled" | "expired" }[] = [];
      const slicer = new Slicer();
      for await (const l of this.store.eachLine(job.id, g.grp)) {
        await slicer.pause();
        const o = outcomes.get(upstreamId(l.n));
        if (o === undefined) continue;
        // Cancelled upstream because the job expired: expired, as the client sees it.
        if (o === "cancelled" || o === "expired") closed.push({ n: l.n, how: ending === "expired" ? "expired" : o });
        else results.set(l.n, JSON.stringify(o));
      }
      for (const c of closed) {
        await this.store.finishLine(job.id, c.n, c.how, null, false);
        await slicer.pause();
      }
      // Lines the upstream never answered: ended as the job is ending, else as the upstream said (expired unless cancelled).
      await this.store.groupEnded(job.id, g.grp, results, ending ?? missing ?? "expired", loopTurn);
      // Lines not run (cancelled, expired, unanswered): their reservations are given back; the answered keep theirs until replayed.
      await this.giveBack(job, g.grp, new Set(results.keys()));
    } catch (e) {
      if (e instanceof UpstreamBatchError && e.refused) {
        // The upstream no longer knows the batch (or this key): nothing of it was billed, so its lines run in the queue.
        this.deps.logger.warn("an upstream batch cannot be read; its lines run through Turnpike's queue", {
          batch_id: job.id,
          upstream_batch_id: g.upstream_id,
          reason: e.message,
        });
        await this.giveBack(job, g.grp);
        return this.store.requeue(job.id, g.grp, loopTurn);
      }
      this.deps.logger.warn("polling an upstream batch failed; asked again at the next poll", {
        batch_id: job.id,
        upstream_batch_id: g.upstream_id,
        reason: e instanceof Error ? e.message : String(e),
      });
    }
  }

  private async runOne(job: BatchJob, key: KeyRecord, line: BatchLine): Promise<void> {
    const req = JSON.parse(line.request) as { url: LineEndpoint; body: Record<string, unknown> }; // written by batch-routes from a checked line
    const stored = line.upstream_result === null ? undefined : (JSON.parse(line.upstream_result) as UpstreamAnswer); // written by poll() from an answer
    // Admitted when it was sent: its reservation is settled by its metering, nothing is admitted again.
    const admitted = stored ? await this.lineAdmission(job, line.n, key) : undefined;
    for (let waits = 0; ; waits++) {
      const calls = { n: 0 };
      const reply = await runLine(
        this.deps,
        key,
        req.url,
        req.body,
        stored &&
          admitted && {
            answer: answerWith(stored, calls),
            costFactor: batchCostFactor(this.deps, req.body.model),
            admitted,
          },
        savedHooks(line).answers,
      );
      // A 429 the upstream answered is its answer; only the key's own limits are waited out.
      if (calls.n === 0 && waitAndRetry(reply) && waits < MAX_WAITS && !this.stopped) {
        await this.idle(Math.min(60, reply.retryAfterS ?? 1) * 1000);
        await this.store.renew(job.id, this.owner, this.iso(this.deps.config.batches.leaseMs));
        continue;
      }
      const result =
        job.kind === "openai"
          ? openaiResultLine(line, reply.status, reply.requestId, reply.body)
          : messagesResultLine(line, reply.status, reply.body);
      await this.store.finishLine(job.id, line.n, "done", result, reply.status !== 200);
      return;
    }
  }

  /**
   * The job ends: its output and error files written (chat family), its status set, the lease
   * given back. Each file is written from the lines read a page at a time, in chunks of about
   * 1 MiB with turns of the loop between (50,000 results of 2 KB made in one string and stored as
   * one row held the loop for seconds).
   */
  private async finish(job: BatchJob, how: "completed" | "cancelled" | "expired"): Promise<void> {
    await this.giveBack(job);
    const now = this.iso();
    const object = { ...job.object };
    if (job.kind === "openai") {
      const ok = (l: BatchLine) => (l.state === "done" && !l.failed && l.result ? l.result : null);
      const bad = (l: BatchLine) => {
        if (l.state === "done" && l.failed) return l.result;
        if (l.state === "cancelled")
          return openaiErrorLine(l.custom_id, "batch_cancelled", "The batch was cancelled before this line was sent.");
        if (l.state === "expired")
          return openaiErrorLine(l.custom_id, "batch_expired", "This line was not sent before the batch expired.");
        return null;
      };
      const file = async (purpose: string, row: (l: BatchLine) => string | null) => {
        const store = this.store;
        const rows = async function* () {
          for await (const l of store.eachLine(job.id)) yield row(l);
        };
        const slicer = new Slicer();
        const stored = await this.store.putFile(
          { id: newId("file-"), key_id: job.key_id, purpose, filename: `${job.id}_${purpose}.jsonl`, created_at: now },
          jsonlChunks(rows(), () => slicer.pause()),
          loopTurn,
          true,
        );
        return stored?.id ?? null;
      };
      object.output_file_id = await file("batch_output", ok);
      object.error_file_id = await file("batch_error", bad);
      object.finalizing_at = now;
    }
    object.status = how;
    object[how === "completed" ? "completed_at" : how === "cancelled" ? "cancelled_at" : "expired_at"] = now;
    object.ended_at = now;
    await this.store.saveJob({ ...job, state: "done", object });
    await this.store.release(job.id, this.owner);
  }
}
