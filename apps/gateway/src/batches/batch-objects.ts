import { randomBytes } from "node:crypto";
import type { BatchJob, BatchLine, LineCounts } from "../storage/batch-store";

/** An id with a prefix and 24 random hex digits. */
export const newId = (prefix: string) => `${prefix}${randomBytes(12).toString("hex")}`;

const seconds = (iso: unknown) => (typeof iso === "string" ? Math.floor(Date.parse(iso) / 1000) : null);

/** The chat family's batch object (`/v1/batches`), from the job and its lines. */
export function openaiBatchObject(job: BatchJob, c: LineCounts) {
  const o = job.object;
  return {
    id: job.id,
    object: "batch",
    endpoint: o.endpoint,
    errors: null,
    input_file_id: o.input_file_id,
    completion_window: o.completion_window,
    status: o.status,
    output_file_id: o.output_file_id ?? null,
    error_file_id: o.error_file_id ?? null,
    created_at: seconds(job.created_at),
    in_progress_at: seconds(job.created_at),
    expires_at: seconds(job.expires_at),
    finalizing_at: seconds(o.finalizing_at),
    completed_at: seconds(o.completed_at),
    failed_at: null,
    expired_at: seconds(o.expired_at),
    cancelling_at: seconds(o.cancelling_at),
    cancelled_at: seconds(o.cancelled_at),
    // Lines that ended unsent (cancelled, expired) count as neither completed nor failed.
    request_counts: { total: c.total, completed: c.succeeded, failed: c.failed },
    metadata: o.metadata ?? null,
  };
}

/** The messages format's batch object (`/v1/messages/batches`). */
export function messagesBatchObject(job: BatchJob, c: LineCounts, baseUrl: string) {
  const o = job.object;
  const ended = job.state === "done";
  return {
    id: job.id,
    type: "message_batch",
    processing_status: ended ? "ended" : job.state === "cancelling" ? "canceling" : "in_progress",
    request_counts: {
      processing: c.pending,
      succeeded: c.succeeded,
      errored: c.failed,
      canceled: c.cancelled,
      expired: c.expired,
    },
    ended_at: ended ? (o.ended_at ?? null) : null,
    created_at: job.created_at,
    expires_at: job.expires_at,
    archived_at: null,
    cancel_initiated_at: o.cancelling_at ?? null,
    results_url: ended ? `${baseUrl}/v1/messages/batches/${job.id}/results` : null,
  };
}

/** One request's line of a messages batch's results. */
export function messagesResultRow(l: BatchLine): string {
  if (l.state === "cancelled") return JSON.stringify({ custom_id: l.custom_id, result: { type: "canceled" } });
  if (l.state === "expired") return JSON.stringify({ custom_id: l.custom_id, result: { type: "expired" } });
  return (
    l.result ??
    JSON.stringify({
      custom_id: l.custom_id,
      result: {
        type: "errored",
        error: { type: "error", error: { type: "api_error", message: "The request did not run." } },
      },
    })
  );
}
