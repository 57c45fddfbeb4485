/**
 * Directives steer one reply. They are written anywhere in the last user turn's text as
 * `[sim key=value key2 key3="quoted value"]` (several blocks merge; a later key wins). Unknown
 * keys or bad values are reported, so a typo in a test fails loudly instead of being ignored.
 */

export type MidstreamMode = "error" | "close" | "reset";
export type RefusalMode = "reply" | "prompt";

export interface Directives {
  /** HTTP status of an error reply sent before any byte. */
  error?: number;
  /** Break the stream after some chunks: in-band error event (default), clean EOF, or reset. */
  midstreamError?: MidstreamMode;
  refusal?: RefusalMode;
  tools?: number;
  think?: boolean;
  chunks?: number;
  latencyMs?: number;
  firstByteMs?: number;
  /** `retry-after` seconds on 429/503/529 errors (default 1). */
  retryAfter?: number;
  text?: string;
  variant?: string;
  replay?: string;
}

export interface ParsedDirectives {
  directives: Directives;
  /** The text with every `[sim …]` block removed and whitespace collapsed. */
  rest: string;
  /** What was wrong with a directive, if anything. */
  problem?: string;
}

const OPEN = "[sim";
const MIDSTREAM_MODES: readonly string[] = ["error", "close", "reset"];
const REFUSAL_MODES: readonly string[] = ["reply", "prompt"];

/** Reads `key=value` / `key="quoted \"value\""` / `key` pairs up to the closing `]`. */
function readPairs(s: string, from: number): { pairs: [string, string | undefined][]; end: number } | undefined {
  const pairs: [string, string | undefined][] = [];
  let i = from;
  for (;;) {
    while (i < s.length && /\s/.test(s[i]!)) i++;
    if (i >= s.length) return undefined;
    if (s[i] === "]") return { pairs, end: i + 1 };
    const keyStart = i;
    while (i < s.length && /[A-Za-z0-9_-]/.test(s[i]!)) i++;
    const key = s.slice(keyStart, i);
    if (!key) return undefined;
    if (s[i] !== "=") {
      pairs.push([key, undefined]);
      continue;
    }
    i++;
    let value = "";
    if (s[i] === '"') {
      i++;
      while (i < s.length && s[i] !== '"') {
        if (s[i] === "\\" && i + 1 < s.length) i++;
        value += s[i];
        i++;
      }
      if (i >= s.length) return undefined;
      i++;
    } else {
      while (i < s.length && !/[\s\]]/.test(s[i]!)) value += s[i++];
    }
    pairs.push([key, value]);
  }
}

function count(key: string, v: string | undefined, min: number, max: number): number | string {
  const n = Number(v);
  if (v === undefined || v === "" || !Number.isInteger(n) || n < min || n > max) {
    return `[sim ${key}=…] needs a whole number from ${min} to ${max}, got ${v === undefined ? "nothing" : JSON.stringify(v)}`;
  }
  return n;
}

/** Applies one pair; returns a problem message or undefined. */
function apply(d: Directives, key: string, v: string | undefined): string | undefined {
  const num = (min: number, max: number, set: (n: number) => void): string | undefined => {
    const n = count(key, v, min, max);
    if (typeof n === "string") return n;
    set(n);
    return undefined;
  };
  switch (key) {
    case "error":
      return num(400, 599, (n) => (d.error = n));
    case "midstream_error":
      if (v !== undefined && !MIDSTREAM_MODES.includes(v))
        return `[sim midstream_error=…] must be one of ${MIDSTREAM_MODES.join(", ")}, got ${JSON.stringify(v)}`;
      d.midstreamError = (v ?? "error") as MidstreamMode; // checked against MIDSTREAM_MODES above
      return undefined;
    case "refusal":
      if (v !== undefined && !REFUSAL_MODES.includes(v))
        return `[sim refusal=…] must be one of ${REFUSAL_MODES.join(", ")}, got ${JSON.stringify(v)}`;
      d.refusal = (v ?? "reply") as RefusalMode; // checked against REFUSAL_MODES above
      return undefined;
    case "tools":
      return num(0, 64, (n) => (d.tools = n));
    case "think":
      d.think = true;
      return undefined;
    case "chunks":
      return num(1, 100_000, (n) => (d.chunks = n));
    case "latency":
      return num(0, 60_000, (n) => (d.latencyMs = n));
    case "first_byte":
      return num(0, 600_000, (n) => (d.firstByteMs = n));
    case "retry_after":
      return num(0, 86_400, (n) => (d.retryAfter = n));
    case "text":
      d.text = v ?? "";
      return undefined;
    case "variant":
    case "replay":
      if (!v) return `[sim ${key}=…] needs a name`;
      d[key] = v;
      return undefined;
    default:
      return `unknown simulator directive ${JSON.stringify(key)} (known: error, midstream_error, refusal, tools, think, chunks, latency, first_byte, retry_after, text, variant, replay)`;
  }
}

export function parseDirectives(text: string): ParsedDirectives {
  const directives: Directives = {};
  if (!text.includes(OPEN)) return { directives, rest: text.trim() };
  let rest = "";
  let problem: string | undefined;
  let at = 0;
  for (;;) {
    const open = text.indexOf(OPEN, at);
    // `[sim` must be followed by whitespace or `]`, so "[simple]" stays text.
    const next = open === -1 ? undefined : text[open + OPEN.length];
    if (open === -1) break;
    if (next !== "]" && !(next && /\s/.test(next))) {
      rest += text.slice(at, open + OPEN.length);
      at = open + OPEN.length;
      continue;
    }
    rest += text.slice(at, open);
    const read = readPairs(text, open + OPEN.length);
    if (!read) {
      problem ??= `unterminated simulator directive: ${JSON.stringify(text.slice(open, open + 60))}`;
      at = text.length;
      break;
    }
    for (const [k, v] of read.pairs) problem ??= apply(directives, k, v);
    at = read.end;
  }
  rest += text.slice(at);
  const out: ParsedDirectives = { directives, rest: rest.replace(/\s+/g, " ").trim() };
  if (problem !== undefined) out.problem = problem;
  return out;
}
