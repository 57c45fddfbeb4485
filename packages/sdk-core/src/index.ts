/**
 * `@turnpike/sdk-core`: what `@turnpike/messages` and `@turnpike/chat` share — the request
 * loop (timeouts, aborts, retries), the error hierarchy, the SSE stream and the stream-helper
 * base. Application code imports these names from either SDK, which re-exports them.
 *
 * @example
 * ```ts
 * import { APIClient, APIError, RateLimitError } from "@turnpike/sdk-core";
 * ```
 */
export {
  APIClient,
  type ClientOptions,
  type Fetch,
  type FinalRequestOptions,
  type RequestOptions,
} from "./api-client.js";
export { APIPromise, type APIResult } from "./api-promise.js";
export { DEFAULT_BASE_URL, gatewayOrigin, resolveCredentials } from "./base-url.js";
export { readEnv } from "./env.js";
export {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  ModelNotFoundError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  TurnpikeError,
  UnprocessableEntityError,
  retryAfterMsOf,
  type APIErrorBody,
  type RateLimitInfo,
} from "./errors.js";
export {
  CHAT_ERROR_BY_STATUS,
  MESSAGES_ERROR_STATUS_BY_TYPE,
  MESSAGES_ERROR_TYPE_BY_STATUS,
  STREAM_ERROR_STATUS,
  chatClientStatus,
  chatErrorType,
  messagesClientStatus,
  messagesErrorType,
  type ChatErrorKind,
} from "./error-types.js";
export { HEADER, RATE_LIMIT_HEADERS, mergeHeaders, requestIdOf, type HeadersLike } from "./headers.js";
export { MODEL_NOT_FOUND, makeAPIError, makeStreamError, type ErrorContext } from "./make-api-error.js";
export { Models, type ModelListParams } from "./models-resource.js";
export { PagePromise, type CursorPage } from "./page-promise.js";
export { DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, retryDelayMs, shouldRetry } from "./retry-policy.js";
export { Stream, parseEventJSON, type SSEEventDecoder, type StreamStep } from "./stream.js";
export { StreamHelper, type BaseStreamEvents, type EventMap } from "./stream-helper.js";
