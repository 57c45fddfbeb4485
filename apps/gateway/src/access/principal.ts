import { GatewayError } from "@turnpike/providers";
import { isAdminKey } from "../keys/admin-key";
import { hashSecret } from "../keys/key-service";
import { isOrgRole, isTeamRole, type Principal, type TeamRole } from "../teams/roles";
import type { AdminToken, TeamStore } from "../teams/team-store";

/** Named admin tokens start so, which tells them from inference keys (`sk-tp-`) in a log or a leak scan. */
export const ADMIN_TOKEN_PREFIX = "tp-adm-";

/** The bootstrap admin key (`TURNPIKE_ADMIN_KEY`): an owner, for automation. */
export const ADMIN_KEY_PRINCIPAL: Principal = { actor: "admin-key", org: "owner", teams: new Map(), owner_id: null };

/** The admin key being rotated out, while its grace lasts: an owner too, named apart in the audit log. */
export const PREVIOUS_ADMIN_KEY_PRINCIPAL: Principal = { ...ADMIN_KEY_PRINCIPAL, actor: "admin-key:previous" };

/** A token's rights: an organisation role, or one role in its team. */
export function tokenPrincipal(t: AdminToken): Principal {
  const teams = new Map<string, TeamRole>();
  if (t.team_id !== null && isTeamRole(t.role)) teams.set(t.team_id, t.role);
  return {
    actor: `token:${t.id}`,
    org: t.team_id === null && isOrgRole(t.role) ? t.role : null,
    teams,
    owner_id: t.id,
    expires_at: t.expires_at,
  };
}

/**
 * The principal behind a bearer secret: the admin key, the previous admin key before its grace
 * ends, or a live named admin token; undefined when it is none (the caller counts the failure).
 */
export async function bearerPrincipal(
  secret: string,
  adminKey: string,
  teams: TeamStore,
  now: number,
  previous?: { key: string; until: string },
): Promise<Principal | undefined> {
  if (isAdminKey(secret, adminKey)) return ADMIN_KEY_PRINCIPAL;
  if (previous && now < Date.parse(previous.until) && isAdminKey(secret, previous.key))
    return PREVIOUS_ADMIN_KEY_PRINCIPAL;
  if (!secret.startsWith(ADMIN_TOKEN_PREFIX)) return undefined;
  const token = await teams.tokenByHash(hashSecret(secret));
  if (!token || token.revoked_at !== null) return undefined;
  if (token.expires_at !== null && Date.parse(token.expires_at) <= now) return undefined;
  return tokenPrincipal(token);
}

/** The admin API's refusal of a call the caller's role does not allow. */
export function forbidden(what: string): GatewayError {
  return new GatewayError({
    status: 403,
    type: "permission_error",
    code: "forbidden",
    message: `Your role does not allow this: ${what}.`,
  });
}
