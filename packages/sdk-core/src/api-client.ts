/**
 * The request loop both SDKs share: builds the request, applies the per-attempt timeout and the
 * caller's `AbortSignal`, retries by the one policy (retry-policy.ts), and turns failures into
 * the typed errors. Plain `fetch` and web streams only, so it runs on Node ≥ 20, Bun, Deno and
 * browsers. Each SDK subclasses it to add its auth headers and its resources.
 */
import { APIPromise, apiResult, type APIResult } from "./api-promise.js";
import * as Errors from "./errors.js";
import { APIConnectionError, APITimeoutError, APIUserAbortError, TurnpikeError } from "./errors.js";
import { mergeHeaders, type HeadersLike } from "./headers.js";
import { makeAPIError } from "./make-api-error.js";
import { DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, retryDelayMs, shouldRetry } from "./retry-policy.js";
import { sleep } from "./sleep.js";
import { Stream, type SSEEventDecoder } from "./stream.js";

/** A `fetch`-compatible function (the global one, undici's, a test double, …). */
export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Options of both SDK clients. */
export interface ClientOptions {
  /** The gateway key (`sk-…`). Defaults to `TURNPIKE_API_KEY`. */
  apiKey?: string | undefined;
  /** The gateway origin, e.g. `http://localhost:8080`. Defaults to `TURNPIKE_BASE_URL`. */
  baseURL?: string | undefined;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number | undefined;
  /** Milliseconds before one attempt is abandoned (default 600 000). */
  timeout?: number | undefined;
  /** A custom `fetch`, e.g. for proxies or tests. Defaults to `globalThis.fetch`. */
  fetch?: Fetch | undefined;
  /** Headers sent with every request; a `null` value removes a default header. */
  defaultHeaders?: Record<string, string | null | undefined> | undefined;
  /** Query parameters added to every request. */
  defaultQuery?: Record<string, string | undefined> | undefined;
  /** Extra `RequestInit` fields for every request (e.g. `{ keepalive: true }`). */
  fetchOptions?: RequestInit | undefined;
}

/** Options of one call; each overrides the client's. */
export interface RequestOptions {
  /** Cancels the call (and its stream); the call rejects with `APIUserAbortError`. */
  signal?: AbortSignal | undefined;
  timeout?: number | undefined;
  maxRetries?: number | undefined;
  headers?: HeadersLike | undefined;
  query?: Record<string, string | number | boolean | undefined> | undefined;
  fetchOptions?: RequestInit | undefined;
}

/** What an SDK resource asks the loop to do. */
export interface FinalRequestOptions extends RequestOptions {
  method: "GET" | "POST" | "DELETE";
  path: string;
  /** Sent as JSON; a `FormData` is sent as multipart/form-data (a file upload). */
  body?: unknown;
  /** `text`: the reply is handed back as its text, not parsed as JSON (a file's content). */
  replyAs?: "json" | "text" | undefined;
  /** The model the request names: a 404 then becomes `ModelNotFoundError` for it. */
  model?: string | undefined;
}

/**
 * The base of both SDK clients: a subclass supplies its auth headers and its resources.
 *
 * @example
 * ```ts
 * class MyClient extends APIClient {
 *   protected authHeaders() {
 *     return { authorization: `Bearer ${this.apiKey}` };
 *   }
 * }
 * const health = await new MyClient({ apiKey: "sk-…", baseURL: "http://localhost:8080" })
 *   .request<{ status: string }>({ method: "GET", path: "/health" });
 * ```
 */
export abstract class APIClient {
  // The error classes as statics too, as on the official clients (`MessagesClient.RateLimitError`).
  static readonly TurnpikeError = Errors.TurnpikeError;
  static readonly APIError = Errors.APIError;
  static readonly APIConnectionError = Errors.APIConnectionError;
  static readonly APITimeoutError = Errors.APITimeoutError;
  static readonly APIUserAbortError = Errors.APIUserAbortError;
  static readonly BadRequestError = Errors.BadRequestError;
  static readonly AuthenticationError = Errors.AuthenticationError;
  static readonly PermissionDeniedError = Errors.PermissionDeniedError;
  static readonly NotFoundError = Errors.NotFoundError;
  static readonly ModelNotFoundError = Errors.ModelNotFoundError;
  static readonly ConflictError = Errors.ConflictError;
  static readonly UnprocessableEntityError = Errors.UnprocessableEntityError;
  static readonly RateLimitError = Errors.RateLimitError;
  static readonly InternalServerError = Errors.InternalServerError;

  readonly baseURL: string;
  readonly maxRetries: number;
  readonly timeout: number;
  protected readonly apiKey: string;
  readonly #fetch: Fetch;
  readonly #defaultHeaders: Record<string, string | null | undefined>;
  readonly #defaultQuery: Record<string, string | undefined>;
  readonly #fetchOptions: RequestInit | undefined;

  constructor(options: { apiKey: string; baseURL: string } & Omit<ClientOptions, "apiKey" | "baseURL">) {
    this.apiKey = options.apiKey;
    this.baseURL = options.baseURL.replace(/\/+$/, "");
    this.maxRetries = validateCount("maxRetries", options.maxRetries ?? DEFAULT_MAX_RETRIES);
    this.timeout = validateCount("timeout", options.timeout ?? DEFAULT_TIMEOUT_MS);
    const custom = options.fetch;
    // Resolved per call, not at construction: test tools (msw) patch `globalThis.fetch` later.
    this.#fetch = custom ?? ((input, init) => globalThis.fetch(input, init));
    this.#defaultHeaders = options.defaultHeaders ?? {};
    this.#defaultQuery = options.defaultQuery ?? {};
    this.#fetchOptions = options.fetchOptions;
  }

