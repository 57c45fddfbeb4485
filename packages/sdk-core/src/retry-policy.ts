/**
 * The retry policy of both official client libraries (docs/style.md "Client SDKs"; docs/protocols.md §1.9):
 * obey `x-should-retry` when present, else retry 408, 409, 429 and ≥ 500; wait what
 * `retry-after-ms` / `retry-after` ask (when under a minute), else back off exponentially from
 * 0.5 s to at most 8 s with up to 25 % jitter. Connection errors and timeouts are retried too.
 */
import { HEADER } from "./headers.js";
import { retryAfterMsOf } from "./errors.js";

/** Retries after the first attempt, unless the client or the call says otherwise. */
export const DEFAULT_MAX_RETRIES = 2;
/** Ten minutes, as in both official clients: long generations are slow. */
export const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;

const INITIAL_DELAY_MS = 500;
const MAX_DELAY_MS = 8000;
/** A server hint longer than this is ignored in favour of the backoff (it would stall the caller). */
const MAX_HINT_MS = 60_000;

/**
 * Whether a failed response should be retried.
 *
 * @example
 * ```ts
 * shouldRetry(new Response(null, { status: 503 })); // true
 * ```
 */
export function shouldRetry(response: Response): boolean {
  const header = response.headers.get(HEADER.shouldRetry);
  if (header === "true") return true;
  if (header === "false") return false;
  const status = response.status;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Milliseconds to wait before retry number `retry` (1-based).
 * @param random injectable for tests; `Math.random` by default.
 *
 * @example
 * ```ts
 * retryDelayMs(3); // between 1500 and 2000
 * retryDelayMs(1, new Headers({ "retry-after-ms": "250" })); // 250
 * ```
 */
export function retryDelayMs(retry: number, headers?: Headers, random: () => number = Math.random): number {
  const hint = headers ? retryAfterMsOf(headers) : undefined;
  if (hint !== undefined && hint <= MAX_HINT_MS) return hint;
  const base = Math.min(INITIAL_DELAY_MS * 2 ** (retry - 1), MAX_DELAY_MS);
  return base * (1 - random() * 0.25);
}
