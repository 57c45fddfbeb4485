/**
 * The worker half of `json-census.ts`: counts the values of a large request body off the event
 * loop, so the server's thread parses only a body it knows is within the limits. It posts back a
 * count and messages, never a parsed value: handing a parsed object between threads costs the
 * receiver about as much as parsing it (a 600,000-value body: 50 ms to parse, 580 ms to clone),
 * and counting by a scan of the characters keeps no parsed copy on the worker's heap either.
 */
import { GatewayError } from "@turnpike/providers";
import type { CensusAnswer, CensusAsk } from "./json-census";
import { checkDepth } from "./json-depth";

declare const self: Worker;

/** How many values `root` holds (objects, arrays and scalars alike), counted without recursion. */
export function countValues(root: unknown): number {
  let values = 1;
  const stack: unknown[] = [root];
  while (stack.length) {
    const value = stack.pop();
    if (typeof value !== "object" || value === null) continue;
    if (Array.isArray(value)) {
      values += value.length;
      for (const v of value) if (typeof v === "object" && v !== null) stack.push(v);
    } else {
      for (const k in value) {
        values++;
        const v = (value as Record<string, unknown>)[k];
        if (typeof v === "object" && v !== null) stack.push(v);
      }
    }
  }
  return values;
}

/**
 * The values of a JSON text counted by one pass over its characters, building nothing: the root,
 * each array element and each object member (what {@link countValues} counts of the parsed
 * value), and whether it nests deeper than `maxDepth` or is cut short (a string or a container
 * left open). It does not judge the grammar otherwise: the server's thread parses a body within
 * the limits and answers a malformed one with its 400, as it does for a small body.
 */
export function scanValues(text: string, maxDepth: number): { values: number; deeper: boolean; broken: boolean } {
  let values = 1;
  let depth = 0;
  let inString = false;
  // Per open container: 1 an array, 2 an object; an array just opened has no element yet.
  const kinds = new Uint8Array(maxDepth + 2);
  let arrayOpened = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 32 || c === 10 || c === 13 || c === 9) continue;
    if (arrayOpened) {
      arrayOpened = false;
      if (c !== 93) values++;
    }
    switch (c) {
      case 34:
        inString = true;
        break;
      case 91:
      case 123:
        depth++;
        if (depth > maxDepth) return { values, deeper: true, broken: false };
        kinds[depth] = c === 91 ? 1 : 2;
        arrayOpened = c === 91;
        break;
      case 93:
      case 125:
        depth--;
        if (depth < 0) return { values, deeper: false, broken: true };
        break;
      case 58:
        if (kinds[depth] === 2) values++;
        break;
      case 44:
        if (kinds[depth] === 1) values++;
        break;
    }
  }
  return { values, deeper: false, broken: inString || depth !== 0 };
}

/**
 * What the worker answers for one body (exported for the tests; the worker runs it): its values
 * counted by {@link scanValues}, building nothing, so the worker never holds a parsed copy of a
 * large body; only a body cut short or nested too deep is parsed here, to say why in the words
 * of a small body's 400 (JSON.parse's complaint, or the field that nests too deep).
 */
export function takeCensus(ask: CensusAsk): CensusAnswer {
  const scan = scanValues(ask.text, ask.maxDepth);
  if (!scan.deeper && !scan.broken) return { id: ask.id, values: scan.values };
  let parsed: unknown;
  try {
    parsed = JSON.parse(ask.text);
  } catch (e) {
    return { id: ask.id, values: 0, notJson: e instanceof Error ? e.message : String(e) };
  }
  try {
    checkDepth(parsed, ask.maxDepth);
  } catch (e) {
    if (!(e instanceof GatewayError)) throw e;
    return { id: ask.id, values: 0, tooDeep: { message: e.message, param: e.param } };
  }
  return { id: ask.id, values: countValues(parsed) };
}

if (!Bun.isMainThread) {
  self.onmessage = (event: MessageEvent<CensusAsk>) => {
    self.postMessage(takeCensus(event.data));
    // The body's copy and its parse are garbage now: collected here, on this thread, so that the
    // process holds no more than one large body's worth for the worker (its heap would otherwise
    // keep each until a later collection).
    Bun.gc(true);
  };
}
