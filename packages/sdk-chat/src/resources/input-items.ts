/** `client.responses.inputItems`: the input items of a stored response. */
import type { ResponsesInputItemList, ResponsesListedInputItem } from "@turnpike/schema";
import { PagePromise, type APIClient, type APIPromise, type RequestOptions } from "@turnpike/sdk-core";
import type { InputItemListParams } from "../responses-types.js";

/**
 * `client.responses.inputItems`.
 *
 * @example
 * ```ts
 * for await (const item of client.responses.inputItems.list(response.id, { order: "asc" })) console.log(item.id);
 * ```
 */
export class InputItems {
  readonly #client: APIClient;

  constructor(client: APIClient) {
    this.#client = client;
  }

  /**
   * The items the stored response was made from — its own input after the conversation it
   * continued — newest first unless `order: "asc"`. Await it for one page, or iterate it for
   * every item across pages.
   *
   * @example
   * ```ts
   * const { data } = await client.responses.inputItems.list(response.id, { order: "asc" });
   * console.log(data.map((item) => item.id));
   * ```
   */
  list(
    id: string,
    params: InputItemListParams = {},
    options?: RequestOptions,
  ): PagePromise<ResponsesListedInputItem, ResponsesInputItemList> {
    const get = (query: InputItemListParams): APIPromise<ResponsesInputItemList> =>
      this.#client.request<ResponsesInputItemList>({
        ...options,
        method: "GET",
        path: `/responses/${encodeURIComponent(id)}/input_items`,
        query: { ...options?.query, ...query },
      });
    return new PagePromise<ResponsesListedInputItem, ResponsesInputItemList>(get(params).withResponse(), (after) =>
      get({ ...params, after }),
    );
  }
}
