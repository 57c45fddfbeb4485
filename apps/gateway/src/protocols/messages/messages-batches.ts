import type { Upstream } from "../../vocabulary/target";
import { isRecord } from "../../vocabulary/client-errors";
import { authHeaders, trimSlash } from "../upstream-protocol";
import {
  call,
  idOf,
  json,
  jsonRows,
  streamedBody,
  type UpstreamBatchApi,
  type UpstreamLine,
  type UpstreamOutcome,
} from "../vendor-batch";

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
export const messagesBatches: UpstreamBatchApi = {
  endpoint: (path) => (path.endsWith("/v1/messages") ? "/v1/messages" : undefined),
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
