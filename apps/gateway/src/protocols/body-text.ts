/**
 * The client's own JSON text, kept for passthrough (docs/protocols.md, "Read set and open rest"):
 * a body that goes to an upstream of the client's own protocol is written from the text the
 * client sent, with only the top-level fields Turnpike rewrote (the model id, a lowered output
 * cap, the usage flag of a chat stream, cache breakpoints) written anew. Every other field keeps
 * its bytes — number spellings, escapes, key order, whitespace — so a field or value Turnpike has
 * never heard of reaches the vendor exactly as the client wrote it.
 *
 * JSON.parse keeps no offsets, and the parsers that do build a node per value (a 200 KiB prompt
 * is tens of thousands of them); one pass over the top level that skips nested values by
 * bracket depth is all this needs (decisions/0010-client-json-text.md).
 */

/** Parsed body → the text it was parsed from. */
const texts = new WeakMap<object, string>();
/** A body derived from a parsed one (passthrough's copy) → the parsed one. */
const origins = new WeakMap<object, object>();

/** Remembers the text `parsed` came from (read-body does this for every request body). */
export function keepText(parsed: object, text: string): void {
  texts.set(parsed, text);
}

/** `derived` is `origin` with some top-level fields replaced, added or removed. */
export function derivedFrom(derived: object, origin: object): void {
  origins.set(derived, origins.get(origin) ?? origin);
}

interface Member {
  key: string;
  /** Offset of the key's opening quote. */
  start: number;
  valueStart: number;
  /** Offset just past the value. */
  end: number;
}

const QUOTE = 34;
const BACKSLASH = 92;

function skipSpace(s: string, i: number): number {
  for (;;) {
    const c = s.charCodeAt(i);
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return i;
    i++;
  }
}

/** Offset past the string whose opening quote is at `i`. */
function endOfString(s: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = s.indexOf('"', j);
    if (q < 0) return s.length;
    let slashes = 0;
    for (let k = q - 1; s.charCodeAt(k) === BACKSLASH; k--) slashes++;
    if (slashes % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/** Offset past the value starting at `i` (the text parsed as JSON already: it is well formed). */
function endOfValue(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === QUOTE) return endOfString(s, i);
  if (c === 123 /* { */ || c === 91 /* [ */) {
    let depth = 0;
    for (let j = i; j < s.length; j++) {
      const d = s.charCodeAt(j);
      if (d === QUOTE) j = endOfString(s, j) - 1;
      else if (d === 123 || d === 91) depth++;
      else if (d === 125 || d === 93) {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return s.length;
  }
  let j = i;
  for (; j < s.length; j++) {
    const d = s.charCodeAt(j);
    if (d === 44 /* , */ || d === 125 /* } */ || d === 93 /* ] */ || d === 32 || d === 10 || d === 13 || d === 9) break;
  }
  return j;
}

/** The top-level members of an object's text, in order; undefined if a key repeats (then the text is not reused). */
function members(s: string): Member[] | undefined {
  let i = skipSpace(s, 0);
  if (s.charCodeAt(i) !== 123) return undefined;
  i = skipSpace(s, i + 1);
  const out: Member[] = [];
  let seen: Set<string> | undefined;
  while (s.charCodeAt(i) === QUOTE) {
    const keyEnd = endOfString(s, i);
    // A JSON string token: without an escape, its text is the key (no parse, one string less).
    const raw = s.slice(i + 1, keyEnd - 1);
    const key = raw.includes("\\") ? (JSON.parse(s.slice(i, keyEnd)) as string) : raw;
    // A body has a handful of top-level keys: a scan, not a `Set` per request, up to 16 of them.
    if (seen) {
      if (seen.has(key)) return undefined;
      seen.add(key);
    } else {
      for (let k = 0; k < out.length; k++) if (out[k]!.key === key) return undefined;
      if (out.length === 16) seen = new Set([...out.map((m) => m.key), key]);
    }
    const colon = skipSpace(s, keyEnd);
    const valueStart = skipSpace(s, colon + 1);
    const end = endOfValue(s, valueStart);
    out.push({ key, start: i, valueStart, end });
    i = skipSpace(s, end);
    if (s.charCodeAt(i) === 44) i = skipSpace(s, i + 1);
  }
  return out;
}

/**
 * The JSON text of an upstream body: the client's own text for every top-level field whose value
 * is the one parsed from it (the same object or primitive), the field written anew where Turnpike
 * changed it, left out where it removed it, added at the end where it added one. A body with no
 * remembered text (a translation's) is plain `JSON.stringify`.
 *
 * @example
 * ```ts
 * const parsed = JSON.parse(text); keepText(parsed, text);
 * const body = { ...parsed, model: "vendor-model" }; derivedFrom(body, parsed);
 * bodyText(body); // `text` with only the model's value replaced
 * ```
 */
export function bodyText(body: Readonly<Record<string, unknown>>): string {
  const origin = origins.get(body) ?? body;
  const raw = texts.get(origin);
  const ms = raw === undefined ? undefined : members(raw);
  if (raw === undefined || ms === undefined || ms.length === 0) return JSON.stringify(body);
  const parsed = origin as Record<string, unknown>; // the object parsed from `raw`: a JSON object
  // The client's text is copied in runs: from `from` on, as long as `open`, every member kept as
  // it was (with the separators between them) is one slice, not a few strings per member.
  let out = "";
  let from = 0;
  let open = true;
  let first = true;
  for (let j = 0; j < ms.length; j++) {
    const m = ms[j]!;
    if (!Object.hasOwn(body, m.key) || body[m.key] === undefined) {
      // Left out: the run ends with the member before it (not with the separator before this one).
      if (open) out += raw.slice(from, j === 0 ? m.start : ms[j - 1]!.end);
      open = false;
      continue;
    }
    if (!open) {
      // After a member left out: the separator before this one (the text is JSON: it holds the comma).
      if (!first) out += raw.slice(ms[j - 1]!.end, m.start);
      from = m.start;
      open = true;
    }
    first = false;
    const value = body[m.key];
    if (value !== parsed[m.key]) {
      out += raw.slice(from, m.valueStart) + JSON.stringify(value);
      from = m.end;
    }
  }
  const last = ms[ms.length - 1]!.end; // ms is not empty (checked above)
  let added = "";
  for (const key in body) {
    if (Object.hasOwn(parsed, key) || body[key] === undefined) continue;
    added += `${first ? "" : ","}${JSON.stringify(key)}:${JSON.stringify(body[key])}`;
    first = false;
  }
  // The closing brace, and the space around it.
  if (added === "") return out + raw.slice(open ? from : last);
  return (open ? out + raw.slice(from, last) : out) + added + raw.slice(last);
}
