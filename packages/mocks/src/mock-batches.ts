/**
 * Files and batches of both client families, as the gateway answers them, deterministic: a
 * batch is `in_progress` when created and has ended at the first look after (retrieve, list,
 * results); its lines are answered then, each through the mock's own route for it — so scripted
 * replies, failures and `turnpike.bodies(…)` apply to batch lines as to direct calls. A batch
 * cancelled before that first look ends with every line cancelled, none answered.
 */
import type {
  Batch,
  BatchEndpoint,
  BatchResultLine,
  FileObject,
  MessageBatch,
  MessageBatchIndividualResponse,
} from "@turnpike/schema";
import { http, type HttpHandler } from "msw";
import type { MockError } from "./mock-reply.js";

/** What the batch routes need of the mock. */
export interface BatchRouteDeps {
  /** The handler's URL pattern for a path. */
  url(path: string): string;
  /** The caller's key (undefined: refused with a 401), and a 401/404 in the caller's format. */
  admit(
    request: Request,
    endpoint: "files" | "batches" | "message_batches",
  ): Promise<{ apiKey: string; fail: (e: MockError) => Response } | Response>;
  /** One line's call, answered by the mock's own route for it. */
  call(request: Request): Promise<Response>;
}

interface StoredFile {
  apiKey: string;
  object: FileObject;
  content: string;
}

interface ChatJob {
  apiKey: string;
  batch: Batch;
  lines: string[];
}

interface MessagesJob {
  apiKey: string;
  batch: MessageBatch;
  requests: { custom_id: string; params: unknown }[];
  results: MessageBatchIndividualResponse[] | undefined;
}

const ENDPOINTS: readonly string[] = ["/v1/chat/completions", "/v1/responses", "/v1/embeddings"];

const jsonReply = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** The batch store of one mock: reset with it. */
export class MockBatches {
  private files = new Map<string, StoredFile>();
  private chatJobs = new Map<string, ChatJob>();
  private messageJobs = new Map<string, MessagesJob>();
  private n = 0;

  constructor(private readonly deps: BatchRouteDeps) {}

  reset(): void {
    this.files.clear();
    this.chatJobs.clear();
    this.messageJobs.clear();
    this.n = 0;
  }

  private id(prefix: string): string {
    this.n += 1;
    return `${prefix}mock${String(this.n).padStart(6, "0")}`;
  }

  private putFile(apiKey: string, filename: string, purpose: string, content: string): FileObject {
    const object: FileObject = {
      id: this.id("file-"),
      object: "file",
      bytes: new TextEncoder().encode(content).length,
      created_at: Math.floor(Date.now() / 1000),
      filename,
      purpose,
      status: "processed",
      status_details: null,
    };
    this.files.set(object.id, { apiKey, object, content });
    return object;
  }

  /** The lines of a chat-family batch answered: its output and error files written. */
  private async runChat(origin: string, headers: Headers, job: ChatJob): Promise<void> {
    const output: string[] = [];
    const errors: string[] = [];
    for (const [i, text] of job.lines.entries()) {
      let line: { custom_id?: unknown; method?: unknown; url?: unknown; body?: unknown } | undefined;
      try {
        line = JSON.parse(text) as typeof line;
      } catch {
        line = undefined;
      }
      const customId = typeof line?.custom_id === "string" ? line.custom_id : `line-${i + 1}`;
      const bad = (message: string) => {
        const row: BatchResultLine = {
          id: this.id("batch_req_"),
          custom_id: customId,
          response: null,
          error: { code: "invalid_request", message },
        };
        errors.push(JSON.stringify(row));
      };
      if (!line || typeof line.body !== "object" || line.body === null) {
        bad(`Line ${i + 1} is not a request: {custom_id, method, url, body}.`);
        continue;
      }
      if (line.url !== job.batch.endpoint) {
        bad(`Line ${i + 1} calls ${String(line.url)}, but the batch's endpoint is ${job.batch.endpoint}.`);
        continue;
      }
      const res = await this.deps.call(
        new Request(origin + job.batch.endpoint, {
          method: "POST",
          headers: { authorization: headers.get("authorization") ?? "", "content-type": "application/json" },
          body: JSON.stringify(line.body),
        }),
      );
      const body: unknown = await res.json().catch(() => null);
      const row: BatchResultLine = {
        id: this.id("batch_req_"),
        custom_id: customId,
        response: { status_code: res.status, request_id: res.headers.get("x-request-id") ?? "", body },
        error: null,
      };
      (res.ok ? output : errors).push(JSON.stringify(row));
    }
    const { batch } = job;
    const now = Math.floor(Date.now() / 1000);
    const file = (rows: string[], name: string) =>
      rows.length ? this.putFile(job.apiKey, name, "batch_output", `${rows.join("\n")}\n`).id : null;
    batch.output_file_id = file(output, `${batch.id}_output.jsonl`);
    batch.error_file_id = file(errors, `${batch.id}_error.jsonl`);
    batch.status = "completed";
    batch.finalizing_at = now;
    batch.completed_at = now;
    batch.request_counts = { total: job.lines.length, completed: output.length, failed: errors.length };
  }

