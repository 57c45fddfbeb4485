import type { Database } from "bun:sqlite";
import {
  BATCH_GROUP_TABLES,
  BATCH_LINE_QUEUE_INDEXES,
  BATCH_LINE_HOOK_ANSWERS,
  BATCH_LINE_STATE_INDEX,
  BATCH_TABLES,
  batchLineReserve,
  batchFileChunks,
} from "./batch-store";
import { VERSION } from "../vocabulary/version";
import { rollupMigration } from "./usage-rollup";
import { PARTITION_USAGE } from "./usage-partitions";
import { guardrailRollupMigration } from "./guardrail-rollup";

/**
 * Versioned schema changes of the store, applied in order at start-up, each once: the store
 * keeps the versions it has in `schema_version`. A new change is a new entry at the end; an
 * entry that has shipped is never edited.
 */
export interface Migration {
  version: number;
  name: string;
  /** The statements, in SQLite's dialect. */
  sqlite: string;
  /** The same change in PostgreSQL's dialect. */
  postgres: string;
}

/** Migration 12: the same SQL for both databases. */
const GUARDRAIL_COLUMNS = `
ALTER TABLE usage ADD COLUMN guardrail TEXT;
ALTER TABLE keys ADD COLUMN guardrails TEXT;
ALTER TABLE teams ADD COLUMN guardrails TEXT;`;

const MEMBER_SOURCE = `
ALTER TABLE team_members ADD COLUMN source TEXT NOT NULL DEFAULT 'admin';
ALTER TABLE teams ADD COLUMN tools TEXT;
UPDATE team_members SET source = 'sign-on' WHERE (SELECT a.actor FROM audit a WHERE a.action = 'team.member.set' AND a.target = team_members.team_id || '/' || team_members.user_id ORDER BY a.id DESC LIMIT 1) = 'sign-on';`;

/** Migration 16: the same SQL for both databases. */
const TEAM_KEY_RULES = `
ALTER TABLE teams ADD COLUMN key_defaults TEXT;
ALTER TABLE teams ADD COLUMN key_ceilings TEXT;`;

