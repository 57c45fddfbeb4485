import type { Store } from "../storage/store";
import type { SqlRunner, SqlValue } from "../storage/sql-runner";
import type { OrgRole, Role, TeamRole } from "./roles";

/** The team every key made before teams existed belongs to; it has no limits of its own. */
export const DEFAULT_TEAM_ID = "team_default";

/** A write refused by a unique constraint, in SQLite's words or PostgreSQL's (SQLSTATE 23505). */
export function isUniqueViolation(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const errno = (e as { errno?: unknown }).errno; // Bun's PostgreSQL errors carry the SQLSTATE here
  return errno === "23505" || /UNIQUE constraint failed|violates unique constraint/.test(e.message);
}

/**
 * What a team says about the keys made in it (docs/teams.md, "What a member's key may get"), as
 * `key_defaults` (fill a field a key is made without) and `key_ceilings` (the most anyone but an
 * organisation admin may ask for); teams/key-ceilings.ts applies them. `lifetime_days`: the key
 * expires that many days after it is made.
 */
export interface KeyRules {
  models?: string[] | null;
  tools?: string[] | null;
  rpm?: number | null;
  tpm?: number | null;
  budget_usd?: number | null;
  lifetime_days?: number | null;
}

export interface Team {
  id: string;
  name: string;
  /** Allowed model ids or `*` globs; null = every model (a key's own list applies on top). */
  models: string[] | null;
  rpm: number | null;
  tpm: number | null;
  /** Monthly budget in USD for the sum of the team's keys' spend; null = none. */
  budget_usd: number | null;
  /**
   * MCP tools its keys may list and call (`<server>__<glob>`, `*`), on top of each key's own list;
   * null or absent = the team adds no restriction.
   */
  tools?: string[] | null;
  /** What a key made in the team gets for a field it is made without (teams/key-ceilings.ts); null = nothing. */
  key_defaults?: KeyRules | null;
  /** The most a key made or changed by anyone but an organisation admin may get; null = the team's own lists only. */
  key_ceilings?: KeyRules | null;
  /** Guardrail policies every key of the team runs, on top of each key's own (docs/guardrails.md); null = none. */
  guardrails?: string[] | null;
  created_at: string;
  updated_at: string;
}

export interface User {
  id: string;
  email: string;
  name: string | null;
  /** The identity provider's `sub`, for a user made by single sign-on. */
  subject: string | null;
  /** Organisation-wide role; null = only the roles of its teams. */
  role: OrgRole | null;
  created_at: string;
  updated_at: string;
}

/** Who gave a membership: an admin (kept until removed by hand) or sign-on (kept while the claim names its team). */
export type MemberSource = "admin" | "sign-on";

export interface Membership {
  team_id: string;
  user_id: string;
  role: TeamRole;
  source: MemberSource;
  created_at: string;
}

export interface AdminToken {
  id: string;
  name: string;
  /** sha256 of the secret, hex. */
  hash: string;
  prefix: string;
  role: Role;
  /** The team a team-admin, member or viewer token acts in; null for organisation roles. */
  team_id: string | null;
  expires_at: string | null;
  created_by: string;
  created_at: string;
  revoked_at: string | null;
}

export interface AuditRecord {
  id: string;
  at: string;
  actor: string;
  address: string | null;
  action: string;
  target: string | null;
  before: unknown;
  after: unknown;
}

