/**
 * Roles (docs/teams.md): `owner` may do everything; `admin` everything but touch owners;
 * `team-admin` manages its teams' keys, members and usage; `member` makes and revokes its own keys
 * within its team's rules and sees its own usage; `viewer` reads. Organisation-wide roles are
 * owner, admin and viewer; a team's roles are team-admin, member and viewer.
 */
export const ROLES = ["owner", "admin", "team-admin", "member", "viewer"] as const;
export type Role = (typeof ROLES)[number];
export const ORG_ROLES = ["owner", "admin", "viewer"] as const;
export type OrgRole = (typeof ORG_ROLES)[number];
export const TEAM_ROLES = ["team-admin", "member", "viewer"] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

/** Who is calling the admin API, and with which rights. */
export interface Principal {
  /** As the audit log names it: `admin-key`, `token:<id>`, `user:<id>`. */
  actor: string;
  /** The organisation-wide role; null = only the team roles below. */
  org: OrgRole | null;
  /** The role in each team the principal belongs to. */
  teams: ReadonlyMap<string, TeamRole>;
  /** The user or token id its keys are made under (a member's own keys). */
  owner_id: string | null;
  /** When the principal's own right ends (a named token's expiry): keys it makes end by then. */
  expires_at?: string | null;
}

export const isOrgRole = (r: string): r is OrgRole => (ORG_ROLES as readonly string[]).includes(r);
export const isTeamRole = (r: string): r is TeamRole => (TEAM_ROLES as readonly string[]).includes(r);

/** May change anything organisation-wide (teams, users, tokens), owners aside. */
export const isAdmin = (p: Principal): boolean => p.org === "owner" || p.org === "admin";
/** May read everything. */
export const readsAll = (p: Principal): boolean => p.org !== null;

/** May manage this team's keys, members and usage. */
export function managesTeam(p: Principal, teamId: string | null | undefined): boolean {
  return isAdmin(p) || (teamId != null && p.teams.get(teamId) === "team-admin");
}

/** May read this team (its keys, usage, members). */
export function readsTeam(p: Principal, teamId: string | null | undefined): boolean {
  return readsAll(p) || (teamId != null && p.teams.has(teamId));
}

/** A key as far as access goes: its team and who made it. */
export interface KeyOwnership {
  team_id?: string | null;
  user_id?: string | null;
}

/** May read this key and its usage: a reader of everything, its team's admins and viewers, or the member who made it. */
export function readsKey(p: Principal, k: KeyOwnership): boolean {
  if (readsAll(p) || managesTeam(p, k.team_id)) return true;
  const role = k.team_id == null ? undefined : p.teams.get(k.team_id);
  return role === "viewer" || (role === "member" && p.owner_id !== null && k.user_id === p.owner_id);
}

/** May make a key in this team: admins, its team-admins, its members (for themselves). */
export function createsKeyIn(p: Principal, teamId: string): boolean {
  const r = p.teams.get(teamId);
  return managesTeam(p, teamId) || (r === "member" && p.owner_id !== null);
}

/** May change a key's limits or rotate it: admins and its team's admins. */
export const changesKey = (p: Principal, k: KeyOwnership): boolean => managesTeam(p, k.team_id);

/** May revoke a key: as {@link changesKey}, and the member who made it. */
export function revokesKey(p: Principal, k: KeyOwnership): boolean {
  return (
    changesKey(p, k) ||
    (p.owner_id !== null && k.user_id === p.owner_id && k.team_id != null && p.teams.get(k.team_id) === "member")
  );
}

/** May give or change this role: only an owner touches owners. */
export const grantsOrgRole = (p: Principal, role: OrgRole | null): boolean =>
  isAdmin(p) && (role !== "owner" || p.org === "owner");
