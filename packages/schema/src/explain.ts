/**
 * Turns a failed schema check into messages a caller can act on. TypeBox's own errors for a
 * union say only "Expected union value"; here a union is resolved the way a reader would:
 * by the JSON kind of the value, then by its `type`/`role` discriminator, so the message
 * points at the real problem (`messages[0].content[1]: unknown block type "imagex", …`).
 *
 * Every message is `<path>: <rule>, got <received>`, with paths in JavaScript accessor form
 * (`messages[2].content[0].text`). Only runs after the compiled check failed, so it is off
 * the hot path.
 *
 * Schemas may carry three extra keywords read only here:
 * - `expected`: how to name the expected value ("string or array of text blocks");
 * - `rule`: the message for a failed `pattern`;
 * - `discriminatorLabel`: how to name the discriminator in "unknown … "x"" ("block type");
 * - `hint`: appended when a value is not one of a union's literals;
 * - `rule` on a literal, a number, an array, an object, a record or a union of literals: the message for any failure
 *   of that value itself (its kind, range, length or literal), as on a string's `pattern`;
 * - `listKnown` on an object without additional properties: an unknown field's message names the
 *   known ones (config files, where a typo of a field name is the usual mistake).
 */
import { Kind, OptionalKind, type TSchema } from "@sinclair/typebox";
import { isRecord } from "./is-record.js";

/** One problem found in a request body. `message` starts with `path` so it reads alone. */
export interface ValidationIssue {
  /** Where, as a JavaScript accessor path: `messages[2].content[0].text`; `""` for the body itself. */
  path: string;
  /** `<path>: <rule>, got <received>`, e.g. `temperature: must be between 0 and 1, got 1.5`. */
  message: string;
}

/** Enough to fix a request; a body with thousands of bad items does not need thousands of lines. */
export const MAX_ISSUES = 20;

/** Schema keywords this module reads; TypeBox keeps unknown options on the schema object. */
interface Annotated {
  expected?: string;
  rule?: string;
  discriminatorLabel?: string;
  hint?: string;
  listKnown?: boolean;
}

