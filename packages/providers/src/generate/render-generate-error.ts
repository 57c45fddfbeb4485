/**
 * Errors in the generateContent format's envelope, `{"error":{"code","message","status"}}`: the
 * HTTP code and the status word its clients read (docs/protocols.md §6.5). The format has no 402
 * (a spent budget is RESOURCE_EXHAUSTED, a 429) and no 529 (overloaded is UNAVAILABLE, a 503).
 */
import type { GenerateErrorBody } from "@turnpike/schema";
import type { GatewayError } from "../errors.js";

/** The HTTP status a client of this format is given for a gateway error's status. */
export function generateErrorStatus(status: number): number {
  if (status === 402) return 429;
  if (status === 529) return 503;
  return status;
}

/** The format's status word of an HTTP status (google.rpc.Code names). */
export function generateStatusWord(status: number): string {
  switch (status) {
    case 400:
    case 413:
    case 422:
      return "INVALID_ARGUMENT";
    case 401:
      return "UNAUTHENTICATED";
    case 403:
      return "PERMISSION_DENIED";
    case 404:
      return "NOT_FOUND";
    case 405:
    case 501:
      return "UNIMPLEMENTED";
    case 408:
    case 504:
      return "DEADLINE_EXCEEDED";
    case 409:
      return "ABORTED";
    case 429:
      return "RESOURCE_EXHAUSTED";
    case 499:
      return "CANCELLED";
    case 502:
    case 503:
      return "UNAVAILABLE";
    default:
      return status >= 500 ? "INTERNAL" : status >= 400 ? "FAILED_PRECONDITION" : "UNKNOWN";
  }
}

/**
 * @example
 * ```ts
 * renderGenerateError(new GatewayError({ status: 404, type: "not_found_error", message: "no such model" }));
 * // { error: { code: 404, message: "no such model", status: "NOT_FOUND" } }
 * ```
 */
export function renderGenerateError(err: GatewayError): GenerateErrorBody {
  const code = generateErrorStatus(err.status);
  return { error: { code, message: err.message, status: generateStatusWord(code) } };
}
