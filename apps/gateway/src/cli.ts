#!/usr/bin/env bun
/**
 * `turnpike` — the admin API from a shell, and the commands an operator runs beside the gateway.
 *
 *   turnpike --version
 *   turnpike config check [FILE] | migrate | backup PATH     (cli-ops.ts: no admin key needed)
 *   turnpike keys create --name NAME [--models id,glob*] [--rpm N] [--tpm N] [--budget USD] [--expires ISO] [--tools server__glob,*]
 *   turnpike keys list | get KEY_ID | revoke KEY_ID
 *   turnpike keys update KEY_ID [--name …] [--models …] [--rpm N] [--tpm N] [--budget USD] [--expires ISO] [--tools server__glob,*]
 *   turnpike keys rotate KEY_ID [--grace SECONDS]
 *   turnpike usage [--key KEY_ID] [--model ID] [--since ISO] [--until ISO] [--limit N] [--page-size N] [--group-by key,model,day]
 *   turnpike teams create --name NAME [--models …] [--rpm N] [--tpm N] [--budget USD] | list
 *   turnpike tokens create --name NAME --role ROLE [--team TEAM_ID] [--expires ISO] | list | revoke TOKEN_ID
 *   turnpike audit [--actor ACTOR] [--action ACTION] [--since ISO] [--until ISO] [--limit N]
 *
 * Talks to the gateway at `TURNPIKE_URL` (default http://localhost:8080) with
 * `TURNPIKE_ADMIN_KEY`.
 */
import { parseArgs } from "node:util";
import { VERSION } from "./vocabulary/version";

const USAGE = `usage:
  turnpike --version
  turnpike config check [FILE]   (the configuration a start would read, or FILE: exit 0, or 1 with each mistake)
  turnpike migrate               (brings TURNPIKE_DB or TURNPIKE_DATABASE_URL to this build's schema)
  turnpike backup PATH           (SQLite: an online copy; PostgreSQL: pg_dump's custom format)
  turnpike keys create --name NAME [--models id,glob*] [--rpm N] [--tpm N] [--budget USD] [--expires ISO] [--tools server__glob,*]
  turnpike keys list
  turnpike keys get KEY_ID
  turnpike keys update KEY_ID [--name NAME] [--models id,glob*] [--rpm N] [--tpm N] [--budget USD] [--expires ISO] [--tools server__glob,*]
  turnpike keys rotate KEY_ID [--grace SECONDS]   (the old secret keeps working SECONDS, default 3600)
  turnpike keys revoke KEY_ID
  turnpike usage [--key KEY_ID] [--model ID] [--since ISO] [--until ISO] [--limit N] [--page-size N] [--group-by key,model,day]
                  (records newest first; every page is fetched, up to --limit records; --group-by also team or user)
  turnpike teams create --name NAME [--models id,glob*] [--rpm N] [--tpm N] [--budget USD]
  turnpike teams list
  turnpike tokens create --name NAME --role owner|admin|viewer|team-admin|member [--team TEAM_ID] [--expires ISO]
  turnpike tokens list | revoke TOKEN_ID
  turnpike audit [--actor ACTOR] [--action ACTION] [--since ISO] [--until ISO] [--limit N]
  (keys create also takes --team TEAM_ID)
env: TURNPIKE_URL (default http://localhost:8080), TURNPIKE_ADMIN_KEY (required by the admin commands)`;

export interface CliIO {
  env: Record<string, string | undefined>;
  fetch: typeof fetch;
  out: (line: string) => void;
  err: (line: string) => void;
}

function fail(io: CliIO, message: string): number {
  io.err(printable(message));
  return 2;
}

/**
 * Text safe to write to a terminal: each control character but a line break and a tab (an
 * escape sequence's ESC, a NUL, a carriage return) written as its `\uXXXX` escape. The JSON the CLI prints is escaped already.
 */
export function printable(text: string): string {
  let out = "";
  for (const ch of text) {
    const c = ch.charCodeAt(0);
    const control = (c < 0x20 && c !== 0x0a && c !== 0x09) || (c >= 0x7f && c <= 0x9f);
    out += control ? `\\u${c.toString(16).padStart(4, "0")}` : ch;
  }
  return out;
}

