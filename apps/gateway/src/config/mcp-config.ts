import { type Static, Type } from "@sinclair/typebox";
import { configProblems, refuse } from "../vocabulary/config-error";

/**
 * The config file's `mcp_servers:` list: the upstream MCP servers `/mcp` fronts. Only the
 * operator names them (no client-chosen target ever), and their credentials stay here.
 */

/** An upstream reached over Streamable HTTP. */
export interface McpHttpServer {
  kind: "http";
  name: string;
  url: string;
  /** Sent on every request to the upstream (`${ENV}` references resolved at start). */
  headers: Record<string, string>;
  timeoutMs: number;
}

/** An upstream run as a child process over stdio (only with `TURNPIKE_MCP_STDIO=on`). */
export interface McpStdioServer {
  kind: "stdio";
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  timeoutMs: number;
}

export type McpServerConfig = McpHttpServer | McpStdioServer;

export interface McpConfig {
  servers: McpServerConfig[];
  /** Largest `arguments` of one tool call, in bytes of JSON (larger: an MCP error, not forwarded). */
  maxArgumentBytes: number;
  /** Largest result of one call, in bytes of JSON (larger: an MCP error in place of the result). */
  maxResultBytes: number;
}

export const MCP_DEFAULTS = { timeoutMs: 30_000, maxArgumentBytes: 1 << 20, maxResultBytes: 4 << 20 } as const;

/**
 * A server's name is the first part of every name it offers: `<server>__<tool>`. It starts and
 * ends with a letter or digit and holds no `__`, so the first `__` of a namespaced name always
 * ends the server's name: `docs_` (whose `docs___x` would read as `docs`'s `_x`) is refused.
 * At most {@link MAX_SERVER_NAME} characters (it is a metric label and part of ledger records).
 */
export const SERVER_NAME = /^[a-z0-9](?:(?:[a-z0-9-]|_(?!_))*[a-z0-9-])?$/;
export const MAX_SERVER_NAME = 64;

/** Names to strings (`headers`, `env`); `${ENV}` references are resolved after the check. */
const StringMap = Type.Record(Type.String(), Type.String({ rule: "must be a string" }), {
  rule: "must be a map of names to strings",
});

const positive = Type.Integer({ minimum: 1, rule: "must be a positive whole number" });

/** One entry of `mcp_servers`: `url` (Streamable HTTP) or `command` (stdio), checked further below. */
const McpServerFile = Type.Object(
  {
    name: Type.String({
      pattern: SERVER_NAME.source,
      maxLength: MAX_SERVER_NAME,
      rule: 'at most 64 lower-case letters, digits, "-" and single "_" (never first or last; it prefixes "<name>__<tool>")',
    }),
    url: Type.Optional(Type.String({ pattern: "^https?://", rule: "must be an http:// or https:// URL" })),
    headers: Type.Optional(StringMap),
    timeout_ms: Type.Optional(positive),
    command: Type.Optional(Type.String({ minLength: 1 })),
    args: Type.Optional(Type.Array(Type.String(), { rule: "must be a list of strings" })),
    env: Type.Optional(StringMap),
  },
  {
    additionalProperties: false,
    listKnown: true,
    rule: "must be an object {name, url, headers?, timeout_ms?} (or {name, command, args?, env?, timeout_ms?})",
  },
);
const McpServersFile = Type.Array(McpServerFile, { rule: "must be a list of {name, url, headers?, timeout_ms?}" });

const McpLimitsFile = Type.Object(
  { argument_bytes: Type.Optional(positive), result_bytes: Type.Optional(positive) },
  { additionalProperties: false, listKnown: true, rule: "must be an object {argument_bytes?, result_bytes?}" },
);

type Env = Record<string, string | undefined>;

/**
 * `Bearer ${GITHUB_TOKEN}` → the variable's value; an unset variable is a problem at start, not
 * an empty header. Each value of the map is resolved; each unset reference is one problem.
 */
function resolveEnv(
  map: Record<string, string> | undefined,
  env: Env,
  at: string,
  problems: string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(map ?? {})) {
    out[key] = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      const v = env[name];
      if (v === undefined || v === "")
        problems.push(`${at}.${key}: refers to \${${name}}, which is not set in the environment`);
      return v ?? "";
    });
  }
  return out;
}

/**
 * Reads `mcp_servers` (and `mcp_limits: {argument_bytes, result_bytes}`) from the parsed config
 * file, reporting every mistake at once (`file: path: rule`, a ConfigError). A stdio entry
 * (`command`) runs a program on the gateway's host, so it is refused unless the operator turned
 * it on with `TURNPIKE_MCP_STDIO=on`.
 */
export function parseMcpConfig(file: Record<string, unknown>, env: Env, where: string): McpConfig {
  const rawServers = file.mcp_servers ?? [];
  const rawLimits = file.mcp_limits ?? {};
  const problems = [
    ...configProblems(McpServersFile, rawServers, where, "mcp_servers"),
    ...configProblems(McpLimitsFile, rawLimits, where, "mcp_limits"),
  ];
  refuse(problems);
  const entries = rawServers as Static<typeof McpServersFile>; // conforms: checked just above
  const limits = rawLimits as Static<typeof McpLimitsFile>; // conforms: checked just above
  const stdioOn = env.TURNPIKE_MCP_STDIO === "on";
  const seen = new Set<string>();
  const servers: McpServerConfig[] = [];
  entries.forEach((entry, i) => {
    const at = `${where}: mcp_servers[${i}]`;
    if (seen.has(entry.name)) problems.push(`${at}.name: "${entry.name}" is named twice`);
    seen.add(entry.name);
    const timeoutMs = entry.timeout_ms ?? MCP_DEFAULTS.timeoutMs;
    if (entry.command !== undefined) {
      if (!stdioOn)
        problems.push(
          `${at}: a stdio server ("command") runs a program on this host; set TURNPIKE_MCP_STDIO=on to allow it`,
        );
      if (entry.url !== undefined)
        problems.push(`${at}: either "url" (Streamable HTTP) or "command" (stdio), not both`);
      servers.push({
        kind: "stdio",
        name: entry.name,
        command: entry.command,
        args: entry.args ?? [],
        env: resolveEnv(entry.env, env, `${at}.env`, problems),
        timeoutMs,
      });
      return;
    }
    if (entry.url === undefined || !URL.canParse(entry.url)) {
      problems.push(
        `${at}.url: must be an http:// or https:// URL, got ${entry.url === undefined ? "nothing" : JSON.stringify(entry.url)}`,
      );
      return;
    }
    servers.push({
      kind: "http",
      name: entry.name,
      url: entry.url,
      headers: resolveEnv(entry.headers, env, `${at}.headers`, problems),
      timeoutMs,
    });
  });
  refuse(problems);
  return {
    servers,
    maxArgumentBytes: limits.argument_bytes ?? MCP_DEFAULTS.maxArgumentBytes,
    maxResultBytes: limits.result_bytes ?? MCP_DEFAULTS.maxResultBytes,
  };
}
