import type { Protocol } from "@turnpike/schema";
import type { GatewayDeps } from "../wiring/deps";
import { authHeaders, trimSlash } from "../protocols/upstream-protocol";
import type { Upstream } from "../vocabulary/target";
import { isRecord } from "../vocabulary/client-errors";
import { Slicer } from "../vocabulary/loop-turns";
import { fileLines, readsOf } from "./file-lines";

/**
 * The upstreams' own batch APIs (docs/protocols.md, "Batches"): the chat family's `POST /files`
 * (purpose `batch`, JSONL) + `POST /batches` + poll + output and error files, the messages
 * protocol's `/v1/messages/batches` (create, poll, results JSONL), and the generateContent
 * protocol's batch mode (`models/{m}:batchGenerateContent` with inline requests, the operation
 * polled at `batches/{id}`, the inline responses read from it; one model per batch). Each line is already in the
 * upstream's protocol (batches/prepare-line.ts); each answer is read back as the status and body
 * the same call would have had, and replayed through the pipeline (batch-worker.ts).
 */

/** One line as the upstream batch takes it: its id in the upstream batch, and its request body. */
export interface UpstreamLine {
  customId: string;
  body: Record<string, unknown>;
}

/** An upstream's answer to one line: the status and body a direct call would have had. */
export interface UpstreamAnswer {
  status: number;
  body: unknown;
}

/** What became of a line in the upstream batch: answered, or never run (cancelled, expired). */
export type UpstreamOutcome = UpstreamAnswer | "cancelled" | "expired";

export interface UpstreamResults {
  outcomes: Map<string, UpstreamOutcome>;
  missing?: "cancelled" | "expired";
}

/** Where an upstream batch stands: still running, ended (results ready), or failed as a whole. */
export type UpstreamBatchState = "running" | "ended" | "failed";

/** The upstream answered a batch call with an error status. */
export class UpstreamBatchError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }

  /** The upstream will not take this batch (no batch API, a refused file): not worth trying again. */
  get refused(): boolean {
    return this.status >= 400 && this.status < 500 && this.status !== 408 && this.status !== 429;
  }
}

export interface UpstreamBatchApi {
  /**
   * Sends the lines as one upstream batch to `endpoint`, each read from `lines` as the body is
   * sent ({@link streamedBody}); returns the upstream's batch id.
   */
  submit(
    deps: Pick<GatewayDeps, "fetch">,
    upstream: Upstream,
    endpoint: string,
    lines: AsyncIterable<UpstreamLine> | Iterable<UpstreamLine>,
  ): Promise<string>;
  poll(deps: Pick<GatewayDeps, "fetch">, upstream: Upstream, id: string): Promise<UpstreamBatchState>;
  /** Each line's outcome, by its custom id; lines absent were never run (`missing` says why, if the upstream said). */
  results(deps: Pick<GatewayDeps, "fetch">, upstream: Upstream, id: string): Promise<UpstreamResults>;
  cancel(deps: Pick<GatewayDeps, "fetch">, upstream: Upstream, id: string): Promise<void>;
}

async function call(deps: Pick<GatewayDeps, "fetch">, url: string, init: RequestInit, what: string): Promise<Response> {
  const res = await deps.fetch(url, { ...init, signal: AbortSignal.timeout(120_000) });
  if (!res.ok) {
    const text = (await res.text()).slice(0, 500);
    throw new UpstreamBatchError(res.status, `${what}: ${res.status} ${text}`);
  }
  return res;
}

async function json(res: Response): Promise<Record<string, unknown>> {
  const v: unknown = await res.json();
  if (!isRecord(v)) throw new UpstreamBatchError(502, "the upstream's batch reply is not a JSON object");
  return v;
}

/**
 * The rows of a JSONL reply, read as its bytes come, line by line (a line across two reads is
 * joined first), each parsed in turn with a turn of the event loop every few milliseconds: the
 * results of 50,000 lines are 100 MB and more, which read as one text and split held the loop
 * for seconds.
 */
export async function* jsonRows(res: Response): AsyncGenerator<Record<string, unknown>> {
  if (!res.body) return;
  const slicer = new Slicer();
  for await (const line of fileLines(readsOf(res.body), Number.MAX_SAFE_INTEGER)) {
    await slicer.pause();
    if (line.text === undefined || !line.text.trim()) continue;
    try {
      const v: unknown = JSON.parse(line.text);
      if (isRecord(v)) yield v;
    } catch {
      // A line that is not JSON answers no request: its request is left unanswered.
    }
  }
}

