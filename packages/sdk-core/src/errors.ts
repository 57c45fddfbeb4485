/**
 * One error hierarchy for both SDKs, keyed by HTTP status like the official client libraries
 * (`openai-node`, `anthropic-sdk-typescript`): catch `APIError` for everything the server said,
 * or a subclass for one status. Every error carries the request id and the parsed body.
 *
 * @example
 * ```ts
 * import { RateLimitError, APIError } from "@turnpike/messages";
 * try {
 *   await client.messages.create({ model: "alpha-haiku-4-5", max_tokens: 64, messages });
 * } catch (err) {
 *   if (err instanceof RateLimitError) console.log("retry in", err.retryAfterMs, "ms");
 *   else if (err instanceof APIError) console.log(err.status, err.type, err.requestId);
 *   else throw err;
 * }
 * ```
 */
import { HEADER, RATE_LIMIT_HEADERS, requestIdOf } from "./headers.js";

/**
 * The error envelope both formats share: `{ error: { type, message } }`. The messages format
 * adds `type: "error"` and `request_id`; the chat completions format adds `param` and `code`
 * (docs/protocols.md §1.8, §2.7).
 */
export interface APIErrorBody {
  type?: string;
  error: {
    type?: string;
    message?: string;
    code?: string | null;
    param?: string | null;
    [key: string]: unknown;
  };
  request_id?: string | null;
}

/** The base of every error this SDK throws (also for bad options or unparsable replies). */
export class TurnpikeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    // `new.target` keeps subclass names in stack traces and `String(err)`.
    this.name = new.target.name;
  }
}

/**
 * An error the server returned (or, for the connection subclasses, no reply at all).
 * `status` is the HTTP status; for an error sent inside a stream after a 200 it is the status
 * that the error's `type` stands for (e.g. `overloaded_error` → 529).
 *
 * @example
 * ```ts
 * catch (err) {
 *   if (err instanceof APIError) console.error(err.status, err.type, err.code, err.requestId, err.error);
 * }
 * ```
 */
export class APIError extends TurnpikeError {
  /** HTTP status; `undefined` when no response arrived. */
  readonly status: number | undefined;
  /** Response headers; `undefined` when no response arrived. */
  readonly headers: Headers | undefined;
  /** The parsed error body when it has the `{ error: { … } }` envelope, else `undefined`. */
  readonly error: APIErrorBody | undefined;
  /** The gateway's request id (`x-request-id` / `request-id`), for support and logs. */
  readonly requestId: string | undefined;
  /** `error.type` of the body, e.g. `invalid_request_error`. */
  readonly type: string | undefined;
  /** `error.code` of the body (chat completions format), e.g. `model_not_found`. */
  readonly code: string | undefined;
  /** `error.param` of the body (chat completions format): the offending field. */
  readonly param: string | undefined;

  constructor(status: number | undefined, body: unknown, message: string | undefined, headers: Headers | undefined) {
    const parsed = asErrorBody(body);
    super(makeMessage(status, parsed, body, message));
    this.status = status;
    this.headers = headers;
    this.error = parsed;
    this.requestId = requestIdOf(headers) ?? parsed?.request_id ?? undefined;
    this.type = stringOrUndefined(parsed?.error.type);
    this.code = stringOrUndefined(parsed?.error.code);
    this.param = stringOrUndefined(parsed?.error.param);
  }

  /** Same as {@link requestId}; the spelling the official clients use. */
  get requestID(): string | undefined {
    return this.requestId;
  }
}

/** 400: the request was malformed or broke a rule of its format. */
export class BadRequestError extends APIError {}
/** 401: the API key is missing, unknown or revoked. */
export class AuthenticationError extends APIError {}
/** 403: the key may not do this. */
export class PermissionDeniedError extends APIError {}
/** 404: the resource does not exist. */
export class NotFoundError extends APIError {}
/** 409: a conflict; retried by default. */
export class ConflictError extends APIError {}
/** 422: the request was understood but cannot be processed. */
export class UnprocessableEntityError extends APIError {}
/** 5xx (and in-stream `api_error`, `overloaded_error`, …): the server failed. */
export class InternalServerError extends APIError {}

/**
 * 404 `model_not_found`: the model id is unknown, or the key may not use it. Also thrown by
 * `client.models.validate(id)`, which fills {@link availableModels}.
 *
 * @example
 * ```ts
 * catch (err) {
 *   if (err instanceof ModelNotFoundError) console.error(`no model ${err.model}; try one of ${err.availableModels}`);
 * }
 * ```
 */
export class ModelNotFoundError extends NotFoundError {
  /** The model id that was asked for, when known. */
  readonly model: string | undefined;
  /** The model ids this key can use, when known (filled by `models.validate`). */
  readonly availableModels: string[] | undefined;