  /** Headers that authenticate and identify the format (`x-api-key`, `Authorization`, …). */
  protected abstract authHeaders(): Record<string, string>;

  /**
   * A JSON request; resolves to the parsed body. Public as an escape hatch for endpoints the
   * SDK does not wrap.
   *
   * @example
   * ```ts
   * const health = await client.request<{ status: string }>({ method: "GET", path: "/health" });
   * ```
   */
  request<T>(options: FinalRequestOptions): APIPromise<T> {
    return new APIPromise(
      // The caller names the reply's type (an escape hatch); the body is not checked, as in the official clients.
      this.send(options, false).then(async ({ response, body }) => apiResult(body as T, response)),
    );
  }

  /** A streamed request; resolves once the headers arrived, to a {@link Stream} of events. */
  requestStream<T>(options: FinalRequestOptions, decode: SSEEventDecoder<T>): APIPromise<Stream<T>> {
    return new APIPromise(
      this.send(options, true).then(
        ({ response, controller, release }): APIResult<Stream<T>> =>
          apiResult(Stream.fromSSEResponse(response, controller, decode, release), response),
      ),
    );
  }

  /** The full URL of `path` with the default and per-call query. */
  buildURL(path: string, query?: RequestOptions["query"]): string {
    const url = new URL(this.baseURL + (path.startsWith("/") ? path : `/${path}`));
    for (const [key, value] of Object.entries({ ...this.#defaultQuery, ...query })) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url.toString();
  }

  private async send(
    options: FinalRequestOptions,
    stream: boolean,
  ): Promise<{ response: Response; body: unknown; controller: AbortController; release: () => void }> {
    const maxRetries = validateCount("maxRetries", options.maxRetries ?? this.maxRetries);
    const timeout = validateCount("timeout", options.timeout ?? this.timeout);
    const url = this.buildURL(options.path, options.query);
    // A form sets its own content type, with its boundary.
    const form = typeof FormData !== "undefined" && options.body instanceof FormData ? options.body : undefined;
    const headers = mergeHeaders(
      { accept: stream ? "text/event-stream" : options.replyAs === "text" ? "*/*" : "application/json" },
      options.body !== undefined && !form ? { "content-type": "application/json" } : undefined,
      this.authHeaders(),
      this.#defaultHeaders,
      options.headers,
    );
    const body = form ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    const userSignal = options.signal;

    for (let attempt = 0; ; attempt++) {
      if (userSignal?.aborted) throw new APIUserAbortError();
      const controller = new AbortController();
      const onUserAbort = (): void => controller.abort(userSignal?.reason);
      userSignal?.addEventListener("abort", onUserAbort, { once: true });
      const release = (): void => userSignal?.removeEventListener("abort", onUserAbort);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeout);

      let failure: APIConnectionError;
      let response: Response | undefined;
      try {
        response = await this.#fetch(url, {
          ...this.#fetchOptions,
          ...options.fetchOptions,
          method: options.method,
          headers,
          ...(body !== undefined ? { body } : {}),
          signal: controller.signal,
        });
        if (!response.ok) {
          if (attempt < maxRetries && shouldRetry(response)) {
            response.body?.cancel().catch(() => undefined);
            clearTimeout(timer);
            release();
            await this.pause(attempt + 1, response.headers, userSignal);
            continue;
          }
          const text = await readText(response, controller.signal);
          throw makeAPIError(response.status, parseJSON(text) ?? text, undefined, response.headers, {
            model: options.model,
          });
        }
        if (stream) {
          // The timeout covers the wait for the headers; a stream may then run as long as it needs.
          clearTimeout(timer);
          return { response, body: undefined, controller, release };
        }
        const text = await readText(response, controller.signal);
        clearTimeout(timer);
        release();
        return {
          response,
          body: options.replyAs === "text" ? text : parseSuccessBody(text, response),
          controller,
          release,
        };
      } catch (err) {
        clearTimeout(timer);
        release();
        if (userSignal?.aborted) throw new APIUserAbortError();
        if (!isTransportError(err)) throw err;
        failure = timedOut ? new APITimeoutError() : new APIConnectionError({ cause: err });
      }
      if (attempt >= maxRetries) throw failure;
      await this.pause(attempt + 1, undefined, userSignal);
    }
  }

  private async pause(retry: number, headers: Headers | undefined, signal: AbortSignal | undefined): Promise<void> {
    try {
      await sleep(retryDelayMs(retry, headers), signal);
    } catch {
      throw new APIUserAbortError();
    }
  }
}

/** Errors the loop raised itself (typed API errors, bad JSON) pass through; the rest are transport. */
function isTransportError(err: unknown): boolean {
  return !(err instanceof TurnpikeError);
}

/**
 * The body as text, abandoned as soon as `signal` aborts: a custom `fetch` may not tie the
 * body to the signal the way the built-in one does, and a stalled body must still time out.
 */
function readText(response: Response, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener("abort", onAbort, { once: true });
    response
      .text()
      .then(resolve, reject)
      .finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function parseJSON(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function parseSuccessBody(text: string, response: Response): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new TurnpikeError(
      `Expected a JSON reply from ${response.url || "the server"} (status ${response.status}), got: ${text.slice(0, 200)}`,
      { cause },
    );
  }
}

function validateCount(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) {
    throw new TurnpikeError(`${name} must be a non-negative integer, got ${String(value)}`);
  }
  return value;
}
