/**
 * Files and batches of both client families: the chat family's `POST /v1/files` +
 * `/v1/batches` (lines of chat completions, Responses or embeddings requests, in a JSONL file),
 * and the messages format's `/v1/messages/batches` (requests in the body, results as JSONL).
 */
import { Type, type Static } from "@sinclair/typebox";
import { Nullable } from "./nullable.js";

/** A stored file: a batch's input, output or error JSONL. */
export const FileObject = Type.Object({
  id: Type.String(),
  object: Type.Literal("file"),
  bytes: Type.Integer({ minimum: 0 }),
  created_at: Type.Integer(),
  filename: Type.String(),
  /** Input files are `batch`; the files a batch writes are `batch_output`. */
  purpose: Type.String(),
  status: Type.String(),
  status_details: Nullable(Type.String()),
});
export type FileObject = Static<typeof FileObject>;

/** The endpoints a chat-family batch's lines may call. */
export const BatchEndpoint = Type.Union([
  Type.Literal("/v1/chat/completions"),
  Type.Literal("/v1/responses"),
  Type.Literal("/v1/embeddings"),
]);
export type BatchEndpoint = Static<typeof BatchEndpoint>;

/**
 * One line of a batch's input file.
 *
 * @example
 * ```ts
 * const line: BatchRequestLine = { custom_id: "q1", method: "POST", url: "/v1/chat/completions", body: { model: "beta-5", messages: [{ role: "user", content: "Hi" }] } };
 * ```
 */
export const BatchRequestLine = Type.Object({
  custom_id: Type.String(),
  method: Type.Literal("POST"),
  url: BatchEndpoint,
  body: Type.Record(Type.String(), Type.Unknown()),
});
export type BatchRequestLine = Static<typeof BatchRequestLine>;

/** `POST /v1/batches`. */
export const BatchCreateParams = Type.Object({
  input_file_id: Type.String(),
  endpoint: BatchEndpoint,
  completion_window: Type.Literal("24h"),
  metadata: Type.Optional(Nullable(Type.Record(Type.String(), Type.String()))),
});
export type BatchCreateParams = Static<typeof BatchCreateParams>;

/** Where a chat-family batch is. */
export const BatchStatus = Type.Union([
  Type.Literal("validating"),
  Type.Literal("failed"),
  Type.Literal("in_progress"),
  Type.Literal("finalizing"),
  Type.Literal("completed"),
  Type.Literal("expired"),
  Type.Literal("cancelling"),
  Type.Literal("cancelled"),
]);
export type BatchStatus = Static<typeof BatchStatus>;

/** A chat-family batch; times are Unix seconds. */
export const Batch = Type.Object({
  id: Type.String(),
  object: Type.Literal("batch"),
  endpoint: Type.String(),
  errors: Type.Union([Type.Null(), Type.Unknown()]),
  input_file_id: Type.String(),
  completion_window: Type.String(),
  status: BatchStatus,
  /** The successful lines' replies, once the batch has ended. */
  output_file_id: Nullable(Type.String()),
  /** The failed and malformed lines, once the batch has ended. */
  error_file_id: Nullable(Type.String()),
  created_at: Type.Integer(),
  in_progress_at: Nullable(Type.Integer()),
  expires_at: Nullable(Type.Integer()),
  finalizing_at: Nullable(Type.Integer()),
  completed_at: Nullable(Type.Integer()),
  failed_at: Nullable(Type.Integer()),
  expired_at: Nullable(Type.Integer()),
  cancelling_at: Nullable(Type.Integer()),
  cancelled_at: Nullable(Type.Integer()),
  request_counts: Type.Object({
    total: Type.Integer({ minimum: 0 }),
    completed: Type.Integer({ minimum: 0 }),
    failed: Type.Integer({ minimum: 0 }),
  }),
  metadata: Nullable(Type.Record(Type.String(), Type.String())),
});
export type Batch = Static<typeof Batch>;

/** One line of a batch's output or error file. */
export const BatchResultLine = Type.Object({
  id: Type.String(),
  custom_id: Type.String(),
  response: Nullable(
    Type.Object({
      status_code: Type.Integer(),
      request_id: Type.String(),
      body: Type.Unknown(),
    }),
  ),
  error: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
});
export type BatchResultLine = Static<typeof BatchResultLine>;

/** A page of `GET /v1/batches` (newest first). */
export const BatchList = Type.Object({
  object: Type.Literal("list"),
  data: Type.Array(Batch),
  first_id: Nullable(Type.String()),
  last_id: Nullable(Type.String()),
  has_more: Type.Boolean(),
});
export type BatchList = Static<typeof BatchList>;

/**
 * `POST /v1/messages/batches`: each request's `params` is a messages request naming any
 * catalog model.
 *
 * @example
 * ```ts
 * const b: MessageBatchCreateParams = { requests: [{ custom_id: "a", params: { model: "alpha-haiku-4-5", max_tokens: 64, messages: [{ role: "user", content: "Hi" }] } }] };
 * ```
 */
export const MessageBatchCreateParams = Type.Object({
  requests: Type.Array(Type.Object({ custom_id: Type.String(), params: Type.Record(Type.String(), Type.Unknown()) }), {
    minItems: 1,
  }),
});
export type MessageBatchCreateParams = Static<typeof MessageBatchCreateParams>;

/** A message batch; times are ISO 8601. */
export const MessageBatch = Type.Object({
  id: Type.String(),
  type: Type.Literal("message_batch"),
  processing_status: Type.Union([Type.Literal("in_progress"), Type.Literal("canceling"), Type.Literal("ended")]),
  request_counts: Type.Object({
    processing: Type.Integer({ minimum: 0 }),
    succeeded: Type.Integer({ minimum: 0 }),
    errored: Type.Integer({ minimum: 0 }),
    canceled: Type.Integer({ minimum: 0 }),
    expired: Type.Integer({ minimum: 0 }),
  }),
  ended_at: Nullable(Type.String()),
  created_at: Type.String(),
  expires_at: Type.String(),
  archived_at: Nullable(Type.String()),
  cancel_initiated_at: Nullable(Type.String()),
  /** Where the results are, once the batch has ended. */
  results_url: Nullable(Type.String()),
});
export type MessageBatch = Static<typeof MessageBatch>;

/** A page of `GET /v1/messages/batches` (newest first). */
export const MessageBatchList = Type.Object({
  data: Type.Array(MessageBatch),
  has_more: Type.Boolean(),
  first_id: Nullable(Type.String()),
  last_id: Nullable(Type.String()),
});
export type MessageBatchList = Static<typeof MessageBatchList>;

/** How one request of a message batch ended: its reply, its error, or unsent. */
export const MessageBatchResult = Type.Union([
  Type.Object({ type: Type.Literal("succeeded"), message: Type.Unknown() }),
  Type.Object({ type: Type.Literal("errored"), error: Type.Unknown() }),
  Type.Object({ type: Type.Literal("canceled") }),
  Type.Object({ type: Type.Literal("expired") }),
]);
export type MessageBatchResult = Static<typeof MessageBatchResult>;

/** One line of a message batch's results. */
export const MessageBatchIndividualResponse = Type.Object({
  custom_id: Type.String(),
  result: MessageBatchResult,
});
export type MessageBatchIndividualResponse = Static<typeof MessageBatchIndividualResponse>;
