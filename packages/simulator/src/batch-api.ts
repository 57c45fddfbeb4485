import { randomBytes } from "node:crypto";
import { isObject } from "./json-access";
import { Slicer } from "./loop-turn";
import { jsonResponse } from "./respond";

/**
 * The vendors' own batch APIs, served deterministically: the chat family's `POST /v1/files`
 * (purpose `batch`, JSONL) + `/v1/batches` (create, retrieve, cancel; output and error files),
 * the messages protocol's `/v1/messages/batches` (create, retrieve, cancel, results JSONL), and
 * the generateContent protocol's batch mode (`models/{m}:batchGenerateContent` with inline
 * requests, the operation at `batches/{id}` with the inline responses, `:cancel`). Each
 * line is answered at creation by the simulator's own handler, exactly as the same call made
 * directly; the batch shows as running until `batchMs` has passed (default 0: it has ended by the
 * first poll). `POST /_sim/batches {"ms": n, "fail": true, "finish": true}` changes the time,
 * makes new chat batches fail as a whole and new messages batches error every line, and ends
 * every running batch now (tests); `DELETE` resets the time and the failure.
 */

/** How batches behave: how long they run, and whether new ones fail. */
export interface BatchKnobs {
  ms: number;
  fail: boolean;
}

interface SimFile {
  id: string;
  purpose: string;
  filename: string;
  content: string;
  created: number;
}

interface LineAnswer {
  customId: string;
  status: number;
  body: unknown;
}

interface SimBatch {
  id: string;
  protocol: "chat" | "messages" | "generate";
  endpoint: string;
  inputFileId: string | null;
  created: number;
  readyAt: number;
  fail: boolean;
  cancelledAt: number | null;
  answers: LineAnswer[];
  outputFileId: string | null;
  errorFileId: string | null;
}

const id = (prefix: string) => `${prefix}${randomBytes(12).toString("hex")}`;
const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Whether a request is one of the batch APIs' (the simulator's other routes never start so). */
export function isBatchPath(path: string): boolean {
  return (
    path === "/_sim/batches" ||
    path === "/v1/files" ||
    path.startsWith("/v1/files/") ||
    path === "/v1/batches" ||
    path.startsWith("/v1/batches/") ||
    path === "/v1/messages/batches" ||
    path.startsWith("/v1/messages/batches/") ||
    path.startsWith("/v1beta/batches/") ||
    (path.startsWith("/v1beta/models/") && path.endsWith(":batchGenerateContent"))
  );
}

/** The protocol a batch path belongs to (for its auth check and error envelope). */
export function batchProtocol(path: string): BatchProtocol {
  if (path.startsWith("/v1beta/")) return "generate";
  return path.startsWith("/v1/messages/") ? "messages" : "chat";
}

type BatchProtocol = "chat" | "messages" | "generate";

export class BatchApi {
  private readonly files = new Map<string, SimFile>();
  private readonly batches = new Map<string, SimBatch>();
  private readonly knobs: BatchKnobs;

  constructor(
    private readonly initial: BatchKnobs,
    /** Answers one line as the simulator answers the same call made directly. */
    private readonly call: (path: string, headers: Headers, body: string) => Promise<Response>,
  ) {
    this.knobs = { ...initial };
  }

