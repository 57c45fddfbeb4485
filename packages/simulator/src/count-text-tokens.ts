import { countTokens, decode, encode } from "gpt-tokenizer/encoding/o200k_base";

// Special-token strings such as "<|endoftext|>" in user text count as plain text; the library's
// default would throw on them.
const PLAIN = { disallowedSpecial: new Set<string>() };

/** Tokens of one string in the o200k_base encoding (gpt-tokenizer), the simulator's one tokenizer. */
export function countTextTokens(text: string): number {
  return text.length === 0 ? 0 : countTokens(text, PLAIN);
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
