/** Lenient readers for request bodies that were only JSON-parsed, never schema-checked. */

export type JsonObject = Record<string, unknown>;

export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function arrayOf(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function stringOf(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

export function numberOf(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** `stop` / `stop_sequences` / `stopSequences`: a string or a list of strings. */
export function stringList(v: unknown): string[] {
  if (typeof v === "string") return v ? [v] : [];
  return arrayOf(v).filter((s): s is string => typeof s === "string" && s.length > 0);
}