  async handle(req: Request, path: string, text: string): Promise<Response> {
    const m = req.method;
    if (path === "/_sim/batches") {
      if (m === "DELETE") Object.assign(this.knobs, this.initial);
      else {
        const v: unknown = text ? JSON.parse(text) : {};
        if (isObject(v) && typeof v.ms === "number") this.knobs.ms = v.ms;
        if (isObject(v) && typeof v.fail === "boolean") this.knobs.fail = v.fail;
        // Every batch still running ends now.
        if (isObject(v) && v.finish === true)
          for (const b of this.batches.values()) if (!this.ended(b)) b.readyAt = Date.now();
      }
      return jsonResponse(200, JSON.stringify(this.knobs));
    }
    const origin = new URL(req.url).origin;
    if (path.startsWith("/v1beta/")) return this.generate(req, path, text);
    const parts = path.split("/").filter(Boolean); // ["v1", "files" | "batches" | "messages", …]
    if (parts[1] === "files") {
      if (m === "POST" && parts.length === 2) return this.upload(req, text);
      const f = parts[2] ? this.files.get(parts[2]) : undefined;
      if (!f) return notFound("chat", `No such File object: ${parts[2] ?? ""}`);
      if (m === "GET" && parts[3] === "content")
        return new Response(f.content, { headers: { "content-type": "application/jsonl" } });
      if (m === "GET" && parts.length === 3) return jsonResponse(200, JSON.stringify(fileObject(f)));
    }
    if (parts[1] === "batches") {
      if (m === "POST" && parts.length === 2) return this.createChat(req.headers, text);
      const b = parts[2] ? this.batches.get(parts[2]) : undefined;
      if (b?.protocol !== "chat") return notFound("chat", `No batch found with id '${parts[2] ?? ""}'.`);
      if (m === "POST" && parts[3] === "cancel") this.cancel(b);
      return jsonResponse(200, JSON.stringify(this.chatObject(b)));
    }
    if (parts[1] === "messages" && parts[2] === "batches") {
      if (m === "POST" && parts.length === 3) return this.createMessages(req.headers, text, origin);
      const b = parts[3] ? this.batches.get(parts[3]) : undefined;
      if (b?.protocol !== "messages") return notFound("messages", `No message batch ${parts[3] ?? ""}`);
      if (m === "POST" && parts[4] === "cancel") this.cancel(b);
      if (m === "GET" && parts[4] === "results") {
        if (!this.ended(b)) return invalid("messages", `Message batch ${b.id} has not ended yet.`);
        return new Response(this.messagesResults(b), { headers: { "content-type": "application/x-jsonl" } });
      }
      return jsonResponse(200, JSON.stringify(this.messagesObject(b, origin)));
    }
    return notFound(batchProtocol(path), `Not found: ${m} ${path}`);
  }

  private async generate(req: Request, path: string, text: string): Promise<Response> {
    if (req.method === "POST" && path.endsWith(":batchGenerateContent")) {
      const at = path.slice(0, -":batchGenerateContent".length);
      const v: unknown = text ? JSON.parse(text) : undefined;
      const batch = isObject(v) && isObject(v.batch) ? v.batch : undefined;
      const input = batch && isObject(batch.inputConfig) ? batch.inputConfig : undefined;
      const outer = input && isObject(input.requests) ? input.requests : undefined;
      const requests = outer && Array.isArray(outer.requests) ? outer.requests : undefined;
      if (!requests?.length) return invalid("generate", "batch.inputConfig.requests.requests: at least one request");
      const answers: LineAnswer[] = [];
      const slicer = new Slicer();
      for (const [i, r] of requests.entries()) {
        await slicer.pause();
        if (!isObject(r) || !isObject(r.request)) return invalid("generate", `requests[${i}].request is required`);
        const key = isObject(r.metadata) && typeof r.metadata.key === "string" ? r.metadata.key : String(i);
        answers.push(await this.answer(`${at}:generateContent`, req.headers, key, r.request));
      }
      const b = this.newBatch("generate", at, null, answers);
      return jsonResponse(200, JSON.stringify(this.operation(b)));
    }
    const rest = path.slice("/v1beta/batches/".length);
    const cancel = rest.endsWith(":cancel");
    const b = this.batches.get(`batches/${cancel ? rest.slice(0, -":cancel".length) : rest}`);
    if (b?.protocol !== "generate") return notFound("generate", `Batch ${rest} not found.`);
    if (req.method === "POST" && cancel) {
      this.cancel(b);
      return jsonResponse(200, "{}");
    }
    return jsonResponse(200, JSON.stringify(this.operation(b)));
  }

