import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { explainErrors } from "@turnpike/schema";

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
 * lines, in the words request errors use; none when it conforms.
 */
export function configProblems(schema: TSchema, value: unknown, file: string, path: string): string[] {
  if (Value.Check(schema, value)) return [];
  const issues = explainErrors(schema, value, path);
  // The explanation covers every keyword the config schemas use; this line is for one it does not.
  if (issues.length === 0) return [`${file}: ${path}: does not match its schema`];
  return issues.map((i) => `${file}: ${i.message}`);
}

/** Throws the problems as one ConfigError, if there are any. */
export function refuse(problems: readonly string[]): void {
  if (problems.length) throw new ConfigError(problems);
}
