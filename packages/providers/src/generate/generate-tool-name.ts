/**
 * Function names on generateContent: a letter or `_` first, then `a-zA-Z0-9_.:-`, at most 128
 * characters (docs/protocols.md §3.2, §4.9 trap 14). Messages-format names that break the rule (a
 * leading digit or `-`) get a `_` prefix; the request converter returns the mapping so replies
 * give the client its own name back.
 */
const VALID = /^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$/;

export function generateToolName(name: string): string {
  if (VALID.test(name)) return name;
  const clean = name.replace(/[^A-Za-z0-9_.:-]/g, "_");
  return `_${clean}`.slice(0, 128);
}
