import { SSEParser, type SSEMessage } from "@turnpike/schema/sse";

/** The `data:` payload of the frame whose `event:` line starts at `at`. */
export function dataAfter(region: string, at: number): string | undefined {
  const start = region.indexOf("\ndata: ", at);
  if (start === -1) return undefined;
  const end = region.indexOf("\n", start + 7);
  return region.slice(start + 7, end === -1 ? undefined : end);
}

/**
 * Where `"` + `word` next occurs in `text` at or after `from`, or -1: a JSON key found by its
 * word, then its opening quote checked. The runtime's search stops at each occurrence of the
 * needle's first character, and a quote is every few characters of JSON: a needle starting with
 * one ran ten times slower over a stream's text than one starting with a letter.
 */
export function indexOfQuoted(text: string, word: string, from = 0): number {
  for (let i = text.indexOf(word, from + 1); i !== -1; i = text.indexOf(word, i + 1))
    if (text.charCodeAt(i - 1) === 34 /* " */) return i - 1;
  return -1;
}

/** Each occurrence of `marker` in `region`. */
export function each(region: string, marker: string, fn: (at: number) => void): void {
  for (let i = region.indexOf(marker); i !== -1; i = region.indexOf(marker, i + marker.length)) fn(i);
}

/** The events of a piece of raw SSE (parsed only when relayed text must be counted). */
export function parseRegion(region: string): SSEMessage[] {
  const parser = new SSEParser();
  return [...parser.push(region), ...parser.end()];
}