  /** A generateContent batch as the long-running operation that stands for it. */
  private operation(b: SimBatch) {
    const ended = this.ended(b);
    const cancelled = b.cancelledAt !== null;
    const state = !ended
      ? "BATCH_STATE_RUNNING"
      : cancelled
        ? "BATCH_STATE_CANCELLED"
        : b.fail
          ? "BATCH_STATE_FAILED"
          : "BATCH_STATE_SUCCEEDED";
    const ok = state === "BATCH_STATE_SUCCEEDED" ? b.answers.filter((a) => a.status < 300).length : 0;
    const metadata = {
      "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
      model: b.endpoint.slice("/v1beta/".length),
      name: b.id,
      displayName: b.id,
      createTime: iso(b.created),
      updateTime: iso(ended ? (b.cancelledAt ?? b.readyAt) : b.created),
      ...(ended ? { endTime: iso(b.cancelledAt ?? b.readyAt) } : {}),
      batchStats: {
        requestCount: String(b.answers.length),
        successfulRequestCount: String(ok),
        failedRequestCount: String(state === "BATCH_STATE_SUCCEEDED" ? b.answers.length - ok : 0),
        pendingRequestCount: String(ended ? 0 : b.answers.length),
      },
      state,
    };
    if (!ended) return { name: b.id, metadata };
    if (state === "BATCH_STATE_FAILED")
      return { name: b.id, metadata, done: true, error: { code: 13, message: "The simulated batch failed." } };
    if (cancelled) return { name: b.id, metadata, done: true, error: { code: 1, message: "The batch was cancelled." } };
    const inlinedResponses = b.answers.map((a) =>
      a.status < 300
        ? { response: a.body, metadata: { key: a.customId } }
        : {
            error: {
              code: a.status === 404 ? 5 : a.status === 429 ? 8 : a.status >= 500 ? 13 : 3,
              message:
                isObject(a.body) && isObject(a.body.error) ? String(a.body.error.message) : "The request failed.",
            },
            metadata: { key: a.customId },
          },
    );
    return {
      name: b.id,
      metadata,
      done: true,
      response: {
        "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput",
        inlinedResponses: { inlinedResponses },
      },
    };
  }

  private async upload(req: Request, text: string): Promise<Response> {
    let form: FormData;
    try {
      form = await new Request(req.url, { method: "POST", headers: req.headers, body: text }).formData();
    } catch {
      return invalid("chat", "The upload must be multipart/form-data with `purpose` and `file`.");
    }
    const file = form.get("file");
    const purpose = form.get("purpose");
    if (typeof purpose !== "string" || !file || typeof file === "string")
      return invalid("chat", "The upload must carry `purpose` and a `file`.");
    const f: SimFile = {
      id: id("file-"),
      purpose,
      filename: file.name,
      content: await file.text(),
      created: Date.now(),
    };
    this.files.set(f.id, f);
    return jsonResponse(200, JSON.stringify(fileObject(f)));
  }

  private put(content: string, purpose: string): string {
    const f: SimFile = { id: id("file-"), purpose, filename: `${purpose}.jsonl`, content, created: Date.now() };
    this.files.set(f.id, f);
    return f.id;
  }

