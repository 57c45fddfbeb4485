/**
 * JSON Schema → the OpenAPI 3.0 subset that `functionDeclarations[].parameters` accepts
 * (docs/protocols.md §3.2, §4.1, §4.9 trap 15), after vercel/ai's
 * `convert-json-schema-to-openapi-schema.ts`: keeps type, description, enum, format,
 * properties, required, items, anyOf/oneOf/allOf, min/max constraints; resolves local `$ref`s
 * (`#/$defs/…`, `#/definitions/…`); turns `type: [T, "null"]` into `type: T, nullable: true`
 * and `const` into a one-value `enum`; drops `$schema`, `additionalProperties`, `default`,
 * `examples` and everything else. An empty object schema at the root becomes `undefined`
 * (omit `parameters`: a function without arguments).
 */

type Schema = Record<string, unknown>;

const KEEP_AS_IS = new Set([
  "description",
  "format",
  "title",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "pattern",
  "minProperties",
  "maxProperties",
  "nullable",
]);

function isSchema(v: unknown): v is Schema {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Deepest `$ref` chain followed before giving up (recursive schemas cannot be inlined). */
const MAX_REF_DEPTH = 8;

export function convertJsonSchemaToOpenApi(schema: unknown): Schema | undefined {
  if (!isSchema(schema)) return undefined;
  const root = schema;
  const out = convert(schema, root, 0);
  if (isEmptyObjectSchema(out)) return undefined;
  return out;
}

function isEmptyObjectSchema(s: Schema | undefined): boolean {
  if (!s) return true;
  const keys = Object.keys(s).filter((k) => k !== "description");
  if (keys.length === 0) return true;
  return (
    s.type === "object" &&
    keys.every((k) => k === "type" || k === "properties" || k === "required") &&
    (!isSchema(s.properties) || Object.keys(s.properties).length === 0)
  );
}

function resolveRef(ref: string, root: Schema): Schema | undefined {
  const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  if (!m?.[1] || !m[2]) return undefined;
  const defs = root[m[1]];
  if (!isSchema(defs)) return undefined;
  const target = defs[m[2].replace(/~1/g, "/").replace(/~0/g, "~")];
  return isSchema(target) ? target : undefined;
}

function convert(input: Schema, root: Schema, depth: number): Schema {
  let s = input;
  if (typeof s.$ref === "string") {
    const target = depth < MAX_REF_DEPTH ? resolveRef(s.$ref, root) : undefined;
    if (!target)
      return { type: "object", ...(typeof s.description === "string" ? { description: s.description } : {}) };
    s = { ...target, ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== "$ref")) };
    depth++;
  }
  const out: Schema = {};
  for (const [k, v] of Object.entries(s)) if (KEEP_AS_IS.has(k)) out[k] = v;

  if (Array.isArray(s.type)) {
    const types = s.type.filter((t): t is string => typeof t === "string");
    const nonNull = types.filter((t) => t !== "null");
    if (types.includes("null")) out.nullable = true;
    if (nonNull.length === 1) out.type = nonNull[0];
    else if (nonNull.length > 1) out.anyOf = nonNull.map((t) => ({ type: t }));
  } else if (typeof s.type === "string" && s.type !== "null") {
    out.type = s.type;
  } else if (s.type === "null") {
    out.nullable = true;
  }

  // Gemini enums are string enums; other-typed enums are kept as they are.
  const stringy = out.type === undefined || out.type === "string";
  if (Array.isArray(s.enum)) out.enum = stringy ? s.enum.map(String) : s.enum;
  if (s.const !== undefined) out.enum = stringy ? [String(s.const)] : [s.const];
  if (out.enum && out.type === undefined) out.type = "string";

  if (isSchema(s.properties)) {
    const props: Schema = {};
    for (const [name, sub] of Object.entries(s.properties)) if (isSchema(sub)) props[name] = convert(sub, root, depth);
    out.properties = props;
    if (out.type === undefined) out.type = "object";
  }
  if (Array.isArray(s.required) && s.required.length > 0)
    out.required = s.required.filter((r) => typeof r === "string");
  if (isSchema(s.items)) out.items = convert(s.items, root, depth);
  else if (Array.isArray(s.items) && isSchema(s.items[0])) out.items = convert(s.items[0], root, depth);

  for (const key of ["anyOf", "oneOf", "allOf"] as const) {
    const list = s[key];
    if (!Array.isArray(list)) continue;
    const subs = list.filter(isSchema);
    const nonNull = subs.filter((x) => x.type !== "null");
    if (nonNull.length < subs.length) out.nullable = true;
    if (nonNull.length === 1 && key !== "allOf") Object.assign(out, convert(nonNull[0]!, root, depth));
    else if (nonNull.length > 0) out[key] = nonNull.map((x) => convert(x, root, depth));
  }
  return out;
}
