import { isRecord } from "../../vocabulary/client-errors";
import { authHeaders, trimSlash } from "../upstream-protocol";
import { call, idOf, json, jsonRows, multipart, type UpstreamBatchApi, type UpstreamOutcome } from "../vendor-batch";

/** The chat family's batch API, under a base ending in `/v1`. */
export const chatBatches: UpstreamBatchApi = {
  endpoint(path) {
    if (path.endsWith("/chat/completions")) return "/v1/chat/completions";
    if (path.endsWith("/embeddings")) return "/v1/embeddings";
    return undefined;
  },
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
