import { GatewayError } from "@turnpike/providers";
import type { BatchQueue, GatewayDeps } from "../wiring/deps";
import { FORMATS, type ClientFormat } from "../formats";
import { bodyTooLarge, readJsonBody } from "../request/read-body";
import { errorResponse, toGatewayError } from "../request/respond";
import type { Route, RouteCall } from "../http/route";
import { authenticate } from "../access/authenticate";
import { errors, idParam, INFERENCE_KEYS, ok } from "../openapi/operations";
import { newContext } from "../request/context";
import { nameProblem } from "../storage/clean-text";
import type { KeyRecord } from "../storage/store";
import { invalid, isRecord } from "../vocabulary/client-errors";
import { BATCH_ENDPOINTS, messagesLines, openaiLines } from "../batches/batch-input";
import { loopTurn, Slicer } from "../vocabulary/loop-turns";
import { messagesBatchObject, messagesResultRow, newId, openaiBatchObject } from "../batches/batch-objects";
import {
  type BatchFile,
  type BatchJob,
  type BatchKind,
  FILE_CHUNK_BYTES,
  jsonlChunks,
  batchStoreOf,
} from "../storage/batch-store";
import { readUpload } from "../batches/upload";
import type { BatchEndpoint } from "../batches/run-line";

/** How long a job may run: the one completion window the chat family offers, and the messages format's. */
const WINDOW_MS = 24 * 3600 * 1000;
/** The longest name of an uploaded file (site/operations/security.md, "Names"). */
export const MAX_FILE_NAME = 255;

const notFound = (what: string, id: string) =>
  new GatewayError({
    status: 404,
    type: "not_found_error",
    code: "not_found",
    message: `No ${what} with id ${JSON.stringify(id)} for this key.`,
  });

/** A handler run under the caller's key, its errors in `format`'s envelope. */
function keyed(
  deps: GatewayDeps,
  format: ClientFormat,
  fn: (call: RouteCall, key: KeyRecord, queue: BatchQueue) => Promise<Response>,
) {
  return async (call: RouteCall): Promise<Response> => {
    const ctx = newContext(call.request, format, call.server, deps.config.trustedProxies);
    try {
      const key = await authenticate(deps, ctx);
      return await fn(call, key, deps.batches ?? { store: batchStoreOf(deps.store), queued: () => {} });
    } catch (e) {
      return errorResponse(format, toGatewayError(e, deps.logger, ctx.id), {
        logger: deps.logger,
        request: call.request,
        requestId: ctx.id,
      });
    }
  };
}

const fileObject = (f: BatchFile) => ({
  id: f.id,
  object: "file",
  bytes: f.bytes,
  created_at: Math.floor(Date.parse(f.created_at) / 1000),
  filename: f.filename,
  purpose: f.purpose,
  status: "processed",
  status_details: null,
});

/**
 * A response body pulled from `chunks`: each read when the client has taken the one before. A
 * failure part way (the file deleted meanwhile, the database gone) cuts the body short, logged.
 */
function streamOf(chunks: AsyncGenerator<Uint8Array>, deps: GatewayDeps): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(out) {
      try {
        const next = await chunks.next();
        if (next.done) out.close();
        else out.enqueue(next.value);
      } catch (e) {
        deps.logger.warn("a stored file's content could not be read to its end", {
          reason: e instanceof Error ? e.message : String(e),
        });
        out.error(e);
      }
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
}

const limitOf = (url: URL, fallback: number) =>
  Math.min(100, Math.max(1, Number(url.searchParams.get("limit") ?? fallback) || fallback));

const op = (tag: string, summary: string, description: string, path = false) => ({
  tags: [tag],
  summary,
  description,
  security: INFERENCE_KEYS,
  ...(path ? { parameters: [idParam("The id.")] } : {}),
  responses: {
    ...ok("As the client library reads it.", { type: "object" }),
    ...errors(tag === "Message batches" ? "MessagesErrorBody" : "ChatErrorBody"),
  },
});

/**
 * The batch APIs of both client families: the chat family's files and `/v1/batches` (chat
 * completions, Responses and embeddings lines), and the messages format's
 * `/v1/messages/batches`. Jobs are kept in the store and run by the worker (batch-worker.ts).
 */
