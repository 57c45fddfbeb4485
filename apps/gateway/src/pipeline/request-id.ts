/** A fresh request id, `req_` + 32 hex digits. */
export function newRequestId(): string {
  return "req_" + crypto.randomUUID().replaceAll("-", "");
}