/** A dashboard session made by sign-on: the cookie's secret is stored hashed. */
export interface Session {
  id: string;
  hash: string;
  user_id: string;
  /** The token state-changing calls must echo in `x-csrf-token`. */
  csrf: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

export interface AuditFilter {
  actor?: string;
  action?: string;
  /** From this instant (ISO), included. */
  since?: string;
  /** Before this instant (ISO). */
  until?: string;
  /** After this record in the log's order (newest first): the last of the previous page. */
  before?: { at: string; id: string };
  limit: number;
}

type Row<T, J extends keyof T> = Omit<T, J> & { [K in J]: string | null };

const TEAM_COLS = [
  "id",
  "name",
  "models",
  "rpm",
  "tpm",
  "budget_usd",
  "tools",
  "key_defaults",
  "key_ceilings",
  "guardrails",
  "created_at",
  "updated_at",
] as const;
const USER_COLS = ["id", "email", "name", "subject", "role", "created_at", "updated_at"] as const;
const TOKEN_COLS = [
  "id",
  "name",
  "hash",
  "prefix",
  "role",
  "team_id",
  "expires_at",
  "created_by",
  "created_at",
  "revoked_at",
] as const;

const marks = (n: number) => Array.from({ length: n }, () => "?").join(", ");
const parse = <T>(s: string | null): T | null => (s === null ? null : (JSON.parse(s) as T)); // written by this store as JSON of T

type TeamRow = Row<Team, "models" | "tools" | "key_defaults" | "key_ceilings" | "guardrails">;
const toTeam = (r: TeamRow): Team => ({
  ...r,
  models: parse<string[]>(r.models),
  tools: parse<string[]>(r.tools),
  key_defaults: parse<KeyRules>(r.key_defaults),
  key_ceilings: parse<KeyRules>(r.key_ceilings),
  guardrails: parse<string[]>(r.guardrails),
  rpm: r.rpm === null ? null : Number(r.rpm),
  tpm: r.tpm === null ? null : Number(r.tpm),
  budget_usd: r.budget_usd === null ? null : Number(r.budget_usd),
});
const teamValues = (t: Team): SqlValue[] => [
  t.id,
  t.name,
  t.models === null ? null : JSON.stringify(t.models),
  t.rpm,
  t.tpm,
  t.budget_usd,
  t.tools ? JSON.stringify(t.tools) : null,
  t.key_defaults ? JSON.stringify(t.key_defaults) : null,
  t.key_ceilings ? JSON.stringify(t.key_ceilings) : null,
  t.guardrails?.length ? JSON.stringify(t.guardrails) : null,
  t.created_at,
  t.updated_at,
];
const userValues = (u: User): SqlValue[] => [u.id, u.email, u.name, u.subject, u.role, u.created_at, u.updated_at];
const tokenValues = (t: AdminToken): SqlValue[] => [
  t.id,
  t.name,
  t.hash,
  t.prefix,
  t.role,
  t.team_id,
  t.expires_at,
  t.created_by,
  t.created_at,
  t.revoked_at,
];
const toAudit = (r: Row<AuditRecord, "before" | "after">): AuditRecord => ({
  ...r,
  before: parse<unknown>(r.before),
  after: parse<unknown>(r.after),
});

/**
 * Teams, users, their memberships, named admin tokens and the audit log, in the store's own
 * database (SQLite or PostgreSQL, so shared by every instance on one database). Written only by
 * the admin API and sign-on: rare, so plain statements.
 */
export class TeamStore {
  constructor(private readonly db: SqlRunner) {}

  async listTeams(): Promise<Team[]> {
    return (await this.db.all<TeamRow>(`SELECT ${TEAM_COLS.join(", ")} FROM teams ORDER BY created_at, id`)).map(
      toTeam,
    );
  }

  async team(id: string): Promise<Team | undefined> {
    const [r] = await this.db.all<TeamRow>(`SELECT ${TEAM_COLS.join(", ")} FROM teams WHERE id = ?`, [id]);
    return r && toTeam(r);
  }

  async teamByName(name: string): Promise<Team | undefined> {
    const [r] = await this.db.all<TeamRow>(`SELECT ${TEAM_COLS.join(", ")} FROM teams WHERE name = ?`, [name]);
    return r && toTeam(r);
  }

  async createTeam(t: Team): Promise<void> {
    await this.db.run(`INSERT INTO teams (${TEAM_COLS.join(", ")}) VALUES (${marks(TEAM_COLS.length)})`, teamValues(t));
  }

  async updateTeam(t: Team): Promise<void> {
    const [id, ...rest] = teamValues(t);
    await this.db.run(
      `UPDATE teams SET ${TEAM_COLS.slice(1)
        .map((c) => `${c} = ?`)
        .join(", ")} WHERE id = ?`,
      [...rest, id ?? null],
    );
  }

  async deleteTeam(id: string): Promise<void> {
    await this.db.run("DELETE FROM team_members WHERE team_id = ?", [id]);
    await this.db.run("DELETE FROM teams WHERE id = ?", [id]);
  }

  async listUsers(): Promise<User[]> {
    return this.db.all<User>(`SELECT ${USER_COLS.join(", ")} FROM users ORDER BY created_at, id`);
  }

  async user(id: string): Promise<User | undefined> {
    return (await this.db.all<User>(`SELECT ${USER_COLS.join(", ")} FROM users WHERE id = ?`, [id]))[0];
  }

  async userBy(field: "email" | "subject", value: string): Promise<User | undefined> {
    return (await this.db.all<User>(`SELECT ${USER_COLS.join(", ")} FROM users WHERE ${field} = ?`, [value]))[0];
  }

  async createUser(u: User): Promise<void> {
    await this.db.run(`INSERT INTO users (${USER_COLS.join(", ")}) VALUES (${marks(USER_COLS.length)})`, userValues(u));
  }

  async updateUser(u: User): Promise<void> {
    const [id, ...rest] = userValues(u);
    await this.db.run(
      `UPDATE users SET ${USER_COLS.slice(1)
        .map((c) => `${c} = ?`)
        .join(", ")} WHERE id = ?`,
      [...rest, id ?? null],
    );
  }

  async deleteUser(id: string): Promise<void> {
    await this.db.run("DELETE FROM team_members WHERE user_id = ?", [id]);
    await this.db.run("UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL", [
      new Date().toISOString(),
      id,
    ]);
    await this.db.run("DELETE FROM users WHERE id = ?", [id]);
  }

