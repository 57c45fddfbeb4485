import { HEADER } from "./headers";

/**
 * A fresh request id, `req_` + 32 hex digits. Time-ordered (UUID v7), so the ledger's primary
 * key grows at its end instead of landing at random places in the B-tree.
 */
export function newRequestId(): string {
  // The UUID's five groups without their dashes (by slices: about half the time of a replaceAll).
  const u = Bun.randomUUIDv7();
  return "req_" + u.slice(0, 8) + u.slice(9, 13) + u.slice(14, 18) + u.slice(19, 23) + u.slice(24);
}

/**
 * The inbound `x-request-id` Turnpike keeps: 1 to 128 characters, each a letter (A–Z, a–z), a
 * digit or one of `-`, `_`, `.`, `:` (UUIDs, ULIDs, hex trace ids, `req_…`). Anything else — empty,
 * longer, a space, a control or non-ASCII character — is replaced by Turnpike's own id.
 */
export const KEPT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's request id when it is one Turnpike keeps. */
export function clientRequestId(request: Request): string | undefined {
  const v = request.headers.get("x-request-id");
  return v !== null && KEPT_REQUEST_ID.test(v) ? v : undefined;
}

/**
 * A reply to a request that came with a well-formed `x-request-id`: its id headers (`x-request-id`,
 * and `request-id` where the format sends one) say the caller's id, and Turnpike's own — the one
 * the ledger, the dashboard and the log lines' `request_id` know — moves to
 * `x-turnpike-request-id`. Turnpike's id stays the ledger's key: a caller's id may be reused, a
 * ledger key may not.
 */
export function keepRequestId(kept: string, res: Response | undefined): Response | undefined {
  if (!res) return res;
  const own = res.headers.get(HEADER.requestId);
  if (own === null || own === kept) return res;
  let headers = res.headers;
  try {
    headers.set(HEADER.requestId, kept);
  } catch {
    // An immutable set of headers (a fetched response's): the reply is made anew around the same body.
    headers = new Headers(res.headers);
    res = new Response(res.body, { status: res.status, statusText: res.statusText, headers });
    headers.set(HEADER.requestId, kept);
  }
  if (headers.has("request-id")) headers.set("request-id", kept);
  headers.set(HEADER.turnpikeRequestId, own);
  return res;
}
