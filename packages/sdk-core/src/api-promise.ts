/**
 * The promise every SDK method returns: await it for the parsed body, or call
 * `.withResponse()` for the body together with the raw `Response` (headers, status) and the
 * request id, as in the official client libraries.
 */
import { requestIdOf } from "./headers.js";

/** What a finished request produced. */
export interface APIResult<T> {
  /** The parsed body (or, for streams, the stream object). */
  data: T;
  /** The HTTP response; for JSON replies its body has already been read. */
  response: Response;
  /** The gateway's request id, from `x-request-id` (or `request-id`). */
  requestId: string | undefined;
}

/**
 * A `Promise` of the parsed reply with one extra method.
 *
 * @example
 * ```ts
 * const { data: message, response, requestId } = await client.messages
 *   .create({ model: "alpha-haiku-4-5", max_tokens: 64, messages: [{ role: "user", content: "Hi" }] })
 *   .withResponse();
 * console.log(response.headers.get("x-turnpike-upstream"), requestId);
 * ```
 */
export class APIPromise<T> extends Promise<T> {
  readonly #result: Promise<APIResult<T>>;

  constructor(result: Promise<APIResult<T>>) {
    // Settles with the body; the base promise's own state is what `await`, test runners and
    // `Promise.all` observe, so it must mirror `result` rather than be a placeholder.
    super((resolve, reject) => {
      result.then((r) => resolve(r.data), reject);
    });
    this.#result = result;
    // Mark both as handled so that a caller who awaits later (or never) does not trigger
    // Node's unhandled-rejection crash; every consumer still sees the rejection.
    result.catch(() => undefined);
    Promise.prototype.catch.call(this, () => undefined);
  }

  // Derived promises (from `then`, `catch`, `finally`) are plain promises: the runtime would
  // otherwise call this constructor with an executor it does not expect.
  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  /** The parsed body plus the raw response and request id. */
  withResponse(): Promise<APIResult<T>> {
    return this.#result;
  }
}

/** Builds an {@link APIResult}. */
export function apiResult<T>(data: T, response: Response): APIResult<T> {
  return { data, response, requestId: requestIdOf(response.headers) };
}
