/** The deterministic text of a default reply, and its split into stream pieces. */

const FILLER = (
  "and the simulator keeps talking in plain deterministic words so that every stream has enough " +
  "pieces for a test to count while the gateway relays them one by one"
).split(" ");

/** Default minimum length of a generated reply, in words. */
const MIN_WORDS = 20;

/** The first `n` words of `text`, or "(no text)". */
export function firstWords(text: string, n: number): string {
  const words = text.split(/\s+/).filter(Boolean);
  if (words.length === 0) return "(no text)";
  return words.slice(0, n).join(" ") + (words.length > n ? " …" : "");
}

/** `head` padded with filler words to at least `words` words, ending with a full stop. */
export function padReply(head: string, words: number): string {
  const have = head.split(" ").length;
  const target = Math.max(words, MIN_WORDS);
  let out = head;
  for (let i = 0; have + i < target; i++) out += " " + FILLER[i % FILLER.length];
  return out + ".";
}

/**
 * Splits `text` into at most `n` pieces at word boundaries, each piece carrying the whitespace
 * before its words (as real streams do: "Hello", " world"). Joined, the pieces give `text` back.
 */
export function splitPieces(text: string, n: number): string[] {
  if (text === "") return [];
  const units = text.match(/\s*\S+/g);
  if (!units) return [text];
  const tail = text.slice(units.join("").length);
  if (tail) units[units.length - 1] += tail;
  const groups = Math.max(1, Math.min(n, units.length));
  const base = Math.floor(units.length / groups);
  const extra = units.length % groups;
  const out: string[] = [];
  let at = 0;
  for (let g = 0; g < groups; g++) {
    const size = base + (g < extra ? 1 : 0);
    out.push(units.slice(at, at + size).join(""));
    at += size;
  }
  return out;
}

/** Splits a string into `n` nearly equal fragments by length (tool-argument JSON), never inside a surrogate pair. */
export function splitEvenly(s: string, n: number): string[] {
  const parts = Math.max(1, Math.min(n, s.length));
  const out: string[] = [];
  let at = 0;
  for (let i = 1; i <= parts; i++) {
    let end = i === parts ? s.length : Math.round((s.length * i) / parts);
    const code = s.charCodeAt(end - 1);
    if (end < s.length && code >= 0xd800 && code <= 0xdbff) end++;
    if (end > at) out.push(s.slice(at, end));
    at = Math.max(at, end);
  }
  return out;
}
