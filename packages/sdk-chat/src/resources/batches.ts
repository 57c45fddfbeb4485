/** `client.batches`: chat completions, Responses or embeddings requests run offline from a JSONL file. */
import type { Batch, BatchCreateParams, BatchList } from "@turnpike/schema";
import { PagePromise, type APIClient, type APIPromise, type RequestOptions } from "@turnpike/sdk-core";

/** `batches.list`'s paging: `limit` (1–100) and `after` (a batch id). */
export interface BatchListParams {
  limit?: number;
  after?: string;
}

/**
 * `client.batches`.
 *
 * @example
 * ```ts
 * const file = await client.files.create({ file: jsonl, purpose: "batch" });
 * let batch = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
 * while (!["completed", "cancelled", "expired", "failed"].includes(batch.status)) batch = await client.batches.retrieve(batch.id);
 * const output = await client.files.content(batch.output_file_id!);
 * ```
 */
export class Batches {
  readonly #client: APIClient;

  constructor(client: APIClient) {
    this.#client = client;
  }

  /** Starts a batch over an uploaded input file; each line may name any catalog model. */
  create(body: BatchCreateParams, options?: RequestOptions): APIPromise<Batch> {
    return this.#client.request<Batch>({ ...options, method: "POST", path: "/batches", body });
  }

  /** A batch's status and counts; once it has ended, its output and error files. */
  retrieve(batchId: string, options?: RequestOptions): APIPromise<Batch> {
    return this.#client.request<Batch>({ ...options, method: "GET", path: `/batches/${encodeURIComponent(batchId)}` });
  }

  /** This key's batches, newest first: await one page, or iterate every batch across pages. */
  list(params: BatchListParams = {}, options?: RequestOptions): PagePromise<Batch, BatchList> {
    const page = (after: string | undefined) =>
      this.#client.request<BatchList>({
        ...options,
        method: "GET",
        path: "/batches",
        query: { ...options?.query, limit: params.limit, after },
      });
    const first = page(params.after);
    return new PagePromise<Batch, BatchList>(first.withResponse(), (after) => page(after));
  }

  /** Stops the lines not yet sent; the batch ends `cancelled` with the lines done so far. */
  cancel(batchId: string, options?: RequestOptions): APIPromise<Batch> {
    return this.#client.request<Batch>({
      ...options,
      method: "POST",
      path: `/batches/${encodeURIComponent(batchId)}/cancel`,
    });
  }
}
