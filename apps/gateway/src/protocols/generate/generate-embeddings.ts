import { invalid, isRecord } from "../../vocabulary/client-errors";
import { authHeaders, trimSlash, type EmbeddingsCall, isNumbers } from "../upstream-protocol";

/**
 * The generateContent protocol: `:embedContent` for one input, `:batchEmbedContents` for
 * several, each carrying the task type and output size. It takes text only, and reports no
 * token count (Turnpike counts the input itself).
 */
export const generateEmbeddings: EmbeddingsCall = {
  request({ entry, upstream }, req) {
    const texts = req.inputs.map((input, i) => {
      if (typeof input === "string") return input;
      throw invalid(
        `\`input${req.inputs.length > 1 ? `[${i}]` : ""}\` is token ids, but \`${entry.id}\` takes text only (its upstream's protocol has no token input).`,
        "input",
      );
    });
    const one = (text: string) => ({
      content: { parts: [{ text }] },
      ...(req.taskType !== undefined ? { taskType: req.taskType } : {}),
      ...(req.dimensions !== undefined ? { outputDimensionality: req.dimensions } : {}),
    });
    const model = `${trimSlash(upstream.baseURL)}/v1beta/models/${encodeURIComponent(entry.upstream_model)}`;
    const headers = {
      "content-type": "application/json",
      ...authHeaders(upstream.auth, upstream.apiKey),
      ...entry.upstream_headers,
    };
    if (texts.length === 1) return { url: `${model}:embedContent`, headers, body: JSON.stringify(one(texts[0]!)) };
    const requests = texts.map((t) => ({ model: `models/${entry.upstream_model}`, ...one(t) }));
    return { url: `${model}:batchEmbedContents`, headers, body: JSON.stringify({ requests }) };
  },
  read(json, inputs) {
    if (!isRecord(json)) return undefined;
    const list = isRecord(json.embedding)
      ? [json.embedding]
      : Array.isArray(json.embeddings)
        ? json.embeddings
        : undefined;
    if (!list || list.length !== inputs) return undefined;
    const vectors: number[][] = [];
    for (const e of list) {
      if (!isRecord(e) || !isNumbers(e.values)) return undefined;
      vectors.push(e.values);
    }
    return { vectors, inputTokens: undefined };
  },
};