  private async answer(path: string, headers: Headers, customId: string, body: unknown): Promise<LineAnswer> {
    const res = await this.call(path, headers, JSON.stringify(body));
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // kept as text
    }
    return { customId, status: res.status, body: parsed };
  }

  private async createChat(headers: Headers, text: string): Promise<Response> {
    const v: unknown = text ? JSON.parse(text) : undefined;
    if (!isObject(v) || typeof v.input_file_id !== "string" || typeof v.endpoint !== "string")
      return invalid("chat", "A batch needs `input_file_id` and `endpoint`.");
    const input = this.files.get(v.input_file_id);
    if (input?.purpose !== "batch") return notFound("chat", `No such File object: ${v.input_file_id}`);
    const answers: LineAnswer[] = [];
    const slicer = new Slicer();
    for (const line of input.content.split("\n")) {
      if (!line.trim()) continue;
      await slicer.pause();
      const row: unknown = JSON.parse(line);
      if (!isObject(row) || typeof row.custom_id !== "string") return invalid("chat", "Each line needs a `custom_id`.");
      if (row.url !== v.endpoint) return invalid("chat", `Line ${row.custom_id}: its url must be ${v.endpoint}.`);
      answers.push(await this.answer(v.endpoint, headers, row.custom_id, row.body));
    }
    const b = this.newBatch("chat", v.endpoint, v.input_file_id, answers);
    return jsonResponse(200, JSON.stringify(this.chatObject(b)));
  }

  private async createMessages(headers: Headers, text: string, origin: string): Promise<Response> {
    const v: unknown = text ? JSON.parse(text) : undefined;
    if (!isObject(v) || !Array.isArray(v.requests) || v.requests.length === 0)
      return invalid("messages", "requests: a batch needs at least one request");
    const answers: LineAnswer[] = [];
    const slicer = new Slicer();
    for (const r of v.requests) {
      await slicer.pause();
      if (!isObject(r) || typeof r.custom_id !== "string" || !isObject(r.params))
        return invalid("messages", "requests: each needs a custom_id and params");
      answers.push(await this.answer("/v1/messages", headers, r.custom_id, r.params));
    }
    const b = this.newBatch("messages", "/v1/messages", null, answers);
    return jsonResponse(200, JSON.stringify(this.messagesObject(b, origin)));
  }

  private newBatch(
    protocol: SimBatch["protocol"],
    endpoint: string,
    inputFileId: string | null,
    answers: LineAnswer[],
  ) {
    const now = Date.now();
    const b: SimBatch = {
      id: protocol === "generate" ? `batches/${id("")}` : id(protocol === "chat" ? "batch_" : "msgbatch_"),
      protocol,
      endpoint,
      inputFileId,
      created: now,
      readyAt: now + this.knobs.ms,
      fail: this.knobs.fail,
      cancelledAt: null,
      answers,
      outputFileId: null,
      errorFileId: null,
    };
    this.batches.set(b.id, b);
    return b;
  }

  private ended(b: SimBatch): boolean {
    return b.cancelledAt !== null || Date.now() >= b.readyAt;
  }

  /** A cancel before the batch ended: none of its lines ran. */
  private cancel(b: SimBatch): void {
    if (!this.ended(b)) b.cancelledAt = Date.now();
  }

  private chatObject(b: SimBatch) {
    const ended = this.ended(b);
    const cancelled = b.cancelledAt !== null;
    if (ended && !cancelled && !b.fail && b.outputFileId === null && b.errorFileId === null) {
      const ok = b.answers.filter((a) => a.status < 300);
      const bad = b.answers.filter((a) => a.status >= 300);
      const row = (a: LineAnswer) =>
        JSON.stringify({
          id: id("batch_req_"),
          custom_id: a.customId,
          response: { status_code: a.status, request_id: id("req_"), body: a.body },
          error: null,
        });
      if (ok.length) b.outputFileId = this.put(`${ok.map(row).join("\n")}\n`, "batch_output");
      if (bad.length) b.errorFileId = this.put(`${bad.map(row).join("\n")}\n`, "batch_error");
    }
    if (cancelled && b.errorFileId === null)
      b.errorFileId = this.put(
        `${b.answers
          .map((a) =>
            JSON.stringify({
              id: id("batch_req_"),
              custom_id: a.customId,
              response: null,
              error: { code: "batch_cancelled", message: "This request was cancelled before it ran." },
            }),
          )
          .join("\n")}\n`,
        "batch_error",
      );
    const status = !ended ? "in_progress" : cancelled ? "cancelled" : b.fail ? "failed" : "completed";
    const done = status === "completed" ? b.answers.filter((a) => a.status < 300).length : 0;
    const end = ended ? (b.cancelledAt ?? b.readyAt) : null;
    return {
      id: b.id,
      object: "batch",
      endpoint: b.endpoint,
      errors:
        b.fail && ended
          ? { object: "list", data: [{ code: "simulated_failure", message: "The batch failed." }] }
          : null,
      input_file_id: b.inputFileId,
      completion_window: "24h",
      status,
      output_file_id: b.outputFileId,
      error_file_id: b.errorFileId,
      created_at: seconds(b.created),
      in_progress_at: seconds(b.created),
      expires_at: seconds(b.created + 86_400_000),
      finalizing_at: status === "completed" ? seconds(end) : null,
      completed_at: status === "completed" ? seconds(end) : null,
      failed_at: status === "failed" ? seconds(end) : null,
      expired_at: null,
      cancelling_at: seconds(b.cancelledAt),
      cancelled_at: seconds(b.cancelledAt),
      request_counts: {
        total: b.answers.length,
        completed: done,
        failed: status === "completed" ? b.answers.length - done : 0,
      },
      metadata: null,
    };
  }

  private messagesObject(b: SimBatch, origin: string) {
    const ended = this.ended(b);
    const cancelled = b.cancelledAt !== null;
    const ok = ended && !cancelled && !b.fail ? b.answers.filter((a) => a.status < 300).length : 0;
    return {
      id: b.id,
      type: "message_batch",
      processing_status: ended ? "ended" : "in_progress",
      request_counts: {
        processing: ended ? 0 : b.answers.length,
        succeeded: ok,
        errored: ended && !cancelled ? b.answers.length - ok : 0,
        canceled: cancelled ? b.answers.length : 0,
        expired: 0,
      },
      ended_at: ended ? iso(b.cancelledAt ?? b.readyAt) : null,
      created_at: iso(b.created),
      expires_at: iso(b.created + 86_400_000),
      archived_at: null,
      cancel_initiated_at: iso(b.cancelledAt),
      results_url: ended ? `${origin}/v1/messages/batches/${b.id}/results` : null,
    };
  }

  private messagesResults(b: SimBatch): string {
    return b.answers
      .map((a) => {
        if (b.cancelledAt !== null) return JSON.stringify({ custom_id: a.customId, result: { type: "canceled" } });
        if (b.fail)
          return JSON.stringify({
            custom_id: a.customId,
            result: {
              type: "errored",
              error: { type: "error", error: { type: "api_error", message: "The simulated batch failed." } },
            },
          });
        if (a.status < 300)
          return JSON.stringify({ custom_id: a.customId, result: { type: "succeeded", message: a.body } });
        const error = isObject(a.body)
          ? a.body
          : { type: "error", error: { type: "api_error", message: String(a.body) } };
        return JSON.stringify({ custom_id: a.customId, result: { type: "errored", error } });
      })
      .map((l) => `${l}\n`)
      .join("");
  }
}

function fileObject(f: SimFile) {
  return {
    id: f.id,
    object: "file",
    bytes: Buffer.byteLength(f.content),
    created_at: seconds(f.created),
    filename: f.filename,
    purpose: f.purpose,
    status: "processed",
    status_details: null,
  };
}

function notFound(protocol: BatchProtocol, message: string): Response {
  if (protocol === "generate")
    return jsonResponse(404, JSON.stringify({ error: { code: 404, message, status: "NOT_FOUND" } }));
  return protocol === "messages"
    ? jsonResponse(404, JSON.stringify({ type: "error", error: { type: "not_found_error", message } }))
    : jsonResponse(
        404,
        JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code: "not_found" } }),
      );
}

function invalid(protocol: BatchProtocol, message: string): Response {
  if (protocol === "generate")
    return jsonResponse(400, JSON.stringify({ error: { code: 400, message, status: "INVALID_ARGUMENT" } }));
  return protocol === "messages"
    ? jsonResponse(400, JSON.stringify({ type: "error", error: { type: "invalid_request_error", message } }))
    : jsonResponse(400, JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code: null } }));
}
