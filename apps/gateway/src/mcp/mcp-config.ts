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

/** A server's name is the first part of every name it offers: `<server>__<tool>`. */
const SERVER_NAME = /^[a-z0-9](?:[a-z0-9-]|_(?!_))*$/;

type Env = Record<string, string | undefined>;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `Bearer ${GITHUB_TOKEN}` → the variable's value; an unset variable is an error at start, not an empty header. */
function resolveEnv(value: string, env: Env, at: string): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const v = env[name];
    if (v === undefined || v === "") throw new Error(`${at}: refers to \${${name}}, which is not set in the environment`);
    return v;
  });
}

function stringMap(raw: unknown, env: Env, at: string): Record<string, string> {
  if (raw === undefined) return {};
  if (!isRecord(raw)) throw new Error(`${at}: must be a map of names to strings`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v !== "string") throw new Error(`${at}.${k}: must be a string, got ${JSON.stringify(v)}`);
    out[k] = resolveEnv(v, env, `${at}.${k}`);
  }
  return out;
}

function positiveInt(raw: unknown, fallback: number, at: string): number {
  if (raw === undefined) return fallback;
  if (typeof raw !== "number" || !Number.isInteger(raw) || raw <= 0) throw new Error(`${at}: must be a positive whole number, got ${JSON.stringify(raw)}`);
  return raw;
}

/**
 * Reads `mcp_servers` (and `mcp_limits: {argument_bytes, result_bytes}`) from the parsed config
 * file. A stdio entry (`command`) runs a program on the gateway's host, so it is refused unless
 * the operator turned it on with `TURNPIKE_MCP_STDIO=on`.
 */
export function parseMcpConfig(file: Record<string, unknown>, env: Env, where: string): McpConfig {
  const raw = file.mcp_servers ?? [];
  if (!Array.isArray(raw)) throw new Error(`${where}: "mcp_servers" must be a list of {name, url, headers?, timeout_ms?}`);
  const stdioOn = env.TURNPIKE_MCP_STDIO === "on";
  const seen = new Set<string>();
  const servers = raw.map((entry: unknown, i): McpServerConfig => {
    const at = `${where}: mcp_servers[${i}]`;
    if (!isRecord(entry)) throw new Error(`${at}: must be an object {name, url, headers?, timeout_ms?}`);
    const name = entry.name;
    if (typeof name !== "string" || !SERVER_NAME.test(name)) {
      throw new Error(`${at}.name: lower-case letters, digits, "-" and single "_" (it prefixes "<name>__<tool>"), got ${JSON.stringify(name)}`);
    }
    if (seen.has(name)) throw new Error(`${at}.name: "${name}" is named twice`);
    seen.add(name);
    const timeoutMs = positiveInt(entry.timeout_ms, MCP_DEFAULTS.timeoutMs, `${at}.timeout_ms`);
    if (entry.command !== undefined) {
      if (!stdioOn) throw new Error(`${at}: a stdio server ("command") runs a program on this host; set TURNPIKE_MCP_STDIO=on to allow it`);
      if (typeof entry.command !== "string" || entry.command === "") throw new Error(`${at}.command: must be a non-empty string`);
      const args = entry.args ?? [];
      if (!Array.isArray(args) || !args.every((a) => typeof a === "string")) throw new Error(`${at}.args: must be a list of strings`);
      return { kind: "stdio", name, command: entry.command, args, env: stringMap(entry.env, env, `${at}.env`), timeoutMs };
    }
    const url = entry.url;
    if (typeof url !== "string" || !/^https?:\/\//.test(url) || !URL.canParse(url)) throw new Error(`${at}.url: must be an http:// or https:// URL, got ${JSON.stringify(url)}`);
    return { kind: "http", name, url, headers: stringMap(entry.headers, env, `${at}.headers`), timeoutMs };
  });
  const limits = file.mcp_limits ?? {};
  if (!isRecord(limits)) throw new Error(`${where}: "mcp_limits" must be an object {argument_bytes?, result_bytes?}`);
  return {
    servers,
    maxArgumentBytes: positiveInt(limits.argument_bytes, MCP_DEFAULTS.maxArgumentBytes, `${where}: mcp_limits.argument_bytes`),
    maxResultBytes: positiveInt(limits.result_bytes, MCP_DEFAULTS.maxResultBytes, `${where}: mcp_limits.result_bytes`),
  };
}
