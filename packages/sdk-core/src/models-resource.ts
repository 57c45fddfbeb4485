/**
 * `client.models`, the same in both SDKs: the models the key may call, one model, and a
 * start-up check that fails early with a message naming what is available.
 */
import type { Model, ModelList } from "@turnpike/schema";
import type { APIClient, RequestOptions } from "./api-client.js";
import type { APIPromise } from "./api-promise.js";
import { ModelNotFoundError } from "./errors.js";
import { PagePromise } from "./page-promise.js";

/** Query of `models.list`. The gateway returns every model on one page. */
export interface ModelListParams {
  limit?: number;
  after_id?: string;
  before_id?: string;
}

/**
 * `client.models` of both SDKs.
 *
 * @example
 * ```ts
 * const ids = (await client.models.list()).data.map((m) => m.id);
 * ```
 */
export class Models {
  readonly #client: APIClient;
  readonly #path: string;

  /** @param path the models path under the client's base URL (`/v1/models` or `/models`). */
  constructor(client: APIClient, path: string) {
    this.#client = client;
    this.#path = path;
  }

  /**
   * The models this key may call, newest first.
   *
   * @example
   * ```ts
   * for await (const model of client.models.list()) console.log(model.id, model.display_name);
   * const { data } = await client.models.list();
   * ```
   */
  list(params: ModelListParams = {}, options?: RequestOptions): PagePromise<Model, ModelList> {
    const get = (query: ModelListParams): APIPromise<ModelList> =>
      this.#client.request<ModelList>({
        ...options,
        method: "GET",
        path: this.#path,
        query: { ...options?.query, ...query },
      });
    return new PagePromise<Model, ModelList>(get(params).withResponse(), (afterId) =>
      get({ ...params, after_id: afterId, before_id: undefined }),
    );
  }

  /**
   * One model by id. An unknown id (or one the key may not use) rejects with
   * `ModelNotFoundError`.
   *
   * @example
   * ```ts
   * const model = await client.models.retrieve("alpha-sonnet-4-6");
   * console.log(model.context_window);
   * ```
   */
  retrieve(id: string, options?: RequestOptions): APIPromise<Model> {
    return this.#client.request<Model>({
      ...options,
      method: "GET",
      path: `${this.#path}/${encodeURIComponent(id)}`,
      model: id,
    });
  }

  /**
   * Checks at start-up that this key may call `id`; resolves to the model, or rejects with a
   * `ModelNotFoundError` whose message names the id and the models the key can use.
   *
   * @example
   * ```ts
   * await client.models.validate(process.env.MODEL ?? "alpha-haiku-4-5");
   * // ModelNotFoundError: Model "alpha-haiku-4" is not available to this API key.
   * //   Models this key can use: alpha-haiku-4-5, alpha-sonnet-4-6.
   * ```
   */
  async validate(id: string, options?: RequestOptions): Promise<Model> {
    const first = this.list({}, options);
    const { response } = await first.withResponse();
    const models: Model[] = [];
    for await (const model of first) {
      if (model.id === id) return model;
      models.push(model);
    }
    const available = models.map((m) => m.id);
    const list =
      available.length > 0 ? `Models this key can use: ${available.join(", ")}.` : "This key can use no models.";
    throw new ModelNotFoundError(
      undefined,
      undefined,
      `Model "${id}" is not available to this API key. ${list}`,
      response.headers,
      {
        model: id,
        availableModels: available,
      },
    );
  }
}
