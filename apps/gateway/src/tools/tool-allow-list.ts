import type { KeyRecord } from "../storage/store";
import { NAME_SEPARATOR } from "./namespacing";

/**
 * A key's MCP allow-list (`tools` on `POST /admin/keys`): `*`, `<server>__*` or
 * `<server>__<tool glob>`, matched against the namespaced names `/mcp` offers. Absent or null:
 * the key sees no MCP tool at all. Prompts are matched by their namespaced name the same way;
 * a server's resources are open to a key that may use every tool of that server (`*` or `<server>__*`).
 * A key's team may carry a list of the same form (`tools` on `/admin/teams`): then a name must
 * pass both, the key's and the team's (the team's null or absent: only the key's applies).
 */
export class ToolAllowList {
  private readonly compiled = new WeakMap<readonly string[], RegExp>();

  private regex(list: readonly string[]): RegExp {
    let re = this.compiled.get(list);
    if (!re) {
      const alt = list.map((p) =>
        p
          .split("*")
          .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
          .join(".*"),
      );
      re = new RegExp(`^(?:${alt.join("|")})$`);
      this.compiled.set(list, re);
    }
    return re;
  }

  /** The lists a name must pass: the key's own, then its team's when the team has one. */
  private lists(key: KeyRecord): (readonly string[])[] {
    const own = key.tools ?? [];
    const team = key.team?.tools;
    return team ? [own, team] : [own];
  }

  /** May this key list and call the tool (or prompt) with this namespaced name? */
  allows(key: KeyRecord, namespacedName: string): boolean {
    return this.lists(key).every((l) => l.length > 0 && this.regex(l).test(namespacedName));
  }

  /** Might this key use any name of this server (so that its lists are worth asking for)? */
  allowsSomethingOf(key: KeyRecord, server: string): boolean {
    return this.lists(key).every((l) => l.some((p) => p === "*" || p.startsWith(`${server}${NAME_SEPARATOR}`)));
  }

  /** May this key list and read the resources of this server (the whole server is granted)? */
  allowsServer(key: KeyRecord, server: string): boolean {
    return this.lists(key).every((l) => l.some((p) => p === "*" || p === `${server}${NAME_SEPARATOR}*`));
  }
}

/** Why an allow-list entry is refused on `POST /admin/keys`, or undefined when it is fine. */
export function toolPatternProblem(pattern: string, servers: readonly string[]): string | undefined {
  if (pattern.length > 200 || !/^[\x21-\x7e]+$/.test(pattern))
    return "printable characters without spaces, at most 200";
  if (pattern === "*") return undefined;
  const cut = pattern.indexOf(NAME_SEPARATOR);
  if (cut <= 0 || cut + NAME_SEPARATOR.length === pattern.length)
    return `"<server>${NAME_SEPARATOR}<tool glob>", "<server>${NAME_SEPARATOR}*" or "*"`;
  const server = pattern.slice(0, cut);
  if (server.includes("*")) return "the server part names one server (no glob)";
  if (!servers.includes(server))
    return `no MCP server is named "${server}" in the config (${servers.length ? servers.join(", ") : "none configured"})`;
  return undefined;
}
