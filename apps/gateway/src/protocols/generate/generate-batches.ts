import type { Upstream } from "../../vocabulary/target";
import { isRecord } from "../../vocabulary/client-errors";
import { authHeaders, trimSlash } from "../upstream-protocol";
import {
  call,
  json,
  streamedBody,
  UpstreamBatchError,
  type UpstreamBatchApi,
  type UpstreamLine,
  type UpstreamOutcome,
} from "../vendor-batch";

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
export const generateBatches: UpstreamBatchApi = {
  // One batch per model: the endpoint is the model's own path.
  endpoint: (path) => (path.endsWith(":generateContent") ? path.slice(path.indexOf("/v1beta/models/")) : undefined),
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
