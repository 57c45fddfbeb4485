/**
 * A list reply that can be awaited as one page or iterated item by item across pages, as in
 * the official clients (`for await (const model of client.models.list())`). Paging follows the
 * messages format's cursor: `has_more` + `last_id` → `after_id` (docs/protocols.md §1.11).
 */
import { APIPromise, type APIResult } from "./api-promise.js";

/** A page of a cursor-paged list. */
export interface CursorPage<TItem> {
  data: TItem[];
  has_more?: boolean;
  last_id?: string | null;
}

/**
 * @example
 * ```ts
 * const page = await client.models.list();          // one page: { data, has_more, … }
 * for await (const model of client.models.list()) { // every item, page after page
 *   console.log(model.id);
 * }
 * ```
 */
export class PagePromise<TItem, TPage extends CursorPage<TItem>>
  extends APIPromise<TPage>
  implements AsyncIterable<TItem>
{
  readonly #nextPage: (afterId: string) => APIPromise<TPage>;

  constructor(result: Promise<APIResult<TPage>>, nextPage: (afterId: string) => APIPromise<TPage>) {
    super(result);
    this.#nextPage = nextPage;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<TItem> {
    let page: TPage = await this;
    while (true) {
      yield* page.data;
      if (!page.has_more || !page.last_id) return;
      page = await this.#nextPage(page.last_id);
    }
  }
}
