import { hasControlCharacter, textProblem } from "../storage/clean-text";

/**
 * Names `/mcp` offers: every upstream's tools and prompts as `<server>__<name>` (the server's
 * name cannot hold `__`, so the first `__` splits), and its resources under
 * `turnpike-mcp://<server>/<the upstream's own URI>` so that a read goes back to the server that
 * listed it. Clients choose among these names only: no name leads anywhere but a configured server.
 */
export const NAME_SEPARATOR = "__";
const RESOURCE_PREFIX = "turnpike-mcp://";

export function namespaced(server: string, name: string): string {
  return `${server}${NAME_SEPARATOR}${name}`;
}

/** `github__create_issue` → `{ server: "github", name: "create_issue" }`; undefined when not namespaced. */
export function splitName(full: string): { server: string; name: string } | undefined {
  const cut = full.indexOf(NAME_SEPARATOR);
  if (cut <= 0 || cut + NAME_SEPARATOR.length >= full.length) return undefined;
  return { server: full.slice(0, cut), name: full.slice(cut + NAME_SEPARATOR.length) };
}

export function wrapUri(server: string, uri: string): string {
  return `${RESOURCE_PREFIX}${server}/${uri}`;
}

export function unwrapUri(uri: string): { server: string; uri: string } | undefined {
  if (!uri.startsWith(RESOURCE_PREFIX)) return undefined;
  const rest = uri.slice(RESOURCE_PREFIX.length);
  const cut = rest.indexOf("/");
  if (cut <= 0 || cut === rest.length - 1) return undefined;
  return { server: rest.slice(0, cut), uri: rest.slice(cut + 1) };
}

/**
 * The alphabet of a tool's or prompt's own name, as the MCP specification recommends for tool
 * names (letters, digits, `_`, `-`, `.`; `/` too), at most {@link MAX_NAME} characters. A name
 * that will be stored in the ledger, logged and counted must be one of these: a client's name
 * outside it is refused with a JSON-RPC error, an upstream's is left out of the lists.
 */
export const NAME_ALPHABET = /^[A-Za-z0-9_./-]+$/;
export const MAX_NAME = 128;
/** A resource URI (not stored: the ledger names the method): printable, no control characters. */
export const MAX_URI = 2048;

/** Why a namespaced name a client sent cannot be used, or undefined. */
export function nameProblem(full: string): string | undefined {
  // A server's name is at most 64 characters (mcp_config.ts), the separator 2.
  if (full.length > 64 + NAME_SEPARATOR.length + MAX_NAME)
    return `longer than ${64 + NAME_SEPARATOR.length + MAX_NAME} characters`;
  if (!NAME_ALPHABET.test(full)) return 'characters outside A-Z, a-z, 0-9, "_", "-", ".", "/"';
  return undefined;
}

/** May an upstream's own tool or prompt name be offered (namespaced) to clients? */
export function upstreamNameOk(name: string): boolean {
  return name.length > 0 && name.length <= MAX_NAME && NAME_ALPHABET.test(name);
}

/** Why a resource URI a client sent cannot be used, or undefined. */
export function uriProblem(uri: string): string | undefined {
  if (hasControlCharacter(uri) || uri.includes(" ")) return "spaces or control characters";
  return textProblem(uri, MAX_URI);
}
