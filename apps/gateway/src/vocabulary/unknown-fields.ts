import { Kind, type TSchema } from "@sinclair/typebox";
import { distance } from "fastest-levenshtein";
import { isRecord } from "./client-errors";

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `routing` + `retry` → `routing.retry`, as the schema package's messages write paths (`models[0]`, `x["odd key"]`). */
function joinPath(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  if (IDENT.test(key)) return path === "" ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

/**
 * The known name a mistyped one was most likely meant to be: the nearest by edit distance, if it
 * is near enough to be a typo (at most a third of the name's length, at least 1 edit allowed:
 * `routng` → `routing`, `base_urll` → `base_url`) or the two begin with the same four letters
 * (`retry` → `retries`); else none.
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  let best: { name: string; d: number } | undefined;
  for (const k of known) {
    const other = k.toLowerCase();
    const d = distance(lower, other);
    const near =
      d <= Math.max(1, Math.floor(name.length / 3)) || (lower.length >= 4 && other.startsWith(lower.slice(0, 4)));
    if (near && (!best || d < best.d)) best = { name: k, d };
  }
  return best?.name;
}

/** The rule an unknown field breaks: the closest known name, or the list of them when none is close. */
export function unknownFieldRule(name: string, known: readonly string[]): string {
  const near = closestName(name, known);
  return near
    ? `unknown field \`${name}\` — did you mean \`${near}\`?`
    : `unknown field \`${name}\` (known: ${known.join(", ")})`;
}

/** `path: rule` for each key of `value` not in `known`. */
export function unknownKeys(value: Record<string, unknown>, known: readonly string[], path: string): string[] {
  return Object.keys(value)
    .filter((k) => !known.includes(k))
    .map((k) => `${joinPath(path, k)}: ${unknownFieldRule(k, known)}`);
}

/**
 * Every unknown field of `value` under `schema`, as `path: rule` lines: a field not declared by an
 * object schema that is closed (`additionalProperties: false`), at any depth the value reaches
 * through objects, lists and maps. Open objects are not judged: their extra fields are read by
 * another check (a model row is read by the catalog and the router, each for its own fields).
 */
export function unknownFieldProblems(schema: TSchema, value: unknown, path: string): string[] {
  const out: string[] = [];
  const walk = (s: TSchema, v: unknown, at: string): void => {
    switch (s[Kind]) {
      case "Object": {
        if (!isRecord(v)) return;
        const props = (s.properties ?? {}) as Record<string, TSchema>; // an Object schema's declared fields
        if (s.additionalProperties === false) out.push(...unknownKeys(v, Object.keys(props), at));
        for (const [k, p] of Object.entries(props)) if (v[k] !== undefined) walk(p, v[k], joinPath(at, k));
        return;
      }
      case "Array":
        if (Array.isArray(v)) v.forEach((item, i) => walk(s.items as TSchema, item, joinPath(at, i))); // an Array schema's items
        return;
      case "Record": {
        if (!isRecord(v)) return;
        const [each] = Object.values((s.patternProperties ?? {}) as Record<string, TSchema>); // a Record's one value schema
        if (each) for (const [k, item] of Object.entries(v)) walk(each, item, joinPath(at, k));
        return;
      }
      default:
        return;
    }
  };
  walk(schema, value, path);
  return out;
}
