import { isRecord } from "../../vocabulary/client-errors";
import { authHeaders, trimSlash, type EmbeddingsCall, isNumbers } from "../upstream-protocol";

/** The chat-completions protocol's `POST {base}/embeddings`: the client's own shape, vectors asked as floats. */
export const chatEmbeddings: EmbeddingsCall = {
  request({ entry, upstream }, req) {
    const body = {
      model: entry.upstream_model,
      input: req.inputs,
      // Turnpike encodes base64 itself when the client asks: floats are what it reads.
      encoding_format: "float",
      ...(req.dimensions !== undefined ? { dimensions: req.dimensions } : {}),
      ...(req.user !== undefined ? { user: req.user } : {}),
    };
    const headers = {
      "content-type": "application/json",
      ...authHeaders(upstream.auth, upstream.apiKey),
      ...entry.upstream_headers,
    };
    return { url: `${trimSlash(upstream.baseURL)}/embeddings`, headers, body: JSON.stringify(body) };
  },
  read(json, inputs) {
    if (!isRecord(json) || !Array.isArray(json.data)) return undefined;
    const vectors: number[][] = [];
    for (const d of json.data) {
      if (!isRecord(d) || !isNumbers(d.embedding) || typeof d.index !== "number") return undefined;
      vectors[d.index] = d.embedding;
    }
    if (vectors.length !== inputs || vectors.some((v) => v === undefined)) return undefined;
    const usage =
      isRecord(json.usage) && typeof json.usage.prompt_tokens === "number" ? json.usage.prompt_tokens : undefined;
    return { vectors, inputTokens: usage };
  },
};
