/**
 * Tool names on chat-completions upstreams: at most 64 characters of `[a-zA-Z0-9_-]`
 * (docs/protocols.md §2.2, §4.9 trap 14). Longer messages-format names are shortened to a 55-character
 * prefix, `_` and an 8-hex-digit hash of the whole name; the request converter
 * returns the mapping so replies can give the client its own names back.
 */
const LIMIT = 64;

/** FNV-1a, 32 bit: stable across processes, so the same name always shortens the same way. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

export function shortenToolName(name: string): string {
  const clean = name.replace(/[^a-zA-Z0-9_-]/g, "_");
  if (clean === name && name.length <= LIMIT) return name;
  return `${clean.slice(0, LIMIT - 9)}_${fnv1a(name)}`;
}

/** Upstream name → client name, through the map a request converter returned. */
export function restoreToolName(name: string, toolNames: Record<string, string> | undefined): string {
  return toolNames?.[name] ?? name;
}

/** Shortened tool names (chat allows ≤64 characters), both ways. */
export class ToolNames {
  readonly map: Record<string, string> = {};
  private readonly forward = new Map<string, string>();
  hasCacheControl = false;

  toUpstream(name: string): string {
    const known = this.forward.get(name);
    if (known) return known;
    const short = shortenToolName(name);
    this.forward.set(name, short);
    if (short !== name) this.map[short] = name;
    return short;
  }
}
