import { arrayOf, isObject, type JsonObject } from "./json-access";

const MAX_DEPTH = 8;

/** Values taken from the conversation where a property's name asks for them. */
export interface ArgumentHints {
  /** A file name the user mentioned: the value of a `…path…` or `…file…` string property. */
  path?: string;
}

function sample(name: string, schema: unknown, depth: number, hints: ArgumentHints): unknown {
  if (!isObject(schema) || depth > MAX_DEPTH) return `sample ${name}`;
  const en = arrayOf(schema.enum);
  if (en.length > 0) return en[0];
  if ("const" in schema) return schema.const;
  const alt = arrayOf(schema.anyOf ?? schema.oneOf)[0];
  if (alt !== undefined && schema.type === undefined) return sample(name, alt, depth + 1, hints);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  switch (String(type).toLowerCase()) {
    case "integer":
      return typeof schema.minimum === "number" ? Math.ceil(schema.minimum) : 1;
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : 1.5;
    case "boolean":
      return true;
    case "null":
      return null;
    case "array":
      return [sample(name, schema.items, depth + 1, hints)];
    case "object":
      return buildToolArguments(schema, depth + 1, hints);
    default:
      if (hints.path !== undefined && /path|file/i.test(name)) return hints.path;
      return schema.format === "date" ? "2025-01-01" : `sample ${name}`;
  }
}

/**
 * Deterministic arguments for a tool call: every `required` property of the input schema gets a
 * sample value by type (the first `enum` value, `minimum` or 1 for numbers, true, a one-item list,
 * a nested object, else the string "sample <name>", or the hinted file name for a path-like
 * property). A schema without `required` gives `{}`.
 */
export function buildToolArguments(schema: unknown, depth = 0, hints: ArgumentHints = {}, every = false): JsonObject {
  const out: JsonObject = {};
  if (!isObject(schema)) return out;
  const props = isObject(schema.properties) ? schema.properties : {};
  // Structured output fills every property (a strict schema requires them all); tool calls the required ones.
  const keys = every ? Object.keys(props) : arrayOf(schema.required);
  for (const key of keys) {
    if (typeof key === "string")
      out[key] =
        every && isObject(props[key]) && props[key].type === "object"
          ? buildToolArguments(props[key], depth + 1, hints, true)
          : sample(key, props[key], depth, hints);
  }
  return out;
}
