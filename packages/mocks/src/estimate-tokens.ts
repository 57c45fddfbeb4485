/** A rough token count (about 4 characters a token, at least 1): mocks need plausible, not exact, usage. */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** Splits text into word-sized stream pieces, keeping every character. */
export function splitText(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? (text ? [text] : []);
}
