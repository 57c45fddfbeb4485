import type { Protocol } from "@turnpike/schema";
import type { GatewayDeps } from "../deps";
import { authHeaders, trimSlash } from "../protocols/upstream-protocol";
import type { Upstream } from "../vocabulary/target";
import { isRecord } from "../vocabulary/client-errors";

/**
 * The upstreams' own batch APIs (docs/protocols.md, "Batches"): the chat family's `POST /files`
 * (purpose `batch`, JSONL) + `POST /batches` + poll + output and error files, and the messages
 * protocol's `/v1/messages/batches` (create, poll, results JSONL). Each line is already in the
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
  /** Sends the lines as one upstream batch to `endpoint`; returns the upstream's batch id. */
  submit(
    deps: Pick<GatewayDeps, "fetch">,
    upstream: Upstream,
    endpoint: string,
    lines: readonly UpstreamLine[],
  ): Promise<string>;
  poll(deps: Pick<GatewayDeps, "fetch">, upstream: Upstream, id: string): Promise<UpstreamBatchState>;
  /** Each line's outcome, by its custom id (lines absent: never run). */
  results(deps: Pick<GatewayDeps, "fetch">, upstream: Upstream, id: string): Promise<Map<string, UpstreamOutcome>>;
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

function jsonLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const v: unknown = JSON.parse(line);
      if (isRecord(v)) out.push(v);
    } catch {
      // A line that is not JSON answers no request: its request is left unanswered.
    }
  }
  return out;
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
    const jsonl = lines
      .map((l) => JSON.stringify({ custom_id: l.customId, method: "POST", url: endpoint, body: l.body }))
      .join("\n");
    const form = new FormData();
    form.append("purpose", "batch");
    form.append("file", new Blob([`${jsonl}\n`], { type: "application/jsonl" }), "turnpike-batch.jsonl");
    const file = await json(await call(deps, `${base}/files`, { method: "POST", headers: auth, body: form }, "upload"));
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
      for (const row of jsonLines(await res.text())) {
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
    return out;
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
    const requests = lines.map((l) => {
      const { stream: _stream, ...params } = l.body;
      return { custom_id: l.customId, params };
    });
    const b = await json(
      await call(
        deps,
        `${trimSlash(upstream.baseURL)}/v1/messages/batches`,
        {
          method: "POST",
          headers: { ...messagesHeaders(upstream), "content-type": "application/json" },
          body: JSON.stringify({ requests }),
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
    for (const row of jsonLines(await res.text())) {
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
    return out;
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

/** The upstream protocols with a batch API of their own; the others' lines run through Turnpike's queue. */
export const UPSTREAM_BATCH_APIS: Partial<Record<Protocol, UpstreamBatchApi>> = {
  chat: chatBatches,
  messages: messagesBatches,
};
