import { createHash, timingSafeEqual } from "node:crypto";
import { GatewayError } from "@turnpike/providers";
import type { Principal, TeamRole } from "../teams/roles";
import type { TeamStore } from "../teams/team-store";

/** The dashboard session's cookie: an opaque secret, stored hashed (teams/team-store.ts). */
export const SESSION_COOKIE = "tp_session";
/** The header a signed-in browser echoes its session's CSRF token in, on every state-changing call. */
export const CSRF_HEADER = "x-csrf-token";

export const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** One cookie's value from the request. */
export function readCookie(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

function csrfRefused(): GatewayError {
  return new GatewayError({
    status: 403,
    type: "permission_error",
    code: "csrf_failed",
    message: `A signed-in change must carry the session's CSRF token in ${CSRF_HEADER} (GET /auth/session gives it).`,
  });
}

/** Methods that change nothing: no CSRF token needed. */
const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The signed-in user behind the session cookie, with the roles of its teams; undefined when
 * there is no live session. A state-changing call without the session's CSRF token is refused
 * (a cookie rides along on a cross-site form post; the token does not).
 */
export async function sessionPrincipal(
  teams: TeamStore,
  request: Request,
  now: number,
): Promise<Principal | undefined> {
  const secret = readCookie(request, SESSION_COOKIE);
  if (!secret) return undefined;
  const session = await teams.sessionByHash(sha256(secret));
  if (!session || session.revoked_at !== null || Date.parse(session.expires_at) <= now) return undefined;
  const user = await teams.user(session.user_id);
  if (!user) return undefined;
  if (!SAFE.has(request.method) && !same(request.headers.get(CSRF_HEADER) ?? "", session.csrf)) throw csrfRefused();
  const memberships = await teams.membershipsOf(user.id);
  return {
    actor: `user:${user.id}`,
    org: user.role,
    teams: new Map<string, TeamRole>(memberships.map((m) => [m.team_id, m.role])),
    owner_id: user.id,
  };
}
