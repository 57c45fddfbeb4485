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