/** Runs one CLI command; returns the exit code. */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  let parsed: ReturnType<typeof parseCli>;
  try {
    parsed = parseCli(argv);
  } catch (e) {
    // An unknown option or a missing value: said, with the usage, not thrown.
    return fail(io, `${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  const [group, verb, arg] = positionals;
  if (values.version) {
    io.out(`turnpike ${VERSION}`);
    return 0;
  }
  if (values.help || !group) {
    io.out(USAGE);
    return values.help ? 0 : 2;
  }
  // Local commands: this machine's configuration and database, no gateway or admin key involved
  // (loaded only for them: the admin commands need none of the gateway's code).
  if (group === "config") {
    if (verb !== "check" || positionals.length > 3) return fail(io, "usage: turnpike config check [FILE]");
    return (await import("./cli-ops")).configCheck(arg, io);
  }
  if (group === "migrate")
    return positionals.length === 1
      ? await (await import("./cli-ops")).migrate(io)
      : fail(io, "usage: turnpike migrate");
  if (group === "backup")
    return positionals.length <= 2
      ? await (await import("./cli-ops")).backup(verb, io)
      : fail(io, "usage: turnpike backup PATH");
  return await adminCommand(group, verb, arg, values, io);
}

function parseCli(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      name: { type: "string" },
      models: { type: "string" },
      tools: { type: "string" },
      rpm: { type: "string" },
      tpm: { type: "string" },
      key: { type: "string" },
      model: { type: "string" },
      since: { type: "string" },
      until: { type: "string" },
      budget: { type: "string" },
      expires: { type: "string" },
      grace: { type: "string" },
      limit: { type: "string" },
      "page-size": { type: "string" },
      "group-by": { type: "string" },
      team: { type: "string" },
      role: { type: "string" },
      actor: { type: "string" },
      action: { type: "string" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean", short: "V" },
    },
  });
}

/** One command of the admin API: its call, its answer printed as JSON; the exit code. */
async function adminCommand(
  group: string,
  verb: string | undefined,
  arg: string | undefined,
  values: ReturnType<typeof parseCli>["values"],
  io: CliIO,
): Promise<number> {
  const base = (io.env.TURNPIKE_URL ?? "http://localhost:8080").replace(/\/$/, "");
  const adminKey = io.env.TURNPIKE_ADMIN_KEY;
  if (!adminKey)
    return fail(io, "TURNPIKE_ADMIN_KEY is not set: the admin key the gateway printed or was started with.");
  /** One admin call: its JSON, or the exit code of its failure (already reported). */
  const request = async (method: string, path: string, body?: unknown): Promise<{ json: unknown } | number> => {
    let res: Response;
    try {
      res = await io.fetch(base + path, {
        method,
        headers: { authorization: `Bearer ${adminKey}`, ...(body ? { "content-type": "application/json" } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    } catch (e) {
      return fail(io, `cannot reach the gateway at ${base}: ${e instanceof Error ? e.message : String(e)}`);
    }
    const text = await res.text();
    if (!res.ok) {
      let message = text;
      try {
        message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text; // the gateway's own error envelope
      } catch {
        // not JSON: show it as it came
      }
      return fail(io, `error ${res.status}: ${message}`);
    }
    return { json: JSON.parse(text) };
  };
  const call = async (method: string, path: string, body?: unknown): Promise<number> => {
    const r = await request(method, path, body);
    if (typeof r === "number") return r;
    io.out(JSON.stringify(r.json, null, 2));
    return 0;
  };
  /** A usage listing, page after page along `next_cursor`, as one list (newest first). */
  const listUsage = async (
    q: URLSearchParams,
    max: number | undefined,
    pageSize: number | undefined,
  ): Promise<number> => {
    const data: unknown[] = [];
    for (let cursor: string | null = null; ; ) {
      const page = new URLSearchParams(q);
      if (cursor) page.set("cursor", cursor);
      const want = Math.min(pageSize ?? 10_000, max === undefined ? 10_000 : max - data.length, 10_000);
      if (max !== undefined || pageSize !== undefined) page.set("limit", String(want));
      const r = await request("GET", `/admin/usage${page.size ? "?" + page : ""}`);
      if (typeof r === "number") return r;
      const body = r.json as { data?: unknown[]; next_cursor?: string | null }; // the admin API's listing shape
      data.push(...(body.data ?? []));
      // An empty page, or a cursor that does not move, ends the listing as surely as none.
      const next = body.next_cursor ?? null;
      if (!next || next === cursor || (body.data ?? []).length === 0 || (max !== undefined && data.length >= max))
        break;
      cursor = next;
    }
    io.out(JSON.stringify({ data }, null, 2));
    return 0;
  };
  const num = (v: string | undefined, name: string): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got ${v}`);
    return n;
  };
  try {
    const fields = () => ({
      ...(values.name ? { name: values.name } : {}),
      ...(values.models
        ? {
            models: values.models
              .split(",")
              .map((m) => m.trim())
              .filter(Boolean),
          }
        : {}),
      ...(values.tools
        ? {
            tools: values.tools
              .split(",")
              .map((t) => t.trim())
              .filter(Boolean),
          }
        : {}),
      ...(values.rpm ? { rpm: num(values.rpm, "rpm") } : {}),
      ...(values.tpm ? { tpm: num(values.tpm, "tpm") } : {}),
      ...(values.budget ? { budget_usd: Number(values.budget) } : {}),
      ...(values.expires ? { expires_at: values.expires } : {}),
    });
    if (group === "keys" && verb === "create") {
      if (!values.name) return fail(io, "keys create needs --name");
      return await call("POST", "/admin/keys", { ...fields(), ...(values.team ? { team_id: values.team } : {}) });
    }
    if (group === "keys" && verb === "list") return await call("GET", "/admin/keys");
    if (group === "keys" && (verb === "get" || verb === "update" || verb === "rotate") && !arg)
      return fail(io, `keys ${verb} needs a KEY_ID`);
    if (group === "keys" && verb === "get") return await call("GET", `/admin/keys/${encodeURIComponent(arg!)}`);
    if (group === "keys" && verb === "update")
      return await call("PATCH", `/admin/keys/${encodeURIComponent(arg!)}`, fields());
    if (group === "keys" && verb === "rotate") {
      return await call(
        "POST",
        `/admin/keys/${encodeURIComponent(arg!)}/rotate`,
        values.grace !== undefined ? { grace_seconds: Number(values.grace) } : {},
      );
    }
    if (group === "keys" && verb === "revoke") {
      if (!arg) return fail(io, "keys revoke needs a KEY_ID");
      return await call("DELETE", `/admin/keys/${encodeURIComponent(arg)}`);
    }
    if (group === "teams" && verb === "create") {
      if (!values.name) return fail(io, "teams create needs --name");
      const { expires_at: _expires, tools: _tools, ...team } = fields();
      return await call("POST", "/admin/teams", team);
    }
    if (group === "teams" && verb === "list") return await call("GET", "/admin/teams");
    if (group === "tokens" && verb === "create") {
      if (!values.name || !values.role) return fail(io, "tokens create needs --name and --role");
      return await call("POST", "/admin/tokens", {
        name: values.name,
        role: values.role,
        ...(values.team ? { team_id: values.team } : {}),
        ...(values.expires ? { expires_at: values.expires } : {}),
      });
    }
    if (group === "tokens" && verb === "list") return await call("GET", "/admin/tokens");
    if (group === "tokens" && verb === "revoke") {
      if (!arg) return fail(io, "tokens revoke needs a TOKEN_ID");
      return await call("DELETE", `/admin/tokens/${encodeURIComponent(arg)}`);
    }
    if (group === "audit") {
      const q = new URLSearchParams();
      if (values.actor) q.set("actor", values.actor);
      if (values.action) q.set("action", values.action);
      if (values.since) q.set("since", values.since);
      if (values.until) q.set("until", values.until);
      if (values.limit) q.set("limit", String(num(values.limit, "limit")));
      return await call("GET", `/admin/audit${q.size ? "?" + q : ""}`);
    }
    if (group === "usage") {
      const q = new URLSearchParams();
      if (values.key) q.set("key_id", values.key);
      if (values.model) q.set("model", values.model);
      if (values.since) q.set("since", values.since);
      if (values.until) q.set("until", values.until);
      if (values["group-by"]) {
        q.set("group_by", values["group-by"]);
        return await call("GET", `/admin/usage?${q}`);
      }
      return await listUsage(q, num(values.limit, "limit"), num(values["page-size"], "page-size"));
    }
  } catch (e) {
    return fail(io, e instanceof Error ? e.message : String(e));
  }
  return fail(io, USAGE);
}

if (import.meta.main) {
  const code = await runCli(process.argv.slice(2), {
    env: process.env,
    fetch,
    out: (l) => console.log(l),
    err: (l) => console.error(l),
  });
  process.exit(code);
}