  constructor(
    status: number | undefined,
    body: unknown,
    message: string | undefined,
    headers: Headers | undefined,
    details: { model?: string | undefined; availableModels?: string[] | undefined } = {},
  ) {
    super(status, body, message, headers);
    this.model = details.model;
    this.availableModels = details.availableModels;
  }
}

/** Rate-limit state from the response headers; fields are absent when the header was. */
export interface RateLimitInfo {
  limitRequests?: number;
  remainingRequests?: number;
  /** As sent: a duration such as `"12ms"` (chat routes) or an RFC 3339 time (messages routes). */
  resetRequests?: string;
  limitTokens?: number;
  remainingTokens?: number;
  /** As sent, like {@link resetRequests}. */
  resetTokens?: string;
}

/**
 * 429: too many requests or tokens; carries the server's retry hint and limit headers.
 *
 * @example
 * ```ts
 * catch (err) {
 *   if (err instanceof RateLimitError) await sleep(err.retryAfterMs ?? 1000);
 * }
 * ```
 */
export class RateLimitError extends APIError {
  /** How long the server asked to wait (`retry-after-ms`, else `retry-after`), in ms. */
  readonly retryAfterMs: number | undefined;
  /** The key's limits and what remains of them. */
  readonly rateLimit: RateLimitInfo;

  constructor(status: number | undefined, body: unknown, message: string | undefined, headers: Headers | undefined) {
    super(status, body, message, headers);
    this.retryAfterMs = headers ? retryAfterMsOf(headers) : undefined;
    this.rateLimit = headers ? rateLimitOf(headers) : {};
  }
}

/** No response: DNS, refused connection, reset, or a fetch that threw. Retried by default. */
export class APIConnectionError extends APIError {
  constructor(options: { message?: string; cause?: unknown } = {}) {
    super(undefined, undefined, options.message ?? "Connection error.", undefined);
    if (options.cause !== undefined) this.cause = options.cause;
  }
}

/** The `timeout` option elapsed before the reply arrived (after all retries). */
export class APITimeoutError extends APIConnectionError {
  constructor(options: { message?: string } = {}) {
    super({ message: options.message ?? "Request timed out." });
  }
}

/** The caller's `AbortSignal` (or `stream.abort()`) cancelled the request. */
export class APIUserAbortError extends APIError {
  constructor(options: { message?: string } = {}) {
    super(undefined, undefined, options.message ?? "Request was aborted.", undefined);
  }
}

/**
 * Milliseconds the server asked to wait: `retry-after-ms`, else `retry-after` as seconds or as
 * an HTTP date. `undefined` when absent, unparsable or not positive.
 *
 * @example
 * ```ts
 * retryAfterMsOf(new Headers({ "retry-after": "2" })); // 2000
 * ```
 */
export function retryAfterMsOf(headers: Headers): number | undefined {
  const ms = headers.get(HEADER.retryAfterMs);
  if (ms !== null) {
    const value = Number.parseFloat(ms);
    if (Number.isFinite(value) && value > 0) return value;
  }
  const after = headers.get(HEADER.retryAfter);
  if (after !== null) {
    const seconds = Number.parseFloat(after);
    if (/^\s*\d+(\.\d+)?\s*$/.test(after) && Number.isFinite(seconds)) return seconds > 0 ? seconds * 1000 : undefined;
    const date = Date.parse(after);
    if (Number.isFinite(date) && date > Date.now()) return date - Date.now();
  }
  return undefined;
}

function rateLimitOf(headers: Headers): RateLimitInfo {
  const info: RateLimitInfo = {};
  const first = (names: readonly string[]): string | undefined => {
    for (const name of names) {
      const value = headers.get(name);
      if (value !== null) return value;
    }
    return undefined;
  };
  for (const field of ["limitRequests", "remainingRequests", "limitTokens", "remainingTokens"] as const) {
    const value = Number(first(RATE_LIMIT_HEADERS[field]) ?? Number.NaN);
    if (Number.isFinite(value)) info[field] = value;
  }
  for (const field of ["resetRequests", "resetTokens"] as const) {
    const value = first(RATE_LIMIT_HEADERS[field]);
    if (value !== undefined) info[field] = value;
  }
  return info;
}

function asErrorBody(body: unknown): APIErrorBody | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const inner = "error" in body ? body.error : undefined;
  if (typeof inner !== "object" || inner === null) return undefined;
  // Checked just above: an object whose `error` is an object is the shared envelope.
  return body as APIErrorBody;
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function makeMessage(
  status: number | undefined,
  parsed: APIErrorBody | undefined,
  body: unknown,
  message: string | undefined,
): string {
  const fromBody =
    typeof parsed?.error.message === "string"
      ? parsed.error.message
      : body !== undefined && body !== null && body !== ""
        ? typeof body === "string"
          ? body
          : JSON.stringify(body)
        : undefined;
  const text = fromBody ?? message;
  if (status !== undefined && text) return `${status} ${text}`;
  if (status !== undefined) return `${status} status code (no body)`;
  return text ?? "(no status code or body)";
}
