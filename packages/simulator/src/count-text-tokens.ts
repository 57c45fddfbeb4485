import { countTokens, decode, encode } from "gpt-tokenizer/encoding/o200k_base";

// Special-token strings such as "<|endoftext|>" in user text count as plain text; the library's
// default would throw on them.
const PLAIN = { disallowedSpecial: new Set<string>() };

/**
 * Runs the encoder would take as one piece (letters, or punctuation) longer than this are
 * counted this many characters at a time: its merge loop is quadratic in a piece's length, and
 * the simulator runs in the gateway's process (64 KB of one letter held every request up for
 * 29 s). Sliced it is linear, and the count stays within a fraction of a percent.
 */
const MAX_PIECE = 256;
const LONG_PIECE = /[\p{L}\p{M}]{257,}|[^\s\p{L}\p{N}]{257,}/gu;

/** Tokens of one string in the o200k_base encoding (gpt-tokenizer), the simulator's one tokenizer. */
export function countTextTokens(text: string): number {
  if (text.length === 0) return 0;
  if (text.length <= MAX_PIECE) return countTokens(text, PLAIN);
  let total = 0;
  let last = 0;
  for (const m of text.matchAll(LONG_PIECE)) {
    if (m.index > last) total += countTokens(text.slice(last, m.index), PLAIN);
    for (let i = 0; i < m[0].length; i += MAX_PIECE) total += countTokens(m[0].slice(i, i + MAX_PIECE), PLAIN);
    last = m.index + m[0].length;
  }
  return last === 0
    ? countTokens(text, PLAIN)
    : last < text.length
      ? total + countTokens(text.slice(last), PLAIN)
      : total;
}

/**
 * The longest prefix of `text` whose own token count is at most `max`. Decoding a token prefix can
 * end inside a character or re-encode to more tokens, so the cut is re-counted and moved back
 * until it fits.
 */
export function truncateToTokens(text: string, max: number): string {
  if (max <= 0) return "";
  const tokens = encode(text, PLAIN);
  if (tokens.length <= max) return text;
  for (let n = max; n > 0; n--) {
    let cut = decode(tokens.slice(0, n));
    if (cut.endsWith("\uFFFD")) cut = cut.slice(0, -1);
    if (text.startsWith(cut) && countTextTokens(cut) <= max) return cut;
  }
  return "";
}