/**
 * The ledger is written on every request and read rarely: each B-tree costs every insert. In
 * SQLite, since version 5, a usage row lives in one tree keyed by (key, time, request id): a
 * key's rows append at its end and the per-key query reads them in order; a per-model query
 * scans (`WITHOUT ROWID` saves the extra rowid tree). Version 1 uses `IF NOT EXISTS` so that a file made before versioning existed is adopted as is.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "keys and usage",
    sqlite: `
CREATE TABLE IF NOT EXISTS keys (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  models TEXT,
  rpm INTEGER,
  tpm INTEGER,
  model_limits TEXT,
  budget_usd REAL,
  expires_at TEXT,
  prev_hash TEXT,
  prev_valid_until TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS usage (
  request_id TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  stream INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cache_read_tokens INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  reasoning_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  status INTEGER NOT NULL,
  upstream_status INTEGER NOT NULL,
  latency_ms REAL NOT NULL,
  aborted INTEGER NOT NULL,
  estimated INTEGER NOT NULL,
  created_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS usage_key_time ON usage (key_id, created_at);`,
    // Times stay ISO 8601 text, as in SQLite, so both stores compare and group them alike; limits
    // are BIGINT, as wide as SQLite's INTEGER (a tpm may pass 2^31).
    postgres: `
CREATE TABLE IF NOT EXISTS keys (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  models TEXT,
  rpm BIGINT,
  tpm BIGINT,
  model_limits TEXT,
  budget_usd DOUBLE PRECISION,
  expires_at TEXT,
  prev_hash TEXT,
  prev_valid_until TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS usage (
  request_id TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  stream BOOLEAN NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cache_read_tokens INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  reasoning_tokens INTEGER NOT NULL,
  cost_usd DOUBLE PRECISION NOT NULL,
  status INTEGER NOT NULL,
  upstream_status INTEGER NOT NULL,
  latency_ms DOUBLE PRECISION NOT NULL,
  aborted BOOLEAN NOT NULL,
  estimated BOOLEAN NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS usage_key_time ON usage (key_id, created_at);`,
  },
  {
    version: 2,
    name: "stored responses",
    // One row per stored Responses-format reply; read by id and key, purged by expiry.
    sqlite: `
CREATE TABLE responses (
  id TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  response TEXT NOT NULL,
  input_items TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX responses_expiry ON responses (expires_at);`,
    postgres: `
CREATE TABLE responses (
  id TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  response TEXT NOT NULL,
  input_items TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX responses_expiry ON responses (expires_at);`,
  },
  {
    version: 3,
    name: "cache write TTLs, upstream model names, per-key prompt caching",
    // Cache writes are priced by TTL, so the one-hour share is kept beside the total; the
    // vendor's own name of the model that answered; a key's own prompt_cache setting (null = the
    // model's). Added columns have defaults, so earlier rows read as before.
    sqlite: `
ALTER TABLE usage ADD COLUMN cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage ADD COLUMN upstream_model TEXT;
ALTER TABLE keys ADD COLUMN prompt_cache TEXT;`,
    postgres: `
ALTER TABLE usage ADD COLUMN cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage ADD COLUMN upstream_model TEXT;
ALTER TABLE keys ADD COLUMN prompt_cache TEXT;`,
  },
  {
    version: 4,
    name: "deployments, attempts and the model asked for",
    // Which deployment served, after how many attempts, and the catalog id asked for when a
    // fallback served under another. Nullable: rows written before read as before.
    sqlite: `
ALTER TABLE usage ADD COLUMN deployment TEXT;
ALTER TABLE usage ADD COLUMN attempts INTEGER;
ALTER TABLE usage ADD COLUMN requested_model TEXT;`,
    postgres: `
ALTER TABLE usage ADD COLUMN deployment TEXT;
ALTER TABLE usage ADD COLUMN attempts INTEGER;
ALTER TABLE usage ADD COLUMN requested_model TEXT;`,
  },
  {
    version: 5,
    name: "usage keyed by key, time and request id",
    // One B-tree instead of two: the row's key is (key_id, created_at, request_id), which the
    // per-key queries read in order, so the (key_id, created_at) index goes. A record replayed is
    // the same key, time and id, so `INSERT OR IGNORE` still drops it. The embedded store writes
    // the ledger on the request path, where the second tree cost about 3 µs a row (half the
    // insert; bench/README.md). The columns keep their order: rows are inserted by position.
    sqlite: `
CREATE TABLE usage_v5 (
  request_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  stream INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cache_read_tokens INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  reasoning_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  status INTEGER NOT NULL,
  upstream_status INTEGER NOT NULL,
  latency_ms REAL NOT NULL,
  aborted INTEGER NOT NULL,
  estimated INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0,
  upstream_model TEXT,
  deployment TEXT,
  attempts INTEGER,
  requested_model TEXT,
  PRIMARY KEY (key_id, created_at, request_id)
) WITHOUT ROWID;
INSERT INTO usage_v5 SELECT * FROM usage;
DROP TABLE usage;
ALTER TABLE usage_v5 RENAME TO usage;`,
    // PostgreSQL's ledger is written by the journal in batches, off the request path, and its
    // `ON CONFLICT (request_id)` needs the id unique on its own: its table stays as it is.
    postgres: "SELECT 1",
  },
  {
    version: 6,
    name: "MCP: a key's tool allow-list, a tool call's bytes",
    // `tools` is JSON text like `models` (null = no MCP tools); an MCP call's record carries the
    // bytes of its arguments and result. Nullable: keys and rows written before read as before.
    sqlite: `
ALTER TABLE keys ADD COLUMN tools TEXT;
ALTER TABLE usage ADD COLUMN bytes_in INTEGER;
ALTER TABLE usage ADD COLUMN bytes_out INTEGER;`,
    postgres: `
ALTER TABLE keys ADD COLUMN tools TEXT;
ALTER TABLE usage ADD COLUMN bytes_in INTEGER;
ALTER TABLE usage ADD COLUMN bytes_out INTEGER;`,
  },
  {
    version: 7,
    name: "the prompt cache a session left behind",
    // The deployment an agent session moved away from (its prompt cache stays there), on the
    // first turn served elsewhere (dispatch/session-turn.ts). Nullable: other rows read as before.
    sqlite: "ALTER TABLE usage ADD COLUMN cache_reset_from TEXT;",
    postgres: "ALTER TABLE usage ADD COLUMN cache_reset_from TEXT;",
  },
  {
    version: 8,
    name: "requests in flight and instance heartbeats",
    // Only a shared store has other instances to bill a dead one's requests (src/metering/postgres-inflight.ts).
    // Unlogged: a row lives for one request and is written on its path, so it skips the WAL and
    // its flush; a PostgreSQL crash empties the book, and the live instances' journals still hold
    // every record (only a request in flight on an instance that dies during that crash is lost).
    sqlite: "SELECT 1",
    postgres: `
CREATE UNLOGGED TABLE inflight (
  request_id TEXT PRIMARY KEY,
  instance TEXT NOT NULL,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  stream BOOLEAN NOT NULL,
  input_tokens INTEGER NOT NULL,
  cost_usd DOUBLE PRECISION NOT NULL,
  reserved_usd DOUBLE PRECISION NOT NULL,
  budgets TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX inflight_instance ON inflight (instance);
CREATE UNLOGGED TABLE instances (
  id TEXT PRIMARY KEY,
  beat_at TIMESTAMPTZ NOT NULL
);`,
  },
  {
    version: 9,
    name: "teams, users, roles, admin tokens and the audit log",
    // Keys made before teams existed land in the default team, which has no limits of its own, so
    // nothing changes for them (teams/team-store.ts). The audit log is append-only: written by
    // the admin API, never updated. Team limits are float8 in PostgreSQL (BIGINT reads back as text).
    sqlite: `
CREATE TABLE teams (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, models TEXT, rpm INTEGER, tpm INTEGER, budget_usd REAL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE users (id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, name TEXT, subject TEXT UNIQUE, role TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE team_members (team_id TEXT NOT NULL, user_id TEXT NOT NULL, role TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (team_id, user_id));
CREATE TABLE admin_tokens (id TEXT PRIMARY KEY, name TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL, role TEXT NOT NULL, team_id TEXT, expires_at TEXT, created_by TEXT NOT NULL, created_at TEXT NOT NULL, revoked_at TEXT);
CREATE TABLE audit (id TEXT PRIMARY KEY, at TEXT NOT NULL, actor TEXT NOT NULL, address TEXT, action TEXT NOT NULL, target TEXT, before TEXT, after TEXT);
CREATE INDEX audit_time ON audit (at);
CREATE TABLE sessions (id TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, user_id TEXT NOT NULL, csrf TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT NOT NULL, revoked_at TEXT);
ALTER TABLE keys ADD COLUMN team_id TEXT;
ALTER TABLE keys ADD COLUMN user_id TEXT;
INSERT INTO teams (id, name, created_at, updated_at) VALUES ('team_default', 'default', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
UPDATE keys SET team_id = 'team_default';`,
    postgres: `
CREATE TABLE teams (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, models TEXT, rpm DOUBLE PRECISION, tpm DOUBLE PRECISION, budget_usd DOUBLE PRECISION, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE users (id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, name TEXT, subject TEXT UNIQUE, role TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE team_members (team_id TEXT NOT NULL, user_id TEXT NOT NULL, role TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (team_id, user_id));
CREATE TABLE admin_tokens (id TEXT PRIMARY KEY, name TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL, role TEXT NOT NULL, team_id TEXT, expires_at TEXT, created_by TEXT NOT NULL, created_at TEXT NOT NULL, revoked_at TEXT);
CREATE TABLE audit (id TEXT PRIMARY KEY, at TEXT NOT NULL, actor TEXT NOT NULL, address TEXT, action TEXT NOT NULL, target TEXT, before TEXT, after TEXT);
CREATE INDEX audit_time ON audit (at);
CREATE TABLE sessions (id TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, user_id TEXT NOT NULL, csrf TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT NOT NULL, revoked_at TEXT);
ALTER TABLE keys ADD COLUMN team_id TEXT;
ALTER TABLE keys ADD COLUMN user_id TEXT;
INSERT INTO teams (id, name, created_at, updated_at) VALUES ('team_default', 'default', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
UPDATE keys SET team_id = 'team_default';`,
  },
  {
    version: 10,
    name: "batches: files, jobs and their lines",
    sqlite: BATCH_TABLES,
    postgres: BATCH_TABLES,
  },
  {
    version: 11,
    name: "batches: lines sent to the upstreams' own batch APIs",
    sqlite: BATCH_GROUP_TABLES,
    postgres: BATCH_GROUP_TABLES,
  },
  {
    version: 12,
    name: "team memberships remember who gave them; teams' MCP tool allow-lists",
    // A membership sign-on gave is taken away when the claim stops naming its team; one given by
    // hand is kept (docs/teams.md, "Sign-on"). Memberships from before: sign-on's where the last
    // audit record that set them was sign-on's, else by hand. A team's `tools` (JSON list, null =
    // no restriction of its own) narrows its keys' MCP allow-lists (docs/mcp.md).
    sqlite: MEMBER_SOURCE,
    postgres: MEMBER_SOURCE,
  },
  {
    version: 13,
    name: "batches: lines indexed by state, so a batch's counts read no line",
    sqlite: BATCH_LINE_STATE_INDEX,
    postgres: BATCH_LINE_STATE_INDEX,
  },
  {
    version: 14,
    name: "batches: a file's content in chunks, written and read one at a time",
    sqlite: batchFileChunks("BLOB"),
    postgres: batchFileChunks("BYTEA"),
  },
  {
    version: 15,
    name: "batches: the next line to run found by an index, not by reading the pending lines",
    sqlite: BATCH_LINE_QUEUE_INDEXES,
    postgres: BATCH_LINE_QUEUE_INDEXES,
  },
  {
    version: 16,
    name: "teams: defaults and ceilings of the keys made in them",
    // JSON objects (teams/key-ceilings.ts), null = none: a member's key gets at most what an
    // admin granted its team (docs/teams.md, "What a member's key may get").
    sqlite: TEAM_KEY_RULES,
    postgres: TEAM_KEY_RULES,
  },
  {
    version: 17,
    name: "guardrails: what a request's policies found (never a value), and the policies keys and teams name",
    // JSON texts, nullable: rows and keys from before read as before (docs/guardrails.md).
    sqlite: GUARDRAIL_COLUMNS,
    postgres: GUARDRAIL_COLUMNS,
  },
  {
    version: 18,
    name: "usage rolled up per hour, day and month; usage indexed by time",
    // Charts and totals read the rollups, not the raw rows (storage/usage-rollup.ts); the rows
    // already there are rolled up here, once. The time index serves the newest-first listings.
    sqlite: rollupMigration("sqlite"),
    postgres: rollupMigration("postgres"),
  },
  {
    version: 19,
    name: "batches: the budget a line sent to a vendor's batch API holds in the shared spend store",
    // Null for every line before: nothing of theirs is held (storage/batch-store.ts `reserved_usd`).
    sqlite: batchLineReserve("REAL"),
    postgres: batchLineReserve("DOUBLE PRECISION"),
  },
  {
    version: 20,
    name: "usage: how many times a cut stream was continued",
    // Nullable: rows from before, and requests that never streamed through a route, read as before.
    sqlite: "ALTER TABLE usage ADD COLUMN continuations INTEGER;",
    postgres: "ALTER TABLE usage ADD COLUMN continuations INTEGER;",
  },
  {
    version: 21,
    name: "PostgreSQL: usage partitioned by month",
    // Retention drops a whole month's table instead of deleting its rows (storage/usage-partitions.ts);
    // the rows already there are copied into their months. The embedded store has no partitions.
    sqlite: "SELECT 1",
    postgres: PARTITION_USAGE,
  },
  {
    version: 22,
    name: "guardrail notes rolled up per day, key, policy, category and action",
    // GET /admin/guardrails reads these, not the raw rows (storage/guardrail-rollup.ts); the notes
    // already there are rolled up here, once.
    sqlite: guardrailRollupMigration("sqlite"),
    postgres: guardrailRollupMigration("postgres"),
  },
  {
    version: 23,
    name: "batches: a line's external guardrail hook answers, asked once per line",
    // Null for every line before: such a line asks its hooks again, as it did (storage/batch-store.ts `hook_answers`).
    sqlite: BATCH_LINE_HOOK_ANSWERS,
    postgres: BATCH_LINE_HOOK_ANSWERS,
  },
];

/** The schema version this build brings a database to: the last migration's. */
export const SCHEMA_VERSION: number = MIGRATIONS.at(-1)?.version ?? 0;

