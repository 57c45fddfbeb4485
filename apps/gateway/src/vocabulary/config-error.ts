import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { explainErrors } from "@turnpike/schema";
import { unknownFieldProblems } from "./unknown-fields";

/**
 * The mistakes of a configuration, all of them at once: one line each, `file: path: rule`.
 * Start-up prints them and stops, without a stack trace (main.ts).
 */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join("\n"));
    this.name = "ConfigError";
  }
}

/**
 * Each mistake of `value` (found at `path` of `file`) against `schema`, as `file: path: rule`
 * lines, in the words request errors use; none when it conforms. An unknown field of a closed
 * object names the known field it was most likely meant to be (vocabulary/unknown-fields.ts).
 */
export function configProblems(schema: TSchema, value: unknown, file: string, path: string): string[] {
  const unknown = new Map(unknownFieldProblems(schema, value, path).map((p) => [p.slice(0, p.indexOf(": ")), p]));
  if (Value.Check(schema, value)) return [...unknown.values()].map((p) => `${file}: ${p}`);
  const issues = explainErrors(schema, value, path).map((i) => {
    // The schema package's line for an unknown field lists the known ones; ours names the likely one.
    const ours = i.message.startsWith(`${i.path}: unknown field`) ? unknown.get(i.path) : undefined;
    unknown.delete(i.path);
    return ours ?? i.message;
  });
  // The explanation covers every keyword the config schemas use; this line is for one it does not.
  if (issues.length === 0 && unknown.size === 0) return [`${file}: ${path}: does not match its schema`];
  return [...issues, ...unknown.values()].map((p) => `${file}: ${p}`);
}

/** Throws the problems as one ConfigError, if there are any. */
export function refuse(problems: readonly string[]): void {
  if (problems.length) throw new ConfigError(problems);
}
