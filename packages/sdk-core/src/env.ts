/**
 * Reads an environment variable where one exists (Node, Bun, Deno 2 all expose
 * `globalThis.process.env`) and returns `undefined` in a browser, without importing any
 * runtime module. Empty or whitespace-only values count as unset.
 *
 * @example
 * ```ts
 * const key = readEnv("TURNPIKE_API_KEY"); // undefined in a browser
 * ```
 */
export function readEnv(name: string): string | undefined {
  // Typed by hand: this package compiles without Node or Bun types.
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  const value = proc?.env?.[name]?.trim();
  return value ? value : undefined;
}