  /** A chat-family batch at its first look after creation: ended (completed, or cancelled). */
  private async settleChat(request: Request, job: ChatJob): Promise<Batch> {
    const { batch } = job;
    if (batch.status === "in_progress") await this.runChat(new URL(request.url).origin, request.headers, job);
    else if (batch.status === "cancelling") {
      batch.status = "cancelled";
      batch.cancelled_at = Math.floor(Date.now() / 1000);
    }
    return batch;
  }

  /** A message batch at its first look after creation: ended, its results written. */
  private async settleMessages(request: Request, job: MessagesJob): Promise<MessageBatch> {
    const { batch } = job;
    if (job.results) return batch;
    const origin = new URL(request.url).origin;
    const results: MessageBatchIndividualResponse[] = [];
    const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    for (const r of job.requests) {
      if (batch.processing_status === "canceling") {
        results.push({ custom_id: r.custom_id, result: { type: "canceled" } });
        counts.canceled++;
        continue;
      }
      const res = await this.deps.call(
        new Request(`${origin}/v1/messages`, {
          method: "POST",
          headers: {
            "x-api-key": request.headers.get("x-api-key") ?? job.apiKey,
            "anthropic-version": "2023-06-01",
            "content-type": "application/json",
          },
          body: JSON.stringify(r.params),
        }),
      );
      const body: unknown = await res.json().catch(() => null);
      if (res.ok) {
        results.push({ custom_id: r.custom_id, result: { type: "succeeded", message: body } });
        counts.succeeded++;
      } else {
        results.push({ custom_id: r.custom_id, result: { type: "errored", error: body } });
        counts.errored++;
      }
    }
    job.results = results;
    batch.processing_status = "ended";
    batch.request_counts = counts;
    batch.ended_at = new Date().toISOString();
    batch.results_url = `${origin}/v1/messages/batches/${batch.id}/results`;
    return batch;
  }

  private chatJob(apiKey: string, id: string | undefined): ChatJob | undefined {
    const job = id === undefined ? undefined : this.chatJobs.get(id);
    return job?.apiKey === apiKey ? job : undefined;
  }

  private messagesJob(apiKey: string, id: string | undefined): MessagesJob | undefined {
    const job = id === undefined ? undefined : this.messageJobs.get(id);
    return job?.apiKey === apiKey ? job : undefined;
  }

