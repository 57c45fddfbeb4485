import type { CatalogEntry } from "../vocabulary/target";

/** The output-cap fields of the client formats' bodies (each format names its own). */
const OUTPUT_CAP_FIELDS = ["max_tokens", "max_completion_tokens", "max_output_tokens"] as const;

/** The output cap a client body asks for, if it names one. */
export function askedOutputCap(body: Readonly<Record<string, unknown>>): number | undefined {
  for (const f of OUTPUT_CAP_FIELDS) {
    const v = body[f];
    if (typeof v === "number" && Number.isFinite(v) && v > 0) return v;
  }
  return undefined;
}

/**
 * The most input tokens a body of `bodyChars` characters can be billed for: one token per
 * character (no tokenizer of the catalog's vendors makes more tokens than characters of text, and
 * the body's own JSON syntax — keys, quotes, brackets — is counted too, so the bound is loose), and
 * for a model with a window never more than the window (a longer prompt is refused upstream,
 * billed nothing). An embeddings call's window is per input, so its bound is the characters alone.
 * The 4-characters-a-token estimate is what rate limits count; a budget holds the worst case.
 */
export function worstInputTokens(entry: CatalogEntry, bodyChars: number, perInputWindow = false): number {
  return perInputWindow ? bodyChars : Math.min(bodyChars, entry.context_window);
}

/**
 * The most a request can cost, reserved against its budgets at admission: its worst-case input
 * at the input price (or the dearer cache-write price: a prompt may be written to the cache),
 * and its output cap (the one asked, never above the model's; the model's when none is asked)
 * at the output price, rounded up to a thousandth of a cent.
 */
export function worstCaseUsd(
  entry: CatalogEntry,
  inputTokens: number,
  outputCap: number | undefined,
  priceFactor = 1,
): number {
  const output = Math.min(outputCap ?? entry.max_output_tokens, entry.max_output_tokens);
  const input = Math.max(entry.input_per_mtok, entry.cache_write_5m_per_mtok, entry.cache_write_1h_per_mtok);
  // A paid tier bills every token at its multiple: the worst case is held at it.
  return Math.ceil(((inputTokens * input + output * entry.output_per_mtok) * Math.max(1, priceFactor)) / 10) / 100_000;
}
