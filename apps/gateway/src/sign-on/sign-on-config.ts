import { type Static, Type } from "@sinclair/typebox";
import { ConfigError, configProblems } from "../vocabulary/config-error";

/** One rule of the claim mapping: users whose claim holds `value` get `role`, in `team` if named. */
const ClaimRule = Type.Object(
  {
    value: Type.String({ minLength: 1 }),
    /** A team's name; with it the role is the team's (team-admin, member, viewer). */
    team: Type.Optional(Type.String({ minLength: 1 })),
    role: Type.Union(
      [
        Type.Literal("owner"),
        Type.Literal("admin"),
        Type.Literal("team-admin"),
        Type.Literal("member"),
        Type.Literal("viewer"),
      ],
      { rule: "must be owner, admin, team-admin, member or viewer" },
    ),
  },
  { additionalProperties: false, listKnown: true },
);

/** The config file's `sign_on:` section. */
export const SignOnFile = Type.Object(
  {
    /** The ID token claim read for the mapping (default `groups`); a string or a list of strings. */
    claim: Type.Optional(Type.String({ minLength: 1 })),
    map: Type.Optional(Type.Array(ClaimRule)),
    /** Where the provider sends the browser back (default: this gateway's origin + `/auth/callback`). */
    redirect_url: Type.Optional(Type.String({ pattern: "^https?://", rule: "must be an http:// or https:// URL" })),
    /** How long a dashboard session lasts, in hours (default 12). */
    session_hours: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, maximum: 720, rule: "must be a number of hours above 0 and at most 720" }),
    ),
  },
  { additionalProperties: false, listKnown: true },
);
export type ClaimRule = Static<typeof ClaimRule>;

export interface SignOnConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  claim: string;
  map: ClaimRule[];
  redirectUrl: string | undefined;
  sessionMs: number;
}

type Env = Record<string, string | undefined>;

/**
 * Sign-on from `TURNPIKE_OIDC_ISSUER`, `TURNPIKE_OIDC_CLIENT_ID`, `TURNPIKE_OIDC_CLIENT_SECRET`
 * and the file's `sign_on:` section; undefined when no issuer is set. Every mistake at once.
 */
export function parseSignOn(file: Record<string, unknown>, env: Env, where: string): SignOnConfig | undefined {
  const problems: string[] = [];
  const raw = file.sign_on ?? {};
  problems.push(...configProblems(SignOnFile, raw, where, "sign_on"));
  const issuer = env.TURNPIKE_OIDC_ISSUER || undefined;
  if (!issuer) {
    if (file.sign_on !== undefined && !problems.length)
      problems.push(
        `${where}: sign_on: is set but TURNPIKE_OIDC_ISSUER is not; set the issuer URL or remove the section`,
      );
    if (problems.length) throw new ConfigError(problems);
    return undefined;
  }
  if (!URL.canParse(issuer) || !/^https?:\/\//.test(issuer))
    problems.push(`TURNPIKE_OIDC_ISSUER must be an http:// or https:// URL, got ${JSON.stringify(issuer)}`);
  const clientId = env.TURNPIKE_OIDC_CLIENT_ID || "";
  const clientSecret = env.TURNPIKE_OIDC_CLIENT_SECRET || "";
  if (!clientId) problems.push("TURNPIKE_OIDC_CLIENT_ID must be set when TURNPIKE_OIDC_ISSUER is");
  if (!clientSecret) problems.push("TURNPIKE_OIDC_CLIENT_SECRET must be set when TURNPIKE_OIDC_ISSUER is");
  if (problems.length) throw new ConfigError(problems);
  const f = raw as Static<typeof SignOnFile>; // checked against SignOnFile above
  for (const [i, r] of (f.map ?? []).entries()) {
    const teamRole = r.role === "team-admin" || r.role === "member";
    if (teamRole && r.team === undefined) problems.push(`${where}: sign_on.map[${i}]: role ${r.role} needs a team`);
    if (r.team !== undefined && (r.role === "owner" || r.role === "admin"))
      problems.push(
        `${where}: sign_on.map[${i}]: role ${r.role} is organisation-wide; remove team or use team-admin, member or viewer`,
      );
  }
  if (problems.length) throw new ConfigError(problems);
  return {
    issuer,
    clientId,
    clientSecret,
    claim: f.claim ?? "groups",
    map: f.map ?? [],
    redirectUrl: f.redirect_url,
    sessionMs: (f.session_hours ?? 12) * 3_600_000,
  };
}