/** The pieces a streamed request body is sent in: about this many characters each (a line more at most). */
export const UPSTREAM_PIECE_BYTES = 1 << 20;

/**
 * A request body made as it is sent: `head`, then each item's text (`sep` between them), then
 * `tail`, in pieces of about {@link UPSTREAM_PIECE_BYTES} characters, each made when the upstream
 * has taken the one before, with a turn of the event loop every few milliseconds while the items
 * are read and written. Nothing but the piece being made is held: 50,000 lines of 2 KB made into
 * one string (and a form of it) held the loop for 0.4–1.9 s. An upstream that stops reading (a
 * refusal part way) stops the items too.
 */
export function streamedBody<T>(
  head: string,
  items: AsyncIterable<T> | Iterable<T>,
  text: (item: T) => string,
  sep: string,
  tail: string,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const slicer = new Slicer();
  const it = (async function* () {
    yield* items;
  })();
  let started = false;
  let written = 0;
  let ended = false;
  return new ReadableStream<Uint8Array>({
    async pull(out) {
      if (ended) return out.close();
      const parts: string[] = started ? [] : [head];
      let size = started ? 0 : head.length;
      started = true;
      while (size < UPSTREAM_PIECE_BYTES) {
        const next = await it.next();
        if (next.done) {
          parts.push(tail);
          ended = true;
          break;
        }
        const t = (written++ > 0 ? sep : "") + text(next.value);
        parts.push(t);
        size += t.length;
        await slicer.pause();
      }
      out.enqueue(encoder.encode(parts.join("")));
    },
    async cancel() {
      await it.return(undefined);
    },
  });
}

/**
 * A `multipart/form-data` body of `fields` and then one file, a JSONL of each line's `row`, sent
 * as it is made. JSONL cannot hold the boundary: a line break inside a JSON string is escaped.
 */
