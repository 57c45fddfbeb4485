/** `client.messages.batches`: messages requests run offline, their results as JSONL. */
import type { MessageBatch, MessageBatchIndividualResponse, MessageBatchList } from "@turnpike/schema";
import { PagePromise, type APIClient, type APIPromise, type RequestOptions } from "@turnpike/sdk-core";
import type { MessageCreateParamsNonStreaming } from "../types.js";

/** `messages.batches.create`: each request's `params` is a messages request naming any catalog model. */
export interface MessageBatchCreateParams {
  requests: { custom_id: string; params: MessageCreateParamsNonStreaming }[];
}

/** `messages.batches.list`'s paging: `limit` (1–100) and `after_id` (a batch id). */
export interface MessageBatchListParams {
  limit?: number;
  after_id?: string;
}

/** The results' lines, parsed one by one (a blank line is skipped). */
async function* lines(text: string): AsyncGenerator<MessageBatchIndividualResponse> {
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    // The gateway writes each line from the schema's shape; not checked again, as in the official clients.
    yield JSON.parse(line) as MessageBatchIndividualResponse;
  }
}

/**
 * `client.messages.batches`.
 *
 * @example
 * ```ts
 * let batch = await client.messages.batches.create({ requests: [{ custom_id: "a", params: { model: "alpha-haiku-4-5", max_tokens: 64, messages } }] });
 * while (batch.processing_status !== "ended") batch = await client.messages.batches.retrieve(batch.id);
 * for await (const r of await client.messages.batches.results(batch.id)) console.log(r.custom_id, r.result.type);
 * ```
 */
export class MessageBatches {
  readonly #client: APIClient;

  constructor(client: APIClient) {
    this.#client = client;
  }

  /** Starts a batch of messages requests. */
  create(body: MessageBatchCreateParams, options?: RequestOptions): APIPromise<MessageBatch> {
    return this.#client.request<MessageBatch>({ ...options, method: "POST", path: "/v1/messages/batches", body });
  }

  /** A batch's processing status and counts; `results_url` once it has ended. */
  retrieve(batchId: string, options?: RequestOptions): APIPromise<MessageBatch> {
    return this.#client.request<MessageBatch>({
      ...options,
      method: "GET",
      path: `/v1/messages/batches/${encodeURIComponent(batchId)}`,
    });
  }

  /** This key's message batches, newest first: await one page, or iterate every batch across pages. */
  list(params: MessageBatchListParams = {}, options?: RequestOptions): PagePromise<MessageBatch, MessageBatchList> {
    const page = (afterId: string | undefined) =>
      this.#client.request<MessageBatchList>({
        ...options,
        method: "GET",
        path: "/v1/messages/batches",
        query: { ...options?.query, limit: params.limit, after_id: afterId },
      });
    return new PagePromise<MessageBatch, MessageBatchList>(page(params.after_id).withResponse(), (afterId) =>
      page(afterId),
    );
  }

  /** Requests not yet sent end `canceled`; the batch ends with those done so far. */
  cancel(batchId: string, options?: RequestOptions): APIPromise<MessageBatch> {
    return this.#client.request<MessageBatch>({
      ...options,
      method: "POST",
      path: `/v1/messages/batches/${encodeURIComponent(batchId)}/cancel`,
    });
  }

  /**
   * An ended batch's results, one per request in request order, to iterate
   * (`for await (const r of await client.messages.batches.results(id))`).
   */
  async results(batchId: string, options?: RequestOptions): Promise<AsyncIterable<MessageBatchIndividualResponse>> {
    const text = await this.#client.request<string>({
      ...options,
      method: "GET",
      path: `/v1/messages/batches/${encodeURIComponent(batchId)}/results`,
      replyAs: "text",
    });
    return lines(text);
  }
}
