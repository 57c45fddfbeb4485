import { indexOfQuoted } from "../protocols/sse-scan";
import { isRecord } from "../vocabulary/client-errors";

/**
 * Checks the usage an upstream reported, as it came (before any reader turns it into counts):
 * the readers make a negative number 0 and round a fraction down, so a vendor that reports
 * −1,000,000 input tokens would otherwise be billed as if it had reported none. Every count in
 * a usage object must be a whole number from 0 to `maxTokens` (the model's window plus its
 * output cap); a usage that is not an object at all is wrongly shaped.
 */
export function usageLooksTrue(payload: unknown, maxTokens: number): boolean {
  // The usage sits at the top (replies, chat chunks, generateContent) or one level down
  // (`message_start.message.usage`, `response.completed.response.usage`). Read by name: walking
  // every field of a whole reply to find it cost a JSON request about 4 µs.
  if (!isRecord(payload)) return true;
  if (!holderLooksTrue(payload, maxTokens)) return false;
  for (const k in payload) {
    const v = payload[k];
    if (isRecord(v) && !holderLooksTrue(v, maxTokens)) return false;
  }
  return true;
}

/** Whether an object's usage fields (`usage`, `usageMetadata`), where it has any, look true. */
function holderLooksTrue(h: Record<string, unknown>, maxTokens: number): boolean {
  return countsLookTrue(h.usage, maxTokens) && countsLookTrue(h.usageMetadata, maxTokens);
}

/** Whether JSON text has a usage field whose value is anything but null (read without a regex: it runs on every frame). */
function hasUsageValue(json: string): boolean {
  for (let at = indexOfQuoted(json, "usage"); at !== -1; at = indexOfQuoted(json, "usage", at + 6)) {
    let i = at + 6;
    if (json.startsWith("Metadata", i)) i += 8;
    if (json.charCodeAt(i) !== 34 /* " */) continue;
    i++;
    while (isSpace(json.charCodeAt(i))) i++;
    if (json.charCodeAt(i) !== 58 /* : */) continue;
    i++;
    while (isSpace(json.charCodeAt(i))) i++;
    if (!json.startsWith("null", i)) return true;
  }
  return false;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

function countsLookTrue(usage: unknown, maxTokens: number): boolean {
  if (usage === null || usage === undefined) return true;
  return isRecord(usage) && countsWithin(usage, maxTokens, 0);
}

/** Every number in `v`, down to a few levels (usage objects nest details and per-modality lists), a whole count within bounds. */
function countsWithin(v: object, maxTokens: number, depth: number): boolean {
  for (const x of Array.isArray(v) ? v : Object.values(v)) {
    if (typeof x === "number") {
      if (!Number.isInteger(x) || x < 0 || x > maxTokens) return false;
    } else if (typeof x === "object" && x !== null && depth < 3 && !countsWithin(x, maxTokens, depth + 1)) return false;
  }
  return true;
}

/** `usageLooksTrue` of one JSON text (a frame's data); text that does not parse is for its reader to judge. */
export function usageTextLooksTrue(json: string, maxTokens: number): boolean {
  // Only a frame whose usage is not null has something to check: a chat stream's chunks say
  // `"usage":null` until the last, and parsing each of them again cost a stream ~10 % of its CPU.
  if (!hasUsageValue(json)) return true;
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return true;
  }
  return usageLooksTrue(v, maxTokens);
}
