/**
 * Turns a failed reply, or an error sent inside a stream, into the right {@link APIError}
 * subclass. The two tables below are the one place where statuses and error types map to
 * classes (docs/style.md rule 10).
 */
import {
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  ModelNotFoundError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
} from "./errors.js";
import { STREAM_ERROR_STATUS } from "./error-types.js";

type APIErrorClass = new (
  status: number | undefined,
  body: unknown,
  message: string | undefined,
  headers: Headers | undefined,
) => APIError;

/** Status → class, as in both official clients (docs/protocols.md §2.7). ≥ 500 is handled below. */
const STATUS_CLASS: Readonly<Record<number, APIErrorClass>> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

/** The error code both formats use for an unknown model or one the key may not use. */
export const MODEL_NOT_FOUND = "model_not_found";

/** Context the request loop knows and the body may not say. */
export interface ErrorContext {
  /** The model the request named; a 404 on a model-scoped request means that model is unknown. */
  model?: string | undefined;
}

/**
 * The error for an HTTP error reply.
 *
 * @example
 * ```ts
 * const err = makeAPIError(res.status, await res.json(), undefined, res.headers, { model: "beta-5" });
 * ```
 */
export function makeAPIError(
  status: number,
  body: unknown,
  message: string | undefined,
  headers: Headers,
  context: ErrorContext = {},
): APIError {
  if (status === 404 && (context.model !== undefined || saysModelNotFound(body))) {
    return new ModelNotFoundError(status, body, message, headers, { model: context.model });
  }
  const cls = STATUS_CLASS[status] ?? (status >= 500 ? InternalServerError : APIError);
  return new cls(status, body, message, headers);
}

/**
 * The error for an in-band stream error: messages `event: error` with
 * `{"type":"error","error":{…}}`, or chat `data: {"error":{…}}`.
 *
 * @example
 * ```ts
 * makeStreamError({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, headers).status; // 529
 * ```
 */
export function makeStreamError(body: unknown, headers: Headers, context: ErrorContext = {}): APIError {
  const inner = errorObject(body);
  const code = typeof inner?.code === "string" ? inner.code : undefined;
  const type = typeof inner?.type === "string" ? inner.type : undefined;
  const status =
    (code !== undefined ? STREAM_ERROR_STATUS[code] : undefined) ??
    (type !== undefined ? STREAM_ERROR_STATUS[type] : undefined);
  if (status === undefined) return new APIError(undefined, body, "Error in stream", headers);
  return makeAPIError(status, body, undefined, headers, status === 404 ? context : {});
}

function saysModelNotFound(body: unknown): boolean {
  const inner = errorObject(body);
  return inner?.code === MODEL_NOT_FOUND || inner?.type === MODEL_NOT_FOUND;
}

function errorObject(body: unknown): { type?: unknown; code?: unknown } | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const inner = "error" in body ? body.error : undefined;
  // Read-only probe of two optional fields of an unknown JSON object.
  return typeof inner === "object" && inner !== null ? (inner as { type?: unknown; code?: unknown }) : undefined;
}
