/**
 * The `turnpike` commands that work on this machine's files and database rather than through the
 * admin API (docs/operations.md): `config check`, `migrate`, `backup`. Each reads the same
 * environment the gateway would start with (`TURNPIKE_CONFIG`, `TURNPIKE_DB`, `TURNPIKE_DATABASE_URL`).
 */
import { type Config, loadConfig } from "./config/config";
import { buildCatalog } from "./dispatch/catalog";
import { buildRouter } from "./dispatch/deployments";
import { buildUpstreams } from "./dispatch/upstreams";
import { backupPostgres, backupSqlite } from "./storage/backup";
import { migrateStore } from "./storage/migrate-store";
import { ConfigError } from "./vocabulary/config-error";

/** Where a command writes, and what it reads. */
export interface OpsIO {
  env: Record<string, string | undefined>;
  out: (line: string) => void;
  err: (line: string) => void;
}

/** The mistakes of an error: a ConfigError's list, or its message. */
const problemsOf = (e: unknown): readonly string[] =>
  e instanceof ConfigError ? e.problems : [e instanceof Error ? e.message : String(e)];

/** The configuration as a start would read it, or the exit code of its mistakes (already reported). */
function configOrFail(io: OpsIO, what: string): Config | number {
  try {
    return loadConfig(io.env);
  } catch (e) {
    const problems = problemsOf(e);
    io.err(`${what}: ${problems.length === 1 ? "a mistake" : `${problems.length} mistakes`} in the configuration:`);
    for (const p of problems) io.err(`  ${p}`);
    return 1;
  }
}

/**
 * `turnpike config check [FILE]`: every mistake a start would refuse (the file's and the
 * environment's, and those of the catalog and the routes built from them), one line each with its
 * file, line and column (YAML), path and rule; exit 0 when there are none, 1 when there are.
 */
export function configCheck(file: string | undefined, io: OpsIO): number {
  const env = file ? { ...io.env, TURNPIKE_CONFIG: file } : io.env;
  const config = configOrFail({ ...io, env }, "config check");
  if (typeof config === "number") return config;
  try {
    // What boot builds from the configuration: a mistake only these find is a mistake of start-up too.
    const catalog = buildCatalog(config.models, config.vendors);
    const upstreams = buildUpstreams(config.vendors, "http://127.0.0.1:0");
    buildRouter(catalog, upstreams, config.models, config.routing, config.configFile ?? "config");
  } catch (e) {
    const problems = problemsOf(e);
    io.err(
      `config check: ${problems.length === 1 ? "a mistake" : `${problems.length} mistakes`} in the configuration:`,
    );
    for (const p of problems) io.err(`  ${p}`);
    return 1;
  }
  const custom = config.models.length;
  io.out(
    `${config.configFile ?? "(no config file: built-in catalog)"}: valid — ${custom} model row${custom === 1 ? "" : "s"}, ${config.vendors.length} vendors, ${config.mcp.servers.length} MCP server${config.mcp.servers.length === 1 ? "" : "s"}.`,
  );
  return 0;
}

/** `turnpike migrate`: brings the store to this build's schema and says which migrations it applied. */
export async function migrate(io: OpsIO): Promise<number> {
  const config = configOrFail(io, "migrate");
  if (typeof config === "number") return config;
  try {
    const r = await migrateStore({ databaseUrl: config.scaleOut.databaseUrl, dbPath: config.dbPath });
    if (r.applied.length === 0) {
      io.out(`${r.store}: at schema version ${r.to}, this build's; nothing to apply.`);
      return 0;
    }
    io.out(`${r.store}: schema version ${r.from} → ${r.to}; applied:`);
    for (const m of r.applied) io.out(`  ${m.version}  ${m.name}`);
    return 0;
  } catch (e) {
    io.err(`migrate: ${problemsOf(e).join("; ")}`);
    return 1;
  }
}

/**
 * `turnpike backup PATH`: SQLite, an online copy by `VACUUM INTO`; PostgreSQL, `pg_dump` in the
 * custom format (storage/backup.ts). Safe while the gateway runs; never overwrites PATH.
 */
export async function backup(path: string | undefined, io: OpsIO): Promise<number> {
  if (!path) {
    io.err("backup needs a PATH to write the copy to (a file that does not exist yet)");
    return 2;
  }
  const config = configOrFail(io, "backup");
  if (typeof config === "number") return config;
  try {
    if (config.scaleOut.databaseUrl) {
      const r = await backupPostgres(config.scaleOut.databaseUrl, path);
      io.out(
        `PostgreSQL database backed up to ${r.path} (${r.bytes} bytes, pg_dump custom format; restore with pg_restore).`,
      );
    } else {
      const r = backupSqlite(config.dbPath, path);
      io.out(`${config.dbPath} backed up to ${r.path} (${r.bytes} bytes, schema version ${r.schemaVersion}).`);
    }
    return 0;
  } catch (e) {
    io.err(`backup: ${problemsOf(e).join("; ")}`);
    return 1;
  }
}
