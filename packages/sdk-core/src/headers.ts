/**
 * The header names the SDKs read and write, in one table (docs/style.md rule 10), plus the small
 * helpers that read them. Plain `Headers`: no runtime-specific APIs.
 */

/**
 * Header names used by the request loop and the errors it raises.
 *
 * @example
 * ```ts
 * response.headers.get(HEADER.requestId);
 * ```
 */
export const HEADER = {
  /** Gateway request id; on every response (site/guide/getting-started.md "Calling it"). */
  requestId: "x-request-id",
  /** The same id under the messages format's own name (docs/protocols.md §1.9). */
  requestIdMessages: "request-id",
  /** Non-standard, honoured by both official clients: the server says whether to retry. */
  shouldRetry: "x-should-retry",
  /** Non-standard retry hint in milliseconds; wins over `retry-after`. */
  retryAfterMs: "retry-after-ms",
  /** RFC 9110 §10.2.3: delay in seconds, or an HTTP date. */
  retryAfter: "retry-after",
} as const;

/**
 * Rate-limit headers of each format, by field of `RateLimitInfo`: the chat completions format's
 * `x-ratelimit-*` (reset as a duration, docs/protocols.md §2.8) and the messages format's
 * `anthropic-ratelimit-*` (reset as RFC 3339, §1.9), which the gateway sends on messages routes.
 *
 * @example
 * ```ts
 * response.headers.get(RATE_LIMIT_HEADERS.remainingRequests[0]); // "59"
 * ```
 */
export const RATE_LIMIT_HEADERS = {
  limitRequests: ["x-ratelimit-limit-requests", "anthropic-ratelimit-requests-limit"],
  remainingRequests: ["x-ratelimit-remaining-requests", "anthropic-ratelimit-requests-remaining"],
  resetRequests: ["x-ratelimit-reset-requests", "anthropic-ratelimit-requests-reset"],
  limitTokens: ["x-ratelimit-limit-tokens", "anthropic-ratelimit-tokens-limit"],
  remainingTokens: ["x-ratelimit-remaining-tokens", "anthropic-ratelimit-tokens-remaining"],
  resetTokens: ["x-ratelimit-reset-tokens", "anthropic-ratelimit-tokens-reset"],
} as const;

/** Headers as callers may give them: a `Headers`, pairs, or a record whose `null` removes a default. */
export type HeadersLike =
  | Headers
  | ReadonlyArray<readonly [string, string]>
  | Record<string, string | null | undefined>;

/**
 * Merges header sets left to right; a later value replaces an earlier one, and a `null` or
 * `undefined` value in a record removes the header (so `defaultHeaders: { "x-api-key": null }`
 * drops a header the client would otherwise send).
 */
export function mergeHeaders(...sets: Array<HeadersLike | undefined>): Headers {
  const out = new Headers();
  for (const set of sets) {
    if (set === undefined) continue;
    if (set instanceof Headers) {
      set.forEach((value, name) => out.set(name, value));
    } else if (Array.isArray(set)) {
      // `Array.isArray` does not narrow to a ReadonlyArray (TypeScript #17002): this is the union's pairs member.
      for (const [name, value] of set as ReadonlyArray<readonly [string, string]>) out.set(name, value);
    } else {
      // Not Headers, not an array: the union's record member (the same TypeScript gap as above).
      for (const [name, value] of Object.entries(set as Record<string, string | null | undefined>)) {
        if (value === null || value === undefined) out.delete(name);
        else out.set(name, value);
      }
    }
  }
  return out;
}

/**
 * The request id of a response: `x-request-id`, else the messages format's `request-id`.
 *
 * @example
 * ```ts
 * requestIdOf(response.headers); // "req_01…"
 * ```
 */
export function requestIdOf(headers: Headers | undefined): string | undefined {
  return headers?.get(HEADER.requestId) ?? headers?.get(HEADER.requestIdMessages) ?? undefined;
}