function multipart(
  fields: Record<string, string>,
  file: { name: string; filename: string; type: string },
  lines: AsyncIterable<UpstreamLine> | Iterable<UpstreamLine>,
  row: (l: UpstreamLine) => string,
): { body: ReadableStream<Uint8Array>; contentType: string } {
  const boundary = `turnpike-${crypto.randomUUID()}`;
  const head = [
    ...Object.entries(fields).map(
      ([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
    ),
    `--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${file.filename}"\r\nContent-Type: ${file.type}\r\n\r\n`,
  ].join("");
  return {
    body: streamedBody(head, lines, row, "\n", `\n\r\n--${boundary}--\r\n`),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

const idOf = (o: Record<string, unknown>, what: string): string => {
  if (typeof o.id !== "string") throw new UpstreamBatchError(502, `${what}: the reply names no id`);
  return o.id;
};

/** The chat family's batch API, under a base ending in `/v1`. */
const chatBatches: UpstreamBatchApi = {
  async submit(deps, upstream, endpoint, lines) {
    const base = trimSlash(upstream.baseURL);
    const auth = authHeaders(upstream.auth, upstream.apiKey);
    const form = multipart(
      { purpose: "batch" },
      { name: "file", filename: "turnpike-batch.jsonl", type: "application/jsonl" },
      lines,
      (l) => JSON.stringify({ custom_id: l.customId, method: "POST", url: endpoint, body: l.body }),
    );
    const file = await json(
      await call(
        deps,
        `${base}/files`,
        { method: "POST", headers: { ...auth, "content-type": form.contentType }, body: form.body },
        "upload",
      ),
    );
    const batch = await json(
      await call(
        deps,
        `${base}/batches`,
        {
          method: "POST",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({ input_file_id: idOf(file, "upload"), endpoint, completion_window: "24h" }),
        },
        "batch create",
      ),
    );
    return idOf(batch, "batch create");
  },
  async poll(deps, upstream, id) {
    const base = trimSlash(upstream.baseURL);
    const b = await json(
      await call(
        deps,
        `${base}/batches/${encodeURIComponent(id)}`,
        { headers: authHeaders(upstream.auth, upstream.apiKey) },
        "batch retrieve",
      ),
    );
    if (b.status === "failed") return "failed";
    return b.status === "completed" || b.status === "expired" || b.status === "cancelled" ? "ended" : "running";
  },
  async results(deps, upstream, id) {
    const base = trimSlash(upstream.baseURL);
    const headers = authHeaders(upstream.auth, upstream.apiKey);
    const b = await json(await call(deps, `${base}/batches/${encodeURIComponent(id)}`, { headers }, "batch retrieve"));
    const out = new Map<string, UpstreamOutcome>();
    for (const fileId of [b.output_file_id, b.error_file_id]) {
      if (typeof fileId !== "string") continue;
      const res = await call(deps, `${base}/files/${encodeURIComponent(fileId)}/content`, { headers }, "file content");
      for await (const row of jsonRows(res)) {
        if (typeof row.custom_id !== "string") continue;
        const response = isRecord(row.response) ? row.response : undefined;
        const error = isRecord(row.error) ? row.error : undefined;
        if (response && typeof response.status_code === "number")
          out.set(row.custom_id, { status: response.status_code, body: response.body });
        else if (error?.code === "batch_expired") out.set(row.custom_id, "expired");
        else if (error?.code === "batch_cancelled") out.set(row.custom_id, "cancelled");
        else
          out.set(row.custom_id, {
            status: 500,
            body: {
              error: {
                type: "server_error",
                code: typeof error?.code === "string" ? error.code : null,
                message:
                  typeof error?.message === "string" ? error.message : "The upstream batch did not run this line.",
              },
            },
          });
      }
    }
    return { outcomes: out, ...(b.status === "cancelled" ? { missing: "cancelled" as const } : {}) };
  },
  async cancel(deps, upstream, id) {
    const base = trimSlash(upstream.baseURL);
    await call(
      deps,
      `${base}/batches/${encodeURIComponent(id)}/cancel`,
      { method: "POST", headers: authHeaders(upstream.auth, upstream.apiKey) },
      "batch cancel",
    );
  },
};

/** The status a messages-protocol error type is sent with. */
const MESSAGES_ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

const messagesHeaders = (upstream: Upstream) => ({
  ...authHeaders(upstream.auth, upstream.apiKey),
  "anthropic-version": "2023-06-01",
});

/** The messages protocol's batch API, under the origin. */
const messagesBatches: UpstreamBatchApi = {
  async submit(deps, upstream, _endpoint, lines) {
    const request = (l: UpstreamLine) => {
      const { stream: _stream, ...params } = l.body;
      return JSON.stringify({ custom_id: l.customId, params });
    };
    const b = await json(
      await call(
        deps,
        `${trimSlash(upstream.baseURL)}/v1/messages/batches`,
        {
          method: "POST",
          headers: { ...messagesHeaders(upstream), "content-type": "application/json" },
          body: streamedBody('{"requests":[', lines, request, ",", "]}"),
        },
        "message batch create",
      ),
    );
    return idOf(b, "message batch create");
  },
  async poll(deps, upstream, id) {
    const b = await json(
      await call(
        deps,
        `${trimSlash(upstream.baseURL)}/v1/messages/batches/${encodeURIComponent(id)}`,
        { headers: messagesHeaders(upstream) },
        "message batch retrieve",
      ),
    );
    return b.processing_status === "ended" ? "ended" : "running";
  },
  async results(deps, upstream, id) {
    const base = trimSlash(upstream.baseURL);
    const b = await json(
      await call(
        deps,
        `${base}/v1/messages/batches/${encodeURIComponent(id)}`,
        { headers: messagesHeaders(upstream) },
        "message batch retrieve",
      ),
    );
    const url =
      typeof b.results_url === "string"
        ? b.results_url
        : `${base}/v1/messages/batches/${encodeURIComponent(id)}/results`;
    const res = await call(deps, url, { headers: messagesHeaders(upstream) }, "message batch results");
    const out = new Map<string, UpstreamOutcome>();
    for await (const row of jsonRows(res)) {
      const result = isRecord(row.result) ? row.result : undefined;
      if (typeof row.custom_id !== "string" || !result) continue;
      if (result.type === "succeeded") out.set(row.custom_id, { status: 200, body: result.message });
      else if (result.type === "canceled") out.set(row.custom_id, "cancelled");
      else if (result.type === "expired") out.set(row.custom_id, "expired");
      else {
        const envelope = isRecord(result.error) ? result.error : {};
        const inner = isRecord(envelope.error) ? envelope.error : {};
        const type = typeof inner.type === "string" ? inner.type : "api_error";
        out.set(row.custom_id, {
          status: MESSAGES_ERROR_STATUS[type] ?? 500,
          body: isRecord(envelope.error)
            ? envelope
            : { type: "error", error: { type, message: "The request errored." } },
        });
      }
    }
    return { outcomes: out };
  },
  async cancel(deps, upstream, id) {
    await call(
      deps,
      `${trimSlash(upstream.baseURL)}/v1/messages/batches/${encodeURIComponent(id)}/cancel`,
      { method: "POST", headers: messagesHeaders(upstream) },
      "message batch cancel",
    );
  },
};

/** An HTTP status for a google.rpc code (the generateContent protocol's per-request errors). */
const RPC_STATUS: Record<number, number> = {
  3: 400,
  5: 404,
  7: 403,
  8: 429,
  9: 400,
  11: 400,
  13: 500,
  14: 503,
  16: 401,
};
const RPC_NAME: Record<number, string> = {
  3: "INVALID_ARGUMENT",
  5: "NOT_FOUND",
  7: "PERMISSION_DENIED",
  8: "RESOURCE_EXHAUSTED",
  9: "FAILED_PRECONDITION",
  11: "OUT_OF_RANGE",
  13: "INTERNAL",
  14: "UNAVAILABLE",
  16: "UNAUTHENTICATED",
};

const generateHeaders = (upstream: Upstream) => authHeaders(upstream.auth, upstream.apiKey);

/** `batches/{id}` as the upstream names it, from the id kept (which is that name). */
const operationUrl = (upstream: Upstream, name: string) =>
  `${trimSlash(upstream.baseURL)}/v1beta/${name.split("/").map(encodeURIComponent).join("/")}`;

/** The generateContent protocol's batch mode, under the origin; `endpoint` is the model's `:generateContent` path. */
const generateBatches: UpstreamBatchApi = {
  async submit(deps, upstream, endpoint, lines) {
    const at = endpoint.replace(/:generateContent$/, ":batchGenerateContent");
    const request = (l: UpstreamLine) => JSON.stringify({ request: l.body, metadata: { key: l.customId } });
    const op = await json(
      await call(
        deps,
        `${trimSlash(upstream.baseURL)}${at}`,
        {
          method: "POST",
          headers: { ...generateHeaders(upstream), "content-type": "application/json" },
          // The requests written as they are sent, inside `batch.inputConfig.requests.requests`.
          body: streamedBody(
            '{"batch":{"displayName":"turnpike-batch","inputConfig":{"requests":{"requests":[',
            lines,
            request,
            ",",
            "]}}}}",
          ),
        },
        "batchGenerateContent",
      ),
    );
    if (typeof op.name !== "string")
      throw new UpstreamBatchError(502, "batchGenerateContent: the reply names no batch");
    return op.name;
  },
  async poll(deps, upstream, id) {
    const op = await json(
      await call(deps, operationUrl(upstream, id), { headers: generateHeaders(upstream) }, "batches.get"),
    );
    const state = isRecord(op.metadata) ? op.metadata.state : undefined;
    if (state === "BATCH_STATE_FAILED") return "failed";
    return op.done === true ? "ended" : "running";
  },
  async results(deps, upstream, id) {
    const op = await json(
      await call(deps, operationUrl(upstream, id), { headers: generateHeaders(upstream) }, "batches.get"),
    );
    const state = isRecord(op.metadata) ? op.metadata.state : undefined;
    const response = isRecord(op.response) ? op.response : {};
    const outer = isRecord(response.inlinedResponses) ? response.inlinedResponses : {};
    const rows = Array.isArray(outer.inlinedResponses) ? outer.inlinedResponses : [];
    const out = new Map<string, UpstreamOutcome>();
    for (const row of rows) {
      if (!isRecord(row)) continue;
      const key = isRecord(row.metadata) && typeof row.metadata.key === "string" ? row.metadata.key : undefined;
      if (key === undefined) continue;
      if (isRecord(row.response)) out.set(key, { status: 200, body: row.response });
      else {
        const e = isRecord(row.error) ? row.error : {};
        const code = typeof e.code === "number" ? e.code : 13;
        const status = RPC_STATUS[code] ?? 500;
        out.set(key, {
          status,
          body: {
            error: {
              code: status,
              message: typeof e.message === "string" ? e.message : "The request failed in the batch.",
              status: RPC_NAME[code] ?? "INTERNAL",
            },
          },
        });
      }
    }
    // A batch cancelled or expired upstream did not run the requests it does not answer.
    const missing = state === "BATCH_STATE_CANCELLED" ? "cancelled" : "expired";
    return { outcomes: out, missing };
  },
  async cancel(deps, upstream, id) {
    await call(
      deps,
      `${operationUrl(upstream, id)}:cancel`,
      { method: "POST", headers: generateHeaders(upstream) },
      "batches.cancel",
    );
  },
};

/** The upstream protocols with a batch API of their own; the others' lines run through Turnpike's queue. */
export const UPSTREAM_BATCH_APIS: Partial<Record<Protocol, UpstreamBatchApi>> = {
  chat: chatBatches,
  messages: messagesBatches,
  generate: generateBatches,
};
