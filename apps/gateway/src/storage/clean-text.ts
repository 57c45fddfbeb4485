/**
 * Text that every back end keeps and compares the same way. PostgreSQL's `text` refuses a NUL
 * byte (an error, once a 500 on lookups by id), and a lone UTF-16 surrogate has no UTF-8 form (the
 * driver sends U+FFFD instead, so it would match a different value). Ids, filters and names are
 * checked against this before any store sees them: a 404 for an id no one could have been given,
 * a 400 for a filter or name.
 */

/** The longest id Turnpike looks up (response, key, request ids); its own are far shorter. */
export const MAX_ID_CHARS = 256;

/** A high surrogate with no low one after it, or a low one with no high one before it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `s` cannot be stored or looked up, in a few words; undefined when it can. */
export function textProblem(s: string, maxChars: number): string | undefined {
  if (s.length > maxChars) return `longer than ${maxChars} characters`;
  if (s.includes("\0")) return "holds a NUL character";
  if (LONE_SURROGATE.test(s)) return "holds invalid UTF-16 (a lone surrogate)";
  return undefined;
}

/** An id that can name something Turnpike stored (else a lookup is a 404 with no store call). */
export const isCleanId = (s: string): boolean => textProblem(s, MAX_ID_CHARS) === undefined;
