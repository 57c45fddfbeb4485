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

/** Does `s` hold a control character (C0, DEL or C1), which a terminal or a log line would act on? */
export function hasControlCharacter(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

/**
 * Why a name a person chose (a key's, a team's, a file's) cannot be kept, or undefined: its
 * alphabet is any printable Unicode text — no control character (a NUL, an escape sequence, a
 * line break), no invalid UTF-16 — of 1 to `maxChars` characters.
 */
export function nameProblem(s: string, maxChars: number): string | undefined {
  if (s.length === 0) return "empty";
  if (hasControlCharacter(s)) return "holds a control character (a NUL, a line break, an escape sequence)";
  return textProblem(s, maxChars);
}
