import type { Protocol } from "@turnpike/schema";
import { authHeaders, trimSlash, type UpstreamRequest } from "../protocols/upstream-protocol";
import type { Target } from "../vocabulary/target";
import { invalid, isRecord } from "../vocabulary/client-errors";
import type { EmbeddingsRequest } from "./embeddings-request";

/** What an upstream answered, in Turnpike's terms: one vector per input, in input order. */
export interface EmbeddingsReply {
  vectors: number[][];
  /** The input tokens the upstream reported; undefined when its protocol reports none. */
  inputTokens: number | undefined;
}

/** The embeddings call of one upstream protocol: the request to send, and how to read the reply. */
export interface EmbeddingsProtocol {
  /** Throws a 400 for an input the protocol cannot take. */
  request(target: Target, req: EmbeddingsRequest): UpstreamRequest;
  /** The reply's vectors, or undefined when the reply is not in the protocol's shape. */
  read(json: unknown, inputs: number): EmbeddingsReply | undefined;
}

const numbers = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => typeof x === "number");

/** The chat-completions protocol's `POST {base}/embeddings`: the client's own shape, vectors asked as floats. */
const chatEmbeddings: EmbeddingsProtocol = {
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
      if (!isRecord(d) || !numbers(d.embedding) || typeof d.index !== "number") return undefined;
      vectors[d.index] = d.embedding;
    }
    if (vectors.length !== inputs || vectors.some((v) => v === undefined)) return undefined;
    const usage =
      isRecord(json.usage) && typeof json.usage.prompt_tokens === "number" ? json.usage.prompt_tokens : undefined;
    return { vectors, inputTokens: usage };
  },
};

/**
 * The generateContent protocol: `:embedContent` for one input, `:batchEmbedContents` for
 * several, each carrying the task type and output size. It takes text only, and reports no
 * token count (Turnpike counts the input itself).
 */
const generateEmbeddings: EmbeddingsProtocol = {
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
      if (!isRecord(e) || !numbers(e.values)) return undefined;
      vectors.push(e.values);
    }
    return { vectors, inputTokens: undefined };
  },
};

/** The embeddings call of each upstream protocol; the messages and Responses protocols have none. */
export const EMBEDDINGS_PROTOCOLS: Record<Protocol, EmbeddingsProtocol | undefined> = {
  chat: chatEmbeddings,
  generate: generateEmbeddings,
  messages: undefined,
  responses: undefined,
};
