/**
 * Schemas as the description document may carry them: JSON Schema 2020-12 keywords and the few
 * OpenAPI 3.1 adds, nothing else. The wire-format schemas are TypeBox values that carry the
 * gateway's own annotations for its validators (`rule`, `known`, `listKnown`, `expected`, `hint`,
 * `discriminatorLabel`, and whatever comes next); linters and client generators reject those, so
 * the document keeps only what it lists here, whatever the source schema adds.
 */

type Json = Record<string, unknown>;

/** Keywords whose value is one schema. */
const ONE = [
  "additionalProperties",
  "items",
  "contains",
  "not",
  "if",
  "then",
  "else",
  "propertyNames",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contentSchema",
];
/** Keywords whose value is a list of schemas. */
const MANY = ["allOf", "anyOf", "oneOf", "prefixItems"];
/** Keywords whose value maps names to schemas. */
const BY_NAME = ["properties", "patternProperties", "$defs", "dependentSchemas"];
/** Keywords whose value is data, kept as it is. */
const DATA = [
  "$schema",
  "$id",
  "$ref",
  "$anchor",
  "$dynamicRef",
  "$dynamicAnchor",
  "$comment",
  "type",
  "enum",
  "const",
  "multipleOf",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "maxLength",
  "minLength",
  "pattern",
  "maxItems",
  "minItems",
  "uniqueItems",
  "maxContains",
  "minContains",
  "maxProperties",
  "minProperties",
  "required",
  "dependentRequired",
  "format",
  "contentEncoding",
  "contentMediaType",
  "title",
  "description",
  "default",
  "deprecated",
  "readOnly",
  "writeOnly",
  "examples",
  // OpenAPI 3.1's own schema keywords.
  "discriminator",
  "xml",
  "externalDocs",
  "example",
];

const KEPT = new Set([...ONE, ...MANY, ...BY_NAME, ...DATA]);

/** `schema` with every keyword outside JSON Schema and OpenAPI dropped, at every depth. */
export function standardSchema(schema: unknown): unknown {
  if (typeof schema === "boolean") return schema;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return schema;
  const out: Json = {};
  // An open enum's known values (`OpenEnum`): any string validates, these are the ones to expect,
  // which JSON Schema says with `examples`.
  const known = (schema as Json).known; // an object: checked just above
  if (Array.isArray(known) && !("examples" in schema)) out.examples = known;
  for (const [key, value] of Object.entries(schema)) {
    if (!KEPT.has(key)) continue;
    if (ONE.includes(key)) out[key] = standardSchema(value);
    else if (MANY.includes(key)) out[key] = Array.isArray(value) ? value.map(standardSchema) : value;
    else if (BY_NAME.includes(key) && typeof value === "object" && value !== null) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, standardSchema(s)]));
    } else out[key] = value;
  }
  return out;
}

/** Every keyword a schema (at any depth) uses that `standardSchema` would drop: for tests and audits. */
export function foreignKeywords(schema: unknown, found = new Set<string>()): Set<string> {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return found;
  for (const [key, value] of Object.entries(schema)) {
    if (!KEPT.has(key)) found.add(key);
    else if (ONE.includes(key)) foreignKeywords(value, found);
    else if (MANY.includes(key) && Array.isArray(value)) for (const s of value) foreignKeywords(s, found);
    else if (BY_NAME.includes(key) && typeof value === "object" && value !== null)
      for (const s of Object.values(value)) foreignKeywords(s, found);
  }
  return found;
}
