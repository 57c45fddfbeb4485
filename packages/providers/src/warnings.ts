/**
 * A parameter that could not be carried to the chosen upstream (docs/style.md rule 2). The gateway sends
 * each as an `x-turnpike-warning: <param>: <message>` response header (decisions/0001).
 */
export interface Warning {
  /** The client-side field, e.g. `top_k` or `messages[2].content[0]`. */
  param: string;
  message: string;
}

/** Typographic characters our messages use, spelled in ASCII. */
const ASCII: Record<string, string> = {
  "\u2013": "-",
  "\u2014": "-",
  "\u2264": "<=",
  "\u2265": ">=",
  "\u2026": "...",
  "\u2192": "->",
  "\u2018": "'",
  "\u2019": "'",
  "\u201C": '"',
  "\u201D": '"',
};

/**
 * Text that is a valid HTTP header value. Header values are byte strings (Fetch "ByteString",
 * RFC 9110 §5.5): a character above U+00FF — an en dash in "0–1" — makes `Headers.append` throw,
 * which would turn a request that only deserved a warning into a 500. Warnings also quote
 * client input (paths, names), so every character outside printable ASCII is spelled out.
 */
export function headerSafe(text: string): string {
  return text.replace(/[^\x20-\x7E]/gu, (c) => ASCII[c] ?? `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

/** Collects warnings, one per param (a repeated cause is reported once), as header-safe text. */
export class Warnings {
  readonly list: Warning[] = [];
  private readonly seen = new Set<string>();

  add(param: string, message: string): void {
    if (this.seen.has(param)) return;
    this.seen.add(param);
    this.list.push({ param: headerSafe(param), message: headerSafe(message) });
  }
}
