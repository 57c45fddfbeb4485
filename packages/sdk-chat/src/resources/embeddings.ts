/** `client.embeddings`: vectors from an embedding model of the gateway's catalog. */
import type { EmbeddingsRequest, EmbeddingsResponse } from "@turnpike/schema";
import { APIPromise, type APIClient, type RequestOptions } from "@turnpike/sdk-core";

/** A reply whose vectors are numbers (`encoding_format` float, or left out: the client decodes base64 itself). */
export type Embeddings = Omit<EmbeddingsResponse, "data"> & {
  data: { object: "embedding"; index: number; embedding: number[] }[];
};

/** The little-endian float32 values of a base64 vector. */
function decodeVector(text: string): number[] {
  const bin = atob(text);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const view = new DataView(bytes.buffer);
  const out: number[] = [];
  for (let i = 0; i + 4 <= bytes.length; i += 4) out.push(view.getFloat32(i, true));
  return out;
}

/**
 * `client.embeddings`.
 *
 * @example
 * ```ts
 * const { data } = await client.embeddings.create({ model: "beta-embedding-3-small", input: ["a cat", "a dog"] });
 * console.log(data[0]?.embedding.length); // 1536
 * ```
 */
export class EmbeddingsResource {
  readonly #client: APIClient;

  constructor(client: APIClient) {
    this.#client = client;
  }

  /**
   * Creates one vector per input. Without `encoding_format` the vectors travel as base64 (a
   * quarter of the JSON's size) and are decoded here, so `embedding` is always numbers; with
   * `encoding_format: "base64"` the strings are handed back as sent.
   *
   * @example
   * ```ts
   * const r = await client.embeddings.create({ model: "gamma-embedding-1", input: "query", dimensions: 256, task_type: "RETRIEVAL_QUERY" });
   * ```
   */
  create(
    body: EmbeddingsRequest & { encoding_format: "base64" },
    options?: RequestOptions,
  ): APIPromise<EmbeddingsResponse>;
  create(body: EmbeddingsRequest & { encoding_format?: "float" }, options?: RequestOptions): APIPromise<Embeddings>;
  create(body: EmbeddingsRequest, options?: RequestOptions): APIPromise<EmbeddingsResponse | Embeddings> {
    const asked = body.encoding_format;
    const sent: EmbeddingsRequest = asked === undefined ? { ...body, encoding_format: "base64" } : body;
    const promise = this.#client.request<EmbeddingsResponse>({
      ...options,
      method: "POST",
      path: "/embeddings",
      body: sent,
      model: body.model,
    });
    if (asked !== undefined) return promise;
    const decoded = promise.withResponse().then((r) => ({
      ...r,
      data: {
        ...r.data,
        data: r.data.data.map((d) => ({
          ...d,
          embedding: typeof d.embedding === "string" ? decodeVector(d.embedding) : d.embedding,
        })),
      },
    }));
    return new APIPromise<Embeddings>(decoded);
  }
}
