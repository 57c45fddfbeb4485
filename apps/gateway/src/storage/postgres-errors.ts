import { GatewayError } from "@turnpike/providers";

/** Did the call fail because the server could not be reached (rather than because of the query)? */
export function isConnectionError(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code; // Bun.SQL errors carry a string code
  if (typeof code === "string" && /CONNECTION|ECONNREFUSED|ECONNRESET|TIMEOUT|CLOSED/i.test(code)) return true;
  return (
    e instanceof Error &&
    /connect|connection|closed|ECONNREFUSED|ECONNRESET|timed? ?out/i.test(e.message) &&
    !/syntax/i.test(e.message)
  );
}

/**
 * SQLSTATEs of a value PostgreSQL cannot keep: a NUL or a byte sequence that is not UTF-8
 * (22021), an escape with no text form (22P05), a value too large for an index (54000).
 */
const UNSTORABLE = new Set(["22021", "22P05", "54000"]);

/**
 * Did the store refuse the values themselves (so trying again cannot help), rather than fail to
 * answer? A value it cannot keep (the 400 {@link unavailable} makes of it), or any data exception
 * (SQLSTATE class 22) or integrity violation (class 23) the server reports.
 */
export function isRecordRefusal(e: unknown): boolean {
  if (isConnectionError(e)) return false;
  if (e instanceof GatewayError) return e.status === 400;
  const errno = (e as { errno?: unknown } | null)?.errno; // Bun.SQL server errors carry the SQLSTATE here
  return typeof errno === "string" && (UNSTORABLE.has(errno) || /^2[23]/.test(errno));
}

/**
 * A store call that could not reach PostgreSQL: a 503 the client may retry, naming no internals.
 * A value it refuses (ids, filters and names are checked before, this is the net under them): a 400.
 */
export function unavailable(e: unknown): never {
  if (isConnectionError(e)) {
    throw new GatewayError({
      status: 503,
      type: "api_error",
      message: "The gateway's store (PostgreSQL) is unreachable; try again shortly.",
    });
  }
  const errno = (e as { errno?: unknown } | null)?.errno; // Bun.SQL server errors carry the SQLSTATE here
  if (typeof errno === "string" && UNSTORABLE.has(errno)) {
    throw new GatewayError({
      status: 400,
      type: "invalid_request_error",
      message: "A value in this request cannot be stored or looked up (a NUL character, invalid UTF-16, or too long).",
    });
  }
  throw e;
}
