/**
 * The open rest of a client format (docs/protocols.md, "Read set and open rest"): values and
 * types Turnpike does not interpret are accepted, so that a client release that adds one is not
 * refused. Passthrough forwards them as sent; a translation drops an unknown knob with a warning
 * and refuses unknown content with a 400 naming it (the gateway's format adapters do both, before
 * any converter runs, so the converters only ever see the known values their types name).
 */
import { Type, type TSchema, type TUnsafe } from "@sinclair/typebox";

/**
 * A string field whose `known` values Turnpike translates. Any other string is valid: its static
 * type stays the known union, because no converter reads an unknown one (the format adapter
 * removes it first when it translates, and passthrough does not read it).
 *
 * @example
 * ```ts
 * const Display = OpenEnum(["summarized", "omitted"]);
 * // {display: "updates"} validates; Static<typeof Display> is "summarized" | "omitted"
 * Display.known; // ["summarized", "omitted"]: what a translation carries
 * ```
 */
export function OpenEnum<const T extends readonly string[]>(known: T): TUnsafe<T[number]> & { readonly known: T } {
  // Type.String keeps the option on the schema object it returns, so `known` is there to read.
  return Type.Unsafe<T[number]>(Type.String({ known })) as TUnsafe<T[number]> & { readonly known: T };
}

/** A regular expression matching anything but the given `type` values (and the given suffixes). */
function otherThan(known: readonly string[], suffixes: readonly string[] = []): string {
  const ends = suffixes.map((s) => `(?!.*${s}$)`).join("");
  return `^(?!(${known.join("|")})$)${ends}.+$`;
}

/**
 * An object of a `type` Turnpike does not know (a content block, part or item of a client
 * release newer than this gateway). Its static type is `never`: the format adapters forward it on
 * passthrough and refuse it (400, naming it) before a translation, so no converter meets one.
 *
 * @example
 * ```ts
 * const Block = Type.Union([TextBlock, OtherTyped(["text"])]);
 * // {type: "future_block", data: 1} validates; {type: "text"} is checked as a TextBlock
 * ```
 */
export function OtherTyped(known: readonly string[], suffixes: readonly string[] = []): TUnsafe<never> {
  const schema: TSchema = Type.Object(
    { type: Type.String({ pattern: otherThan(known, suffixes) }) },
    { additionalProperties: true },
  );
  return Type.Unsafe<never>(schema);
}