type Node = TSchema & Annotated;
type ValueKind = "string" | "number" | "boolean" | "null" | "array" | "object" | "undefined" | "other";

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `messages` + `role` → `messages.role`; odd keys are quoted: `logit_bias["50256"]`. */
export function joinPath(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  if (IDENT.test(key)) return path === "" ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

/** How a received value is shown: `nothing`, `null`, `1.5`, `"imagex"`, `an array of 3 items`. */
export function show(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (typeof value === "string") {
    const s = JSON.stringify(value);
    return s.length > 60 ? `${s.slice(0, 56)}…" (${value.length} characters)` : s;
  }
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return value.length === 1 ? "an array of 1 item" : `an array of ${value.length} items`;
  if (typeof value === "object") return "an object";
  return typeof value;
}

function kindOf(value: unknown): ValueKind {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  const t = typeof value;
  if (t === "string" || t === "number" || t === "boolean" || t === "object") return t;
  return "other";
}

function isOptional(schema: TSchema): boolean {
  return schema[OptionalKind] === "Optional";
}

// TSchema types its keywords loosely (an index signature); these two read them as schemas.
function members(schema: TSchema): Node[] {
  const anyOf: unknown = schema.anyOf;
  return Array.isArray(anyOf) ? anyOf : [];
}

function properties(schema: TSchema): Record<string, Node> {
  return schemaMap(schema.properties);
}

function schemaMap(map: unknown): Record<string, Node> {
  return isRecord(map)
    ? (map as Record<string, Node>) /* properties / patternProperties: every value is a schema */
    : {};
}

/** The expected value as a noun phrase, without article: `integer`, `one of "a", "b"`. */
export function describe(schema: Node): string {
  if (schema.expected !== undefined) return schema.expected;
  switch (schema[Kind]) {
    case "Literal":
      return JSON.stringify(schema.const);
    case "String":
    case "TemplateLiteral":
      return "string";
    case "Number":
      return "number";
    case "Integer":
      return "integer";
    case "Boolean":
      return "boolean";
    case "Null":
      return "null";
    case "Array":
      return "array";
    case "Object":
    case "Record":
      return "object";
    case "Union": {
      const ms = members(schema);
      if (ms.every((m) => m[Kind] === "Literal")) return `one of ${literalList(ms)}`;
      return [...new Set(ms.map(describe))].join(" or ");
    }
    default:
      return "value";
  }
}

function literalList(ms: Node[]): string {
  return ms.map((m) => (m[Kind] === "Literal" ? JSON.stringify(m.const) : describeDiscriminator(m))).join(", ");
}

function describeDiscriminator(m: Node | undefined): string {
  if (m === undefined) return "another string";
  if (m[Kind] === "Literal") return JSON.stringify(m.const);
  if (m[Kind] === "Union") return members(m).map(describeDiscriminator).join(", ");
  if (m[Kind] === "TemplateLiteral" && typeof m.pattern === "string") {
    // `^.*_tool_result$` → `"…_tool_result"`
    return JSON.stringify(
      m.pattern
        .replace(/^\^/, "")
        .replace(/\$$/, "")
        .replace(/\(\.\*\)|\.\*/g, "…"),
    );
  }
  return "another string";
}

/** `a string`, `an integer`; literals and "one of" lists take no article. */
function withArticle(noun: string): string {
  if (noun.startsWith('"') || noun.startsWith("one of") || noun === "null") return noun;
  return /^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`;
}

function accepts(schema: Node, kind: ValueKind): boolean {
  switch (schema[Kind]) {
    case "Literal":
      return kindOf(schema.const) === kind;
    case "String":
    case "TemplateLiteral":
      return kind === "string";
    case "Number":
    case "Integer":
      return kind === "number";
    case "Boolean":
      return kind === "boolean";
    case "Null":
      return kind === "null";
    case "Array":
      return kind === "array";
    case "Object":
    case "Record":
      return kind === "object";
    case "Union":
      return members(schema).some((m) => accepts(m, kind));
    case "Unknown":
    case "Any":
      return true;
    default:
      return false;
  }
}

function matchesDiscriminator(schema: Node | undefined, value: unknown): boolean {
  if (schema === undefined) return false;
  if (value === undefined) return isOptional(schema);
  switch (schema[Kind]) {
    case "Literal":
      return value === schema.const;
    case "String":
    case "TemplateLiteral":
      return (
        typeof value === "string" && (typeof schema.pattern !== "string" || new RegExp(schema.pattern).test(value))
      );
    case "Union":
      return members(schema).some((m) => matchesDiscriminator(m, value));
    default:
      return false;
  }
}

/**
 * Appends to `out` what is wrong with `value` against `schema` at `path`; appends nothing when
 * it conforms. Stops at {@link MAX_ISSUES}.
 */
export function explain(schema: Node, value: unknown, path: string, out: ValidationIssue[]): void {
  if (out.length >= MAX_ISSUES) return;
  const issue = (rule: string, at: string = path): void => {
    if (out.length < MAX_ISSUES) out.push({ path: at, message: `${at === "" ? "request body" : at}: ${rule}` });
  };
  const mustBe = (): void => issue(`must be ${withArticle(describe(schema))}, got ${show(value)}`);
  // A value that fails its own check, said in the schema's own words where it has them.
  const ruled =
    schema.rule === undefined || schema[Kind] === "String" || schema[Kind] === "TemplateLiteral"
      ? undefined
      : `${schema.rule}, got ${show(value)}`;

  switch (schema[Kind]) {
    case "Unknown":
    case "Any":
      return;
    case "Literal":
      if (value !== schema.const) return ruled === undefined ? mustBe() : issue(ruled);
      return;
    case "String":
    case "TemplateLiteral": {
      if (typeof value !== "string") return mustBe();
      if (typeof schema.minLength === "number" && value.length < schema.minLength) {
        return issue(
          schema.minLength === 1
            ? `must be non-empty, got ""`
            : `must be at least ${schema.minLength} characters, got ${show(value)}`,
        );
      }
      if (typeof schema.maxLength === "number" && value.length > schema.maxLength) {
        return issue(`must be at most ${schema.maxLength} characters, got ${value.length}`);
      }
      if (typeof schema.pattern === "string" && !new RegExp(schema.pattern).test(value)) {
        return issue(`${schema.rule ?? `must match /${schema.pattern}/`}, got ${show(value)}`);
      }
      return;
    }
    case "Number":
    case "Integer": {
      if (ruled !== undefined) {
        const fits =
          typeof value === "number" && Number.isFinite(value) && (schema[Kind] === "Number" || Number.isInteger(value));
        if (!fits) return issue(ruled);
        return checkRange(schema, value, () => issue(ruled));
      }
      if (typeof value !== "number" || !Number.isFinite(value)) return mustBe();
      if (schema[Kind] === "Integer" && !Number.isInteger(value)) return issue(`must be an integer, got ${value}`);
      return checkRange(schema, value, issue);
    }
    case "Boolean":
      if (typeof value !== "boolean") mustBe();
      return;
    case "Null":
      if (value !== null) mustBe();
      return;
    case "Array": {
      if (
        ruled !== undefined &&
        (!Array.isArray(value) ||
          (typeof schema.minItems === "number" && value.length < schema.minItems) ||
          (typeof schema.maxItems === "number" && value.length > schema.maxItems))
      ) {
        return issue(ruled);
      }
      if (!Array.isArray(value)) return mustBe();
      if (typeof schema.minItems === "number" && value.length < schema.minItems) {
        return issue(`must have at least ${plural(schema.minItems, "item")}, got ${value.length}`);
      }
      if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
        return issue(`must have at most ${plural(schema.maxItems, "item")}, got ${value.length}`);
      }
      const items: Node = schema.items;
      for (let i = 0; i < value.length && out.length < MAX_ISSUES; i++)
        explain(items, value[i], joinPath(path, i), out);
      return;
    }
    case "Object": {
      if (!isRecord(value)) return ruled === undefined ? mustBe() : issue(ruled);
      const props = properties(schema);
      for (const [key, prop] of Object.entries(props)) {
        const v = value[key];
        const at = joinPath(path, key);
        if (v === undefined) {
          if (!isOptional(prop)) issue(`required ${describe(prop)}, got nothing`, at);
          continue;
        }
        explain(prop, v, at, out);
      }
      if (schema.additionalProperties === false) {
        const known = schema.listKnown ? ` (known: ${Object.keys(props).join(", ")})` : "";
        for (const key of Object.keys(value)) if (!(key in props)) issue(`unknown field${known}`, joinPath(path, key));
      }
      return;
    }
    case "Record": {
      if (!isRecord(value)) return ruled === undefined ? mustBe() : issue(ruled);
      const [valueSchema] = Object.values(schemaMap(schema.patternProperties));
      if (valueSchema === undefined) return;
      for (const [k, v] of Object.entries(value)) explain(valueSchema, v, joinPath(path, k), out);
      return;
    }
    case "Union":
      if (ruled !== undefined && members(schema).every((m) => m[Kind] === "Literal")) {
        if (!members(schema).some((m) => m.const === value)) issue(ruled);
        return;
      }
      return explainUnion(schema, value, path, out, issue);
    default:
      return;
  }
}

function plural(n: number, noun: string): string {
  return n === 1 ? `1 ${noun}` : `${n} ${noun}s`;
}

function checkRange(schema: Node, value: number, issue: (rule: string) => void): void {
  const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);
  const min = num(schema.minimum);
  const max = num(schema.maximum);
  const xmin = num(schema.exclusiveMinimum);
  const xmax = num(schema.exclusiveMaximum);
  if ((min !== undefined && value < min) || (max !== undefined && value > max)) {
    if (min !== undefined && max !== undefined) return issue(`must be between ${min} and ${max}, got ${value}`);
    if (min !== undefined) return issue(`must be at least ${min}, got ${value}`);
    return issue(`must be at most ${max}, got ${value}`);
  }
  if (xmin !== undefined && value <= xmin) return issue(`must be greater than ${xmin}, got ${value}`);
  if (xmax !== undefined && value >= xmax) return issue(`must be less than ${xmax}, got ${value}`);
}

const DISCRIMINATORS = ["type", "role"] as const;

function explainUnion(
  schema: Node,
  value: unknown,
  path: string,
  out: ValidationIssue[],
  issue: (rule: string, at?: string) => void,
): void {
  const kind = kindOf(value);
  const compatible = members(schema).filter((m) => accepts(m, kind));
  if (compatible.length === 0) {
    return issue(`must be ${withArticle(describe(schema))}, got ${show(value)}`);
  }
  const [only] = compatible;
  if (only !== undefined && compatible.length === 1) return explain(only, value, path, out);

  if (kind === "string" && compatible.every((m) => m[Kind] === "Literal")) {
    if (compatible.some((m) => m.const === value)) return;
    const hint = schema.hint === undefined ? "" : `; ${schema.hint}`;
    return issue(`must be one of ${literalList(compatible)}, got ${show(value)}${hint}`);
  }

  if (isRecord(value)) {
    const objects = compatible.filter((m) => m[Kind] === "Object");
    const key = DISCRIMINATORS.find(
      (k) => objects.length === compatible.length && objects.every((m) => properties(m)[k] !== undefined),
    );
    if (key !== undefined) {
      const d = value[key];
      const discriminator = (m: Node): Node | undefined => properties(m)[key];
      const matches = objects.filter((m) => matchesDiscriminator(discriminator(m), d));
      if (matches.length > 0) return explainBest(matches, value, path, out);
      const options = objects.map((m) => describeDiscriminator(discriminator(m))).join(", ");
      if (d === undefined) return issue(`required, one of ${options}, got nothing`, joinPath(path, key));
      if (typeof d !== "string") return issue(`must be a string, got ${show(d)}`, joinPath(path, key));
      const label = schema.discriminatorLabel ?? key;
      return issue(`unknown ${label} ${show(d)}, expected one of ${options}`);
    }
  }
  return explainBest(compatible, value, path, out);
}

/** Several members could apply: report the one the value is closest to (fewest issues). */
function explainBest(candidates: Node[], value: unknown, path: string, out: ValidationIssue[]): void {
  let best: ValidationIssue[] | undefined;
  for (const c of candidates) {
    const found: ValidationIssue[] = [];
    explain(c, value, path, found);
    if (found.length === 0) return;
    if (best === undefined || found.length < best.length) best = found;
  }
  for (const i of best ?? []) if (out.length < MAX_ISSUES) out.push(i);
}
