import type { GatewayDeps } from "../deps";
import type { KeyRecord } from "../storage/store";
import { isRecord } from "../vocabulary/client-errors";
import { newId } from "./batch-objects";
import type { BatchJob, BatchLine, BatchStore } from "./batch-store";
import { type BatchEndpoint, runLine, waitAndRetry } from "./run-line";

/** How often an idle worker looks for work another instance may have queued. */
const POLL_MS = 1000;
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

/**
 * Runs batch jobs: takes one no live worker holds (a lease in the store), runs its lines one at a
 * time through the ordinary pipeline under the key that made it — one line at a time per
 * instance is its background priority: interactive calls never queue behind a batch — and
 * renews the lease after each line. A stop gives the job back; a crash leaves the lease to run
 * out, and the next holder writes off the line that was in flight instead of sending it twice.
 */
export class BatchWorker {
  private readonly owner = newId("worker_");
  private stopped = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;

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
    for (;;) {
      if (this.stopped) return this.store.release(job.id, this.owner);
      const state = await this.store.stateOf(job.id);
      if (state === "cancelling") {
        await this.store.closePending(job.id, "cancelled");
        return this.finish(job, "cancelled");
      }
      if (this.deps.now() >= Date.parse(job.expires_at)) {
        await this.store.closePending(job.id, "expired");
        return this.finish(job, "expired");
      }
      if (!(await this.store.renew(job.id, this.owner, this.iso(this.deps.config.batches.leaseMs)))) return; // another worker holds it now
      const line = await this.store.takeLine(job.id);
      if (!line) return this.finish(job, "completed");
      // Read per line: a key revoked, expired or changed while its batch runs is seen at the next line.
      const key = await this.deps.keys.get(job.key_id);
      if (
        !key ||
        key.revoked_at !== null ||
        (key.expires_at !== null && Date.parse(key.expires_at) <= this.deps.now())
      ) {
        await this.store.finishLine(
          job.id,
          line.n,
          "done",
          lineError(job, line.custom_id, "invalid_api_key", "The key that made this batch is revoked or gone."),
          true,
        );
        continue;
      }
      await this.runOne(job, key, line);
    }
  }

  private async runOne(job: BatchJob, key: KeyRecord, line: BatchLine): Promise<void> {
    const req = JSON.parse(line.request) as { url: BatchEndpoint | "/v1/messages"; body: Record<string, unknown> }; // written by batch-routes from a checked line
    for (let waits = 0; ; waits++) {
      const reply = await runLine(this.deps, key, req.url, req.body);
      if (waitAndRetry(reply) && waits < MAX_WAITS && !this.stopped) {
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

  /** The job ends: its output and error files written (chat family), its status set, the lease given back. */
  private async finish(job: BatchJob, how: "completed" | "cancelled" | "expired"): Promise<void> {
    const lines = await this.store.lines(job.id);
    const now = this.iso();
    const object = { ...job.object };
    if (job.kind === "openai") {
      const ok = lines.filter((l) => l.state === "done" && !l.failed && l.result);
      const bad = lines.map((l) => {
        if (l.state === "done" && l.failed) return l.result;
        if (l.state === "cancelled")
          return openaiErrorLine(l.custom_id, "batch_cancelled", "The batch was cancelled before this line was sent.");
        if (l.state === "expired")
          return openaiErrorLine(l.custom_id, "batch_expired", "This line was not sent before the batch expired.");
        return null;
      });
      const file = async (purpose: string, rows: string[]) => {
        if (rows.length === 0) return null;
        const content = `${rows.join("\n")}\n`;
        const id = newId("file-");
        await this.store.putFile({
          id,
          key_id: job.key_id,
          purpose,
          filename: `${job.id}_${purpose}.jsonl`,
          bytes: Buffer.byteLength(content),
          content,
          created_at: now,
        });
        return id;
      };
      object.output_file_id = await file(
        "batch_output",
        ok.map((l) => l.result!),
      );
      object.error_file_id = await file(
        "batch_error",
        bad.filter((r): r is string => r !== null),
      );
      object.finalizing_at = now;
    }
    object.status = how;
    object[how === "completed" ? "completed_at" : how === "cancelled" ? "cancelled_at" : "expired_at"] = now;
    object.ended_at = now;
    await this.store.saveJob({ ...job, state: "done", object });
    await this.store.release(job.id, this.owner);
  }
}
