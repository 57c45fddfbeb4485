import { KindGuard, type TSchema } from "@sinclair/typebox";
import * as wire from "@turnpike/schema";
import { standardSchema } from "./standard-schema";

type Json = Record<string, unknown>;

/**
 * A node worth naming by reference: an object or a map, a choice between shapes, or a set of
 * values (an enum, an open enum's examples); never a bare string or number.
 */
function isStructured(node: Json): boolean {
  return (
    "properties" in node ||
    "patternProperties" in node ||
    "anyOf" in node ||
    "allOf" in node ||
    "oneOf" in node ||
    "enum" in node ||
    "examples" in node
  );
}

/**
 * `components.schemas` of the document: every TypeBox schema the wire-format package exports
 * (the very values the gateway validates with), plus the gateway's own. TypeBox schemas are JSON
 * Schema already; serialising drops TypeBox's symbols and `standardSchema` the validators' own
 * annotations. A schema nested in another is written once
 * and referred to (`$ref`) wherever it recurs, found by identical JSON.
 */
export function componentSchemas(own: Record<string, TSchema>): Record<string, Json> {
  const named: [string, Json][] = [];
  for (const [name, value] of Object.entries({ ...wire, ...own })) {
    if (KindGuard.IsSchema(value)) named.push([name, standardSchema(JSON.parse(JSON.stringify(value))) as Json]); // plain JSON of a schema
  }
  // The first name of a shape wins (a later alias of the same schema refers to it).
  const byShape = new Map<string, string>();
  for (const [name, schema] of named) {
    const shape = JSON.stringify(schema);
    if (isStructured(schema) && !byShape.has(shape)) byShape.set(shape, name);
  }
  const refer = (node: unknown, self: string): unknown => {
    if (Array.isArray(node)) return node.map((n) => refer(n, self));
    if (typeof node !== "object" || node === null) return node;
    const obj = node as Json; // an object: checked just above
    if (isStructured(obj)) {
      const name = byShape.get(JSON.stringify(obj));
      if (name !== undefined && name !== self) return { $ref: `#/components/schemas/${name}` };
    }
    return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, refer(v, self)]));
  };
  const out: Record<string, Json> = {};
  for (const [name, schema] of named) {
    const owner = byShape.get(JSON.stringify(schema));
    // An alias is the schema it repeats; anything else is itself with its parts referred to.
    out[name] =
      owner !== undefined && owner !== name
        ? { $ref: `#/components/schemas/${owner}` }
        : (Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, refer(v, name)])) as Json);
  }
  return out;
}