  members(teamId: string): Promise<Membership[]> {
    return this.db.all<Membership>(
      "SELECT team_id, user_id, role, source, created_at FROM team_members WHERE team_id = ? ORDER BY created_at, user_id",
      [teamId],
    );
  }

  membershipsOf(userId: string): Promise<Membership[]> {
    return this.db.all<Membership>(
      "SELECT team_id, user_id, role, source, created_at FROM team_members WHERE user_id = ? ORDER BY team_id",
      [userId],
    );
  }

  /** Adds a member, or changes the role of one already there. */
  async setMember(m: Membership): Promise<void> {
    await this.db.run("DELETE FROM team_members WHERE team_id = ? AND user_id = ?", [m.team_id, m.user_id]);
    await this.db.run("INSERT INTO team_members (team_id, user_id, role, source, created_at) VALUES (?, ?, ?, ?, ?)", [
      m.team_id,
      m.user_id,
      m.role,
      m.source,
      m.created_at,
    ]);
  }

  async removeMember(teamId: string, userId: string): Promise<void> {
    await this.db.run("DELETE FROM team_members WHERE team_id = ? AND user_id = ?", [teamId, userId]);
  }

  async createToken(t: AdminToken): Promise<void> {
    await this.db.run(
      `INSERT INTO admin_tokens (${TOKEN_COLS.join(", ")}) VALUES (${marks(TOKEN_COLS.length)})`,
      tokenValues(t),
    );
  }

  listTokens(): Promise<AdminToken[]> {
    return this.db.all<AdminToken>(`SELECT ${TOKEN_COLS.join(", ")} FROM admin_tokens ORDER BY created_at, id`);
  }

  async token(id: string): Promise<AdminToken | undefined> {
    return (await this.db.all<AdminToken>(`SELECT ${TOKEN_COLS.join(", ")} FROM admin_tokens WHERE id = ?`, [id]))[0];
  }

  async tokenByHash(hash: string): Promise<AdminToken | undefined> {
    return (
      await this.db.all<AdminToken>(`SELECT ${TOKEN_COLS.join(", ")} FROM admin_tokens WHERE hash = ?`, [hash])
    )[0];
  }

  async revokeToken(id: string, at: string): Promise<void> {
    await this.db.run("UPDATE admin_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", [at, id]);
  }

  async createSession(x: Session): Promise<void> {
    await this.db.run(
      "INSERT INTO sessions (id, hash, user_id, csrf, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      [x.id, x.hash, x.user_id, x.csrf, x.created_at, x.expires_at, x.revoked_at],
    );
  }

  async sessionByHash(hash: string): Promise<Session | undefined> {
    return (
      await this.db.all<Session>(
        "SELECT id, hash, user_id, csrf, created_at, expires_at, revoked_at FROM sessions WHERE hash = ?",
        [hash],
      )
    )[0];
  }

  /** Ends one session, or (with `userId`) every live session of a user. */
  async revokeSessions(at: string, by: { id: string } | { userId: string }): Promise<void> {
    if ("id" in by)
      await this.db.run("UPDATE sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", [at, by.id]);
    else
      await this.db.run("UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL", [at, by.userId]);
  }

  /** Appends one record; the log has no update or delete. */
  async appendAudit(r: AuditRecord): Promise<void> {
    await this.db.run(
      "INSERT INTO audit (id, at, actor, address, action, target, before, after) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      [
        r.id,
        r.at,
        r.actor,
        r.address,
        r.action,
        r.target,
        r.before === undefined || r.before === null ? null : JSON.stringify(r.before),
        r.after === undefined || r.after === null ? null : JSON.stringify(r.after),
      ],
    );
  }

  /** Newest first. */
  async listAudit(f: AuditFilter): Promise<AuditRecord[]> {
    const where: string[] = [];
    const params: SqlValue[] = [];
    for (const [clause, value] of [
      ["actor = ?", f.actor],
      ["action = ?", f.action],
      ["at >= ?", f.since],
      ["at < ?", f.until],
    ] as const) {
      if (!value) continue;
      where.push(clause);
      params.push(value);
    }
    if (f.before) {
      where.push("(at < ? OR (at = ? AND id < ?))");
      params.push(f.before.at, f.before.at, f.before.id);
    }
    const sql = `SELECT id, at, actor, address, action, target, before, after FROM audit ${where.length ? "WHERE " + where.join(" AND ") : ""} ORDER BY at DESC, id DESC LIMIT ${Math.floor(f.limit)}`;
    return (await this.db.all<Row<AuditRecord, "before" | "after">>(sql, params)).map(toAudit);
  }
}

/** Teams, users, admin tokens and the audit log, in the store's own database. */
export function teamStoreOf(store: Store): TeamStore {
  return new TeamStore(store.connection().runner);
}