/**
 * A database upgraded by a newer release than this build: its tables have columns this build
 * does not write, so it stops before it reads or writes anything (the alternative is an insert
 * failing mid-request with a column count). Names both schema versions and the way back.
 */
export class SchemaTooNewError extends Error {
  constructor(
    readonly databaseVersion: number,
    readonly buildVersion: number,
  ) {
    super(
      `This database is at schema version ${databaseVersion}, newer than this build knows: Turnpike ${VERSION} reads schema versions up to ${buildVersion}. Run the release that upgraded it (or a newer one), or restore the backup taken before the upgrade (the user guide's "Upgrading", site/operations/upgrading.md).`,
    );
    this.name = "SchemaTooNewError";
  }
}

/** Refuses a database whose schema is newer than `migrations` reach ({@link SchemaTooNewError}). */
export function checkNotNewer(current: number, migrations: readonly Migration[]): void {
  const known = migrations.at(-1)?.version ?? 0;
  if (current > known) throw new SchemaTooNewError(current, known);
}

/**
 * Brings a SQLite database up to the newest version: each missing migration in its own
 * transaction, together with its `schema_version` row. Returns the versions applied; a database
 * newer than `migrations` is refused ({@link SchemaTooNewError}).
 */
export function migrateSqlite(db: Database, migrations: readonly Migration[] = MIGRATIONS): number[] {
  db.exec(
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
  );
  const row = db.query<{ v: number | null }, []>("SELECT MAX(version) AS v FROM schema_version").get();
  const current = row?.v ?? 0;
  checkNotNewer(current, migrations);
  const applied: number[] = [];
  for (const m of migrations) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sqlite);
      db.query("INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)").run(
        m.version,
        m.name,
        new Date().toISOString(),
      );
    })();
    applied.push(m.version);
  }
  return applied;
}
