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
    /** Where the provider sends the browser back (default: `TURNPIKE_PUBLIC_URL` + `/auth/callback`); on that origin. */
    redirect_url: Type.Optional(Type.String({ pattern: "^https?://", rule: "must be an http:// or https:// URL" })),
    /** How far an ID token's `iat` and `nbf` may lie ahead of the gateway's clock, in seconds (default 30). */
    clock_skew_seconds: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 300, rule: "must be a whole number of seconds from 0 to 300" }),
    ),
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
  /** `TURNPIKE_PUBLIC_URL`: the gateway's origin as browsers reach it (never the request's Host). */
  publicUrl: string;
  /** Where the provider sends the browser back. */
  redirectUrl: string;
  /** How far ahead of the gateway's clock an ID token's `iat` and `nbf` may be, in seconds. */
  clockSkewS: number;
  sessionMs: number;
}

/** The default of `sign_on.clock_skew_seconds`: what the OpenID library allows on `nbf` by default too. */
export const DEFAULT_CLOCK_SKEW_S = 30;

/**
 * `TURNPIKE_PUBLIC_URL`: the one setting every security value that names the gateway's own
 * address comes from (the sign-in's redirect, the cookie's Secure flag, the MCP protected-resource
 * metadata), so that no request's `Host` header chooses it. Undefined when unset; without a
 * trailing slash.
 */
export function parsePublicUrl(env: Env): string | undefined {
  const raw = env.TURNPIKE_PUBLIC_URL || undefined;
  if (raw === undefined) return undefined;
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || !/^https?:$/.test(url.protocol) || url.search || url.hash || url.username || url.password)
    throw new ConfigError([
      `TURNPIKE_PUBLIC_URL must be an http:// or https:// URL without query, fragment or credentials, got ${JSON.stringify(raw)}`,
    ]);
  return url.href.replace(/\/+$/, "");
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
  if (!env.TURNPIKE_PUBLIC_URL)
    problems.push(
      "TURNPIKE_PUBLIC_URL must be set when TURNPIKE_OIDC_ISSUER is: the sign-in's redirect and the session cookie's Secure flag come from it, never from a request's Host header",
    );
  if (problems.length) throw new ConfigError(problems);
  // A malformed public URL is the config's own problem (config/config.ts reads it too): reported once, there.
  let publicUrl: string | undefined;
  try {
    publicUrl = parsePublicUrl(env);
  } catch {
    return undefined;
  }
  if (publicUrl === undefined) return undefined;
  const f = raw as Static<typeof SignOnFile>; // checked against SignOnFile above
  if (
    f.redirect_url !== undefined &&
    URL.canParse(f.redirect_url) &&
    new URL(f.redirect_url).origin !== new URL(publicUrl).origin
  )
    problems.push(
      `${where}: sign_on.redirect_url: must be on TURNPIKE_PUBLIC_URL's origin ${new URL(publicUrl).origin}, got ${JSON.stringify(f.redirect_url)}`,
    );
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
    publicUrl,
    redirectUrl: f.redirect_url ?? `${publicUrl}/auth/callback`,
    clockSkewS: f.clock_skew_seconds ?? DEFAULT_CLOCK_SKEW_S,
    sessionMs: (f.session_hours ?? 12) * 3_600_000,
  };
}
