/**
 * A tool's `input_schema` a messages-format upstream takes at its root. The vendor refuses a
 * root `anyOf`, `oneOf` or `allOf` ("input_schema does not support oneOf, allOf, or anyOf at the
 * top level") for the whole request (docs/protocols.md §4.9 trap 15) — MCP servers publish such
 * schemas for "one of these argument sets". The root becomes one object: an `allOf` of plain
 * object schemas is merged exactly (their properties and required lists together); the
 * alternatives of an `anyOf` / `oneOf` are merged into one object offering every property and
 * requiring only what all of them require, which loses the rule that one alternative holds —
 * said by `lost`. Composed keywords below the root are left as they are: the vendor takes them.
 */
type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

/** Keys an object branch may have for an `allOf` merge to be exact. */
const PLAIN = new Set(["type", "properties", "required", "description", "title"]);

export function rootObjectSchema(schema: Schema): { schema: Schema; lost?: string } {
  const key = (["allOf", "anyOf", "oneOf"] as const).find((k) => Array.isArray(schema[k]));
  if (!key) return { schema };
  const branches = (schema[key] as unknown[]).filter(isObject);
  const { [key]: _, ...root } = schema;
  const properties: Schema = { ...(isObject(root.properties) ? root.properties : {}) };
  const required = new Set(Array.isArray(root.required) ? root.required.filter((r) => typeof r === "string") : []);
  const lists = branches.map((b) => (Array.isArray(b.required) ? b.required.filter((r) => typeof r === "string") : []));
  for (const b of branches)
    if (isObject(b.properties)) for (const [k, v] of Object.entries(b.properties)) properties[k] ??= v;
  if (key === "allOf") for (const l of lists) for (const r of l) required.add(r);
  else for (const r of lists[0] ?? []) if (lists.every((l) => l.includes(r))) required.add(r);
  const out: Schema = { ...root, type: "object", properties, ...(required.size ? { required: [...required] } : {}) };
  if (!required.size) delete out.required;
  // A second root combinator (an allOf beside an anyOf) goes the same way.
  const next = rootObjectSchema(out);
  const exact =
    key === "allOf" &&
    branches.every((b) => (b.type === undefined || b.type === "object") && Object.keys(b).every((k) => PLAIN.has(k)));
  const lost = exact
    ? next.lost
    : [`its root ${key} was merged into one object (every property offered, only the common ones required)`, next.lost]
        .filter(Boolean)
        .join("; ");
  return lost ? { schema: next.schema, lost } : { schema: next.schema };
}
