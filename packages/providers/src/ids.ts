/** Ids the gateway makes up, and the id rules of the messages format. */

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** `prefix` + 24 random base-62 characters, e.g. `toolu_01Ab…`. */
export function randomId(prefix: string, length = 24): string {
  const bytes = new Uint8Array(length);
  crypto.getRandomValues(bytes);
  let out = prefix;
  // 256 % 62 bias is irrelevant for ids that only need to be unique.
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return out;
}

/**
 * A tool-call id the messages format accepts: only `[A-Za-z0-9_-]` (the vendor rejects ids such
 * as `functions.Bash:0`, docs/protocols.md §4.5 / §4.9 trap 14). Other characters become `_`; an empty
 * id gets a fresh one.
 */
export function sanitizeToolId(id: string | undefined | null): string {
  if (!id) return randomId("toolu_");
  return id.replace(/[^A-Za-z0-9_-]/g, "_");
}
