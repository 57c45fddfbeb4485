import { createHash, timingSafeEqual } from "node:crypto";

/** The shortest `TURNPIKE_ADMIN_KEY` accepted at start-up: shorter secrets can be guessed. */
export const MIN_ADMIN_KEY_LENGTH = 32;

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * Is `presented` the admin key? Both sides are hashed first, so the comparison runs over two
 * 32-byte digests whatever was sent: its time tells neither the key's content nor its length.
 */
export function isAdminKey(presented: string, adminKey: string): boolean {
  return timingSafeEqual(digest(presented), digest(adminKey));
}