  /** The routes: files, the chat family's batches, the messages format's batches. */
  handlers(): HttpHandler[] {
    const { url, admit } = this.deps;
    const gone = (what: string, id: string | undefined): MockError => ({
      status: 404,
      code: "not_found",
      message: `No ${what} \`${id ?? ""}\` for this key.`,
    });
    const param = (p: string | readonly string[] | undefined) => (typeof p === "string" ? p : undefined);
    const limitOf = (request: Request) => {
      const n = Number(new URL(request.url).searchParams.get("limit") ?? 20);
      return Math.min(100, Math.max(1, Number.isFinite(n) ? n : 20));
    };
    return [
      http.post(url("/v1/files"), async ({ request }) => {
        const a = await admit(request, "files");
        if (a instanceof Response) return a;
        const form = await request.formData().catch(() => undefined);
        const file = form?.get("file");
        if (form?.get("purpose") !== "batch")
          return a.fail({ status: 400, param: "purpose", message: "`purpose` must be `batch`." });
        if (!(file instanceof Blob)) return a.fail({ status: 400, param: "file", message: "`file` is required." });
        const name = file instanceof File ? file.name : "input.jsonl";
        return jsonReply(this.putFile(a.apiKey, name, "batch", await file.text()));
      }),
      http.get(url("/v1/files/:id/content"), async ({ request, params }) => {
        const a = await admit(request, "files");
        if (a instanceof Response) return a;
        const f = this.files.get(param(params.id) ?? "");
        if (f?.apiKey !== a.apiKey) return a.fail(gone("file", param(params.id)));
        return new Response(f.content, { headers: { "content-type": "application/jsonl" } });
      }),
      http.get(url("/v1/files/:id"), async ({ request, params }) => {
        const a = await admit(request, "files");
        if (a instanceof Response) return a;
        const f = this.files.get(param(params.id) ?? "");
        return f?.apiKey === a.apiKey ? jsonReply(f.object) : a.fail(gone("file", param(params.id)));
      }),
      http.post(url("/v1/batches"), async ({ request }) => {
        const a = await admit(request, "batches");
        if (a instanceof Response) return a;
        const body = (await request.json().catch(() => ({}))) as Record<string, unknown>;
        if (typeof body.endpoint !== "string" || !ENDPOINTS.includes(body.endpoint))
          return a.fail({
            status: 400,
            param: "endpoint",
            message: `\`endpoint\` must be one of ${ENDPOINTS.join(", ")}.`,
          });
        if (body.completion_window !== "24h")
          return a.fail({ status: 400, param: "completion_window", message: "`completion_window` must be `24h`." });
        const input = this.files.get(typeof body.input_file_id === "string" ? body.input_file_id : "");
        if (input?.apiKey !== a.apiKey || input.object.purpose !== "batch")
          return a.fail(gone("batch input file", String(body.input_file_id)));
        const lines = input.content.split("\n").filter((l) => l.trim() !== "");
        const created = Math.floor(Date.now() / 1000);
        const batch: Batch = {
          id: this.id("batch_"),
          object: "batch",
          endpoint: body.endpoint as BatchEndpoint, // one of ENDPOINTS: checked above
          errors: null,
          input_file_id: input.object.id,
          completion_window: "24h",
          status: "in_progress",
          output_file_id: null,
          error_file_id: null,
          created_at: created,
          in_progress_at: created,
          expires_at: created + 86_400,
          finalizing_at: null,
          completed_at: null,
          failed_at: null,
          expired_at: null,
          cancelling_at: null,
          cancelled_at: null,
          request_counts: { total: lines.length, completed: 0, failed: 0 },
          metadata: (body.metadata as Record<string, string> | null | undefined) ?? null,
        };
        this.chatJobs.set(batch.id, { apiKey: a.apiKey, batch, lines });
        return jsonReply({ ...batch });
      }),
      http.get(url("/v1/batches"), async ({ request }) => {
        const a = await admit(request, "batches");
        if (a instanceof Response) return a;
        const mine = [...this.chatJobs.values()].filter((j) => j.apiKey === a.apiKey).reverse();
        const after = new URL(request.url).searchParams.get("after");
        const from = after ? mine.findIndex((j) => j.batch.id === after) + 1 : 0;
        const page = mine.slice(from, from + limitOf(request));
        const data = await Promise.all(page.map((j) => this.settleChat(request, j)));
        return jsonReply({
          object: "list",
          data,
          first_id: data[0]?.id ?? null,
          last_id: data.at(-1)?.id ?? null,
          has_more: from + page.length < mine.length,
        });
      }),
      http.get(url("/v1/batches/:id"), async ({ request, params }) => {
        const a = await admit(request, "batches");
        if (a instanceof Response) return a;
        const job = this.chatJob(a.apiKey, param(params.id));
        return job ? jsonReply(await this.settleChat(request, job)) : a.fail(gone("batch", param(params.id)));
      }),
      http.post(url("/v1/batches/:id/cancel"), async ({ request, params }) => {
        const a = await admit(request, "batches");
        if (a instanceof Response) return a;
        const job = this.chatJob(a.apiKey, param(params.id));
        if (!job) return a.fail(gone("batch", param(params.id)));
        if (job.batch.status === "in_progress") {
          job.batch.status = "cancelling";
          job.batch.cancelling_at = Math.floor(Date.now() / 1000);
        }
        return jsonReply({ ...job.batch });
      }),
      http.post(url("/v1/messages/batches"), async ({ request }) => {
        const a = await admit(request, "message_batches");
        if (a instanceof Response) return a;
        const body = (await request.json().catch(() => ({}))) as { requests?: unknown };
        const requests = Array.isArray(body.requests) ? body.requests : [];
        const ok = requests.every(
          (r: unknown) =>
            typeof r === "object" && r !== null && typeof (r as { custom_id?: unknown }).custom_id === "string",
        );
        if (requests.length === 0 || !ok)
          return a.fail({ status: 400, message: "`requests` must be a non-empty list of {custom_id, params}." });
        const created = new Date();
        const batch: MessageBatch = {
          id: this.id("msgbatch_"),
          type: "message_batch",
          processing_status: "in_progress",
          request_counts: { processing: requests.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
          ended_at: null,
          created_at: created.toISOString(),
          expires_at: new Date(created.getTime() + 86_400_000).toISOString(),
          archived_at: null,
          cancel_initiated_at: null,
          results_url: null,
        };
        this.messageJobs.set(batch.id, {
          apiKey: a.apiKey,
          batch,
          requests: requests as MessagesJob["requests"], // each checked to carry a custom_id above
          results: undefined,
        });
        return jsonReply({ ...batch });
      }),
      http.get(url("/v1/messages/batches"), async ({ request }) => {
        const a = await admit(request, "message_batches");
        if (a instanceof Response) return a;
        const mine = [...this.messageJobs.values()].filter((j) => j.apiKey === a.apiKey).reverse();
        const after = new URL(request.url).searchParams.get("after_id");
        const from = after ? mine.findIndex((j) => j.batch.id === after) + 1 : 0;
        const page = mine.slice(from, from + limitOf(request));
        const data = await Promise.all(page.map((j) => this.settleMessages(request, j)));
        return jsonReply({
          data,
          has_more: from + page.length < mine.length,
          first_id: data[0]?.id ?? null,
          last_id: data.at(-1)?.id ?? null,
        });
      }),
      http.get(url("/v1/messages/batches/:id/results"), async ({ request, params }) => {
        const a = await admit(request, "message_batches");
        if (a instanceof Response) return a;
        const job = this.messagesJob(a.apiKey, param(params.id));
        if (!job) return a.fail(gone("message batch", param(params.id)));
        await this.settleMessages(request, job);
        const text = (job.results ?? []).map((r) => JSON.stringify(r)).join("\n");
        return new Response(`${text}\n`, { headers: { "content-type": "application/x-jsonl" } });
      }),
      http.get(url("/v1/messages/batches/:id"), async ({ request, params }) => {
        const a = await admit(request, "message_batches");
        if (a instanceof Response) return a;
        const job = this.messagesJob(a.apiKey, param(params.id));
        return job
          ? jsonReply(await this.settleMessages(request, job))
          : a.fail(gone("message batch", param(params.id)));
      }),
      http.post(url("/v1/messages/batches/:id/cancel"), async ({ request, params }) => {
        const a = await admit(request, "message_batches");
        if (a instanceof Response) return a;
        const job = this.messagesJob(a.apiKey, param(params.id));
        if (!job) return a.fail(gone("message batch", param(params.id)));
        if (job.batch.processing_status === "in_progress") {
          job.batch.processing_status = "canceling";
          job.batch.cancel_initiated_at = new Date().toISOString();
        }
        return jsonReply({ ...job.batch });
      }),
    ];
  }
}