export function batchRoutes(deps: GatewayDeps): Route[] {
  const chat = FORMATS.chat;
  const messages = FORMATS.messages;
  const now = () => new Date(deps.now()).toISOString();
  const limits = deps.config.batches;

  const job = async (queue: BatchQueue, key: KeyRecord, kind: BatchKind, id: string | undefined) => {
    const j = id ? await queue.store.getJob(key.id, id) : undefined;
    if (!j || j.kind !== kind) throw notFound(kind === "openai" ? "batch" : "message batch", id ?? "");
    return j;
  };
  const cancel = async (queue: BatchQueue, j: BatchJob) => {
    if (j.state !== "active") return j;
    const next: BatchJob = {
      ...j,
      state: "cancelling",
      object: { ...j.object, status: "cancelling", cancelling_at: now() },
    };
    await queue.store.saveJob(next);
    // A job waiting on upstream batches is parked: taken again now, so that they are cancelled too.
    await queue.store.wake(j.id);
    queue.queued();
    return next;
  };
  const origin = (request: Request) => new URL(request.url).origin;

  return [
    {
      method: "POST",
      path: "/v1/files",
      doc: op(
        "Batches",
        "Upload a batch input file",
        "multipart/form-data with `file` (JSONL, one request a line) and `purpose: batch`.",
      ),
      handle: keyed(deps, chat, async ({ request }, key, queue) => {
        const declared = Number(request.headers.get("content-length") ?? 0);
        if (declared > limits.maxFileBytes) throw bodyTooLarge(limits.maxFileBytes, declared);
        // Read as it arrives, the file's bytes stored a chunk per statement with a turn of the loop
        // between (batches/upload.ts); a purpose other than `batch`, known only once the body has
        // ended, takes the stored file away again.
        const upload = await readUpload(request, limits.maxFileBytes, FILE_CHUNK_BYTES);
        if (upload.filename === undefined) {
          const fields = await upload.fields();
          if (fields.get("purpose") !== "batch")
            throw invalid("`purpose` must be `batch`: Turnpike keeps files for batches only.", "purpose");
          throw invalid("`file` is required: the batch's JSONL.", "file");
        }
        // Listed, printed by the CLI and the dashboard: printable text of a bounded length only.
        const nameIssue = nameProblem(upload.filename, MAX_FILE_NAME);
        if (nameIssue)
          throw invalid(
            `The file's name is refused (${nameIssue}): it must be 1 to ${MAX_FILE_NAME} printable characters.`,
            "file",
          );
        const stored = await queue.store.putFile(
          { id: newId("file-"), key_id: key.id, purpose: "batch", filename: upload.filename, created_at: now() },
          upload.pieces,
          loopTurn,
        );
        let purpose: string | undefined;
        try {
          purpose = (await upload.fields()).get("purpose");
        } finally {
          if (purpose !== "batch") await queue.store.deleteFile(key.id, stored!.id);
        }
        if (purpose !== "batch")
          throw invalid("`purpose` must be `batch`: Turnpike keeps files for batches only.", "purpose");
        return Response.json(fileObject(stored!)); // stored: an empty file is kept (skipEmpty not set)
      }),
    },
    {
      method: "GET",
      path: "/v1/files/{id}",
      doc: op("Batches", "Get a file", "An input, output or error file of this key.", true),
      handle: keyed(deps, chat, async ({ params }, key, queue) => {
        const f = await queue.store.getFile(key.id, params.id ?? "");
        if (!f) throw notFound("file", params.id ?? "");
        return Response.json(fileObject(f));
      }),
    },
    {
      method: "GET",
      path: "/v1/files/{id}/content",
      doc: op("Batches", "Get a file's content", "The JSONL as stored or written.", true),
      handle: keyed(deps, chat, async ({ params }, key, queue) => {
        const f = await queue.store.getFile(key.id, params.id ?? "");
        if (!f) throw notFound("file", params.id ?? "");
        // Streamed a chunk at a time, each read when the client has taken the one before.
        return new Response(streamOf(queue.store.fileChunks(f.id), deps), {
          headers: { "content-type": "application/jsonl" },
        });
      }),
    },
    {
      method: "DELETE",
      path: "/v1/files/{id}",
      doc: op(
        "Batches",
        "Delete a file",
        "An input, output or error file of this key, its content with it. A batch made from it keeps its lines.",
        true,
      ),
      handle: keyed(deps, chat, async ({ params }, key, queue) => {
        const id = params.id ?? "";
        if (!(await queue.store.deleteFile(key.id, id, loopTurn))) throw notFound("file", id);
        return Response.json({ id, object: "file", deleted: true });
      }),
    },
    {
      method: "POST",
      path: "/v1/batches",
      doc: op(
        "Batches",
        "Create a batch",
        '`{input_file_id, endpoint, completion_window: "24h", metadata?}`; `endpoint` is /v1/chat/completions, /v1/responses or /v1/embeddings. A malformed line becomes an error-file line.',
      ),
      handle: keyed(deps, chat, async ({ request }, key, queue) => {
        const { value } = await readJsonBody(request, deps.config.maxBodyBytes, deps.config.maxBodyValues);
        const endpoint = value.endpoint;
        if (typeof endpoint !== "string" || !(BATCH_ENDPOINTS as readonly string[]).includes(endpoint))
          throw invalid(`\`endpoint\` must be one of ${BATCH_ENDPOINTS.join(", ")}.`, "endpoint");
        if (value.completion_window !== "24h") throw invalid("`completion_window` must be `24h`.", "completion_window");
        if (value.metadata !== undefined && value.metadata !== null && !isRecord(value.metadata))
          throw invalid("`metadata` must be an object of strings.", "metadata");
        const fileId = typeof value.input_file_id === "string" ? value.input_file_id : "";
        const file = await queue.store.getFile(key.id, fileId);
        if (file?.purpose !== "batch") throw notFound("batch input file", fileId);
        const lines = await openaiLines(queue.store.fileChunks(file.id), endpoint as BatchEndpoint, limits); // checked against BATCH_ENDPOINTS above
        const created = now();
        const j: BatchJob = {
          id: newId("batch_"),
          key_id: key.id,
          kind: "openai",
          state: "active",
          routed: false,
          object: {
            endpoint,
            input_file_id: fileId,
            completion_window: "24h",
            status: "in_progress",
            metadata: value.metadata ?? null,
          },
          created_at: created,
          expires_at: new Date(Date.parse(created) + WINDOW_MS).toISOString(),
        };
        await queue.store.createJob(j, lines, loopTurn);
        queue.queued();
        return Response.json(openaiBatchObject(j, await queue.store.lineCounts(j.id)));
      }),
    },
    {
      method: "GET",
      path: "/v1/batches",
      doc: op("Batches", "List batches", "Newest first; `limit` (1–100, default 20) and `after` (a batch id)."),
      handle: keyed(deps, chat, async ({ request }, key, queue) => {
        const url = new URL(request.url);
        const limit = limitOf(url, 20);
        const jobs = await queue.store.listJobs(
          key.id,
          "openai",
          limit + 1,
          url.searchParams.get("after") ?? undefined,
        );
        const page = jobs.slice(0, limit);
        const data = await Promise.all(page.map(async (j) => openaiBatchObject(j, await queue.store.lineCounts(j.id))));
        return Response.json({
          object: "list",
          data,
          first_id: data[0]?.id ?? null,
          last_id: data.at(-1)?.id ?? null,
          has_more: jobs.length > limit,
        });
      }),
    },
    {
      method: "GET",
      path: "/v1/batches/{id}",
      doc: op("Batches", "Get a batch", "Its status, counts and, once ended, its output and error files.", true),
      handle: keyed(deps, chat, async ({ params }, key, queue) => {
        const j = await job(queue, key, "openai", params.id);
        return Response.json(openaiBatchObject(j, await queue.store.lineCounts(j.id)));
      }),
    },
    {
      method: "POST",
      path: "/v1/batches/{id}/cancel",
      doc: op(
        "Batches",
        "Cancel a batch",
        "Lines not yet sent are not sent; the batch ends `cancelled` with the lines done so far.",
        true,
      ),
      handle: keyed(deps, chat, async ({ params }, key, queue) => {
        const j = await cancel(queue, await job(queue, key, "openai", params.id));
        return Response.json(openaiBatchObject(j, await queue.store.lineCounts(j.id)));
      }),
    },
    {
      method: "POST",
      path: "/v1/messages/batches",
      doc: op(
        "Message batches",
        "Create a message batch",
        "`{requests: [{custom_id, params}]}`; each `params` a messages request naming any catalog model.",
      ),
      handle: keyed(deps, messages, async ({ request }, key, queue) => {
        const { value } = await readJsonBody(request, limits.maxFileBytes, deps.config.maxBodyValues);
        const lines = await messagesLines(value, limits);
        const created = now();
        const j: BatchJob = {
          id: newId("msgbatch_"),
          key_id: key.id,
          kind: "messages",
          state: "active",
          routed: false,
          object: {},
          created_at: created,
          expires_at: new Date(Date.parse(created) + WINDOW_MS).toISOString(),
        };
        await queue.store.createJob(j, lines, loopTurn);
        queue.queued();
        return Response.json(messagesBatchObject(j, await queue.store.lineCounts(j.id), origin(request)));
      }),
    },
    {
      method: "GET",
      path: "/v1/messages/batches",
      doc: op("Message batches", "List message batches", "Newest first; `limit` (1–100, default 20) and `after_id`."),
      handle: keyed(deps, messages, async ({ request }, key, queue) => {
        const url = new URL(request.url);
        const limit = limitOf(url, 20);
        const jobs = await queue.store.listJobs(
          key.id,
          "messages",
          limit + 1,
          url.searchParams.get("after_id") ?? undefined,
        );
        const page = jobs.slice(0, limit);
        const data = await Promise.all(
          page.map(async (j) => messagesBatchObject(j, await queue.store.lineCounts(j.id), origin(request))),
        );
        return Response.json({
          data,
          has_more: jobs.length > limit,
          first_id: data[0]?.id ?? null,
          last_id: data.at(-1)?.id ?? null,
        });
      }),
    },
    {
      method: "GET",
      path: "/v1/messages/batches/{id}",
      doc: op(
        "Message batches",
        "Get a message batch",
        "Its processing status and counts; `results_url` once ended.",
        true,
      ),
      handle: keyed(deps, messages, async ({ request, params }, key, queue) => {
        const j = await job(queue, key, "messages", params.id);
        return Response.json(messagesBatchObject(j, await queue.store.lineCounts(j.id), origin(request)));
      }),
    },
    {
      method: "POST",
      path: "/v1/messages/batches/{id}/cancel",
      doc: op("Message batches", "Cancel a message batch", "Requests not yet sent end `canceled`.", true),
      handle: keyed(deps, messages, async ({ request, params }, key, queue) => {
        const j = await cancel(queue, await job(queue, key, "messages", params.id));
        return Response.json(messagesBatchObject(j, await queue.store.lineCounts(j.id), origin(request)));
      }),
    },
    {
      method: "GET",
      path: "/v1/messages/batches/{id}/results",
      doc: op(
        "Message batches",
        "Get a message batch's results",
        "JSONL, one result per request in request order, once the batch has ended.",
        true,
      ),
      handle: keyed(deps, messages, async ({ params }, key, queue) => {
        const j = await job(queue, key, "messages", params.id);
        if (j.state !== "done")
          throw invalid(
            `Message batch ${j.id} has not ended yet; its results are ready when processing_status is ended.`,
          );
        // Streamed in chunks of about 1 MiB, the lines read a page at a time, the loop given turns between.
        const slicer = new Slicer();
        const rows = async function* () {
          for await (const l of queue.store.eachLine(j.id)) yield messagesResultRow(l);
        };
        return new Response(
          streamOf(
            jsonlChunks(rows(), () => slicer.pause()),
            deps,
          ),
          {
            headers: { "content-type": "application/x-jsonl" },
          },
        );
      }),
    },
  ];
}
