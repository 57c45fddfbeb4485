/**
 * A fresh request id, `req_` + 32 hex digits. Time-ordered (UUID v7), so the ledger's primary
 * key grows at its end instead of landing at random places in the B-tree.
 */
export function newRequestId(): string {
  return "req_" + Bun.randomUUIDv7().replaceAll("-", "");
}
