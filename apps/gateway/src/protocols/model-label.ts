import { indexOfQuoted } from "./sse-scan";

/**
 * The model a same-protocol stream names, put right at the string level. Vendors answer with
 * their own snapshot names (`…-20250929`, `…-2025-04-14`, `…-001`) even when Turnpike asked for
 * the catalog's id; the client must see the catalog id it asked for. The first frame that names a
 * model tells the vendor's string; from then on each relayed region has that `"model":"…"` pair
 * replaced, so the stream stays on the scanner path (decisions/0005-inline-stream-taps.md) and is
 * never parsed for it.
 */
/**
 * The JSON string value of the first `"<key>":` in a piece of vendor JSON, read as text (no
 * parse of the whole event): how a stream's first frame says which model answered.
 */
export function namedModel(text: string, key = "model"): { name: string; quoted: string } | undefined {
  const word = `${key}":`;
  const at = indexOfQuoted(text, word);
  if (at === -1) return undefined;
  const after = at + 1 + word.length; // past the quote, the key and its colon
  // A JSON string after the key (with or without a space), escapes included.
  const quoted = /^\s?("(?:[^"\\]|\\.)*")/.exec(text.slice(after, after + 512))?.[1];
  if (quoted === undefined || quoted === '""') return undefined; // an empty name (a content-filter chunk's) names nothing
  return { name: JSON.parse(quoted) as string, quoted }; // a JSON string literal, matched just above
}

export class ModelLabel {
  /** The vendor's own model string, once a frame has named it. */
  upstream: string | undefined;
  /** Each way the vendor's pair is written, and its text past the opening quote (what is searched for). */
  private needles: { pair: string; word: string }[] = [];
  private readonly replacement: string;

  /**
   * @param id the catalog id the client asked for
   * @param key the field the protocol names its model in
   */
  constructor(
    readonly id: string,
    private readonly key = "model",
  ) {
    this.replacement = `"${key}":${JSON.stringify(id)}`;
  }

  /** Reads the vendor's model string from the first text that names one; true once it is known. */
  learn(text: string): boolean {
    if (this.upstream !== undefined) return true;
    const found = namedModel(text, this.key);
    if (!found) return false;
    this.upstream = found.name;
    if (this.upstream !== this.id)
      this.needles = [`${this.key}":${found.quoted}`, `${this.key}": ${found.quoted}`].map((word) => ({
        pair: `"${word}`,
        word,
      }));
    return true;
  }

  /** The vendor named its model differently from the catalog id: frames must be relabelled. */
  get changes(): boolean {
    return this.needles.length > 0;
  }

  /** Whether the text names the vendor's model string (and so needs `apply`). */
  names(text: string): boolean {
    for (const { word } of this.needles) if (indexOfQuoted(text, word) !== -1) return true;
    return false;
  }

  /** The text with the vendor's model string replaced by the catalog id. */
  apply(text: string): string {
    let out = text;
    for (const { pair, word } of this.needles)
      if (indexOfQuoted(out, word) !== -1) out = out.split(pair).join(this.replacement);
    return out;
  }
}
