/**
 * A fresh request id, `req_` + 32 hex digits. Time-ordered (UUID v7), so the ledger's primary
 * key grows at its end instead of landing at random places in the B-tree.
 */
export function newRequestId(): string {
  // The UUID's five groups without their dashes (by slices: about half the time of a replaceAll).
  const u = Bun.randomUUIDv7();
  return "req_" + u.slice(0, 8) + u.slice(9, 13) + u.slice(14, 18) + u.slice(19, 23) + u.slice(24);
}
