import { createHmac, randomBytes } from "node:crypto";
import * as oidc from "openid-client";
import type { GatewayDeps } from "../wiring/deps";
import { clientAddress } from "../http/client-address";
import type { Route } from "../http/route";
import { recordAudit } from "../teams/audit";
import { keyEnded, revokeMemberKeys } from "../teams/key-ceilings";
import { isOrgRole, type OrgRole, type Principal, type TeamRole } from "../teams/roles";
import { type Membership, type Team, type TeamStore, type User, teamStoreOf } from "../teams/team-store";
import type { ClaimRule, SignOnConfig } from "../config/sign-on-config";
import { CSRF_HEADER, readCookie, SESSION_COOKIE, sessionPrincipal, sha256 } from "../sign-on/sessions";

/** Which of two team roles a claim's rules give wins: the higher. */
const TEAM_RANK: Record<TeamRole, number> = { viewer: 0, member: 1, "team-admin": 2 };

/** The cookie that carries a sign-in's PKCE verifier, state and nonce from `/auth/login` to `/auth/callback`. */
const LOGIN_COOKIE = "tp_login";
/** How long a sign-in may take at the provider. */
const LOGIN_TTL_S = 600;

interface PendingLogin {
  verifier: string;
  state: string;
  nonce: string;
  until: number;
}

const ORG_RANK: Record<OrgRole, number> = { viewer: 1, admin: 2, owner: 3 };

/** Sign-on's own writes (users, memberships, refused sign-ins) in the audit log. */
const SIGN_ON_ACTOR: Principal = { actor: "sign-on", org: null, teams: new Map(), owner_id: null };
/** A signed-in user, as far as the audit log names it. */
const userActor = (id: string): Principal => ({ actor: `user:${id}`, org: null, teams: new Map(), owner_id: id });

/** Would `to` be a higher organisation role than `from` (none is lowest)? */
const raises = (from: OrgRole | null, to: OrgRole) => ORG_RANK[to] > (from === null ? 0 : ORG_RANK[from]);

/** A sign-in the gateway refuses after the provider said yes (its reason is shown to the user). */
class SignInRefused extends Error {}

const text = (status: number, body: string, headers: Record<string, string> = {}) =>
  new Response(body, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", ...headers },
  });

/**
 * OpenID Connect sign-in to the dashboard (docs/teams.md): authorization code with PKCE, the
 * provider's discovery document, the ID token checked against its JWKS with nonce and state (by
 * `openid-client`), users made on first sign-in and given teams and roles from a claim by the
 * config's mapping, and a session in an HttpOnly, SameSite=Lax cookie (Secure under TLS).
 */
export function signOnRoutes(
  deps: GatewayDeps,
  cfg: SignOnConfig,
): { routes: Route[]; session: (request: Request) => Promise<Principal | undefined> } {
  const teams = (): TeamStore => teamStoreOf(deps.store);
  const iso = () => new Date(deps.now()).toISOString();
  const macKey = sha256(`turnpike sign-on|${cfg.clientSecret}`);
  const sign = (v: string) => `${v}.${createHmac("sha256", macKey).update(v).digest("base64url")}`;
  const unsign = (v: string | undefined): string | undefined => {
    if (!v) return undefined;
    const dot = v.lastIndexOf(".");
    return dot > 0 && sign(v.slice(0, dot)) === v ? v.slice(0, dot) : undefined;
  };
  let discovered: Promise<oidc.Configuration> | undefined;
  /** The provider's configuration (its discovery document), fetched once; again after a failure. */
  const provider = () => {
    discovered ??= oidc
      // Times in the ID token are checked by the gateway's clock.
      .discovery(
        new URL(cfg.issuer),
        cfg.clientId,
        {
          client_secret: cfg.clientSecret,
          [oidc.clockSkew]: Math.round((deps.now() - Date.now()) / 1000),
          // `nbf` (and `exp`) get this much leeway from the library; `iat` is checked below with the same bound.
          [oidc.clockTolerance]: cfg.clockSkewS,
        },
        oidc.ClientSecretBasic(cfg.clientSecret),
        {
          // The provider is called through the gateway's fetch; its options are a RequestInit (body, headers, method, redirect, signal).
          [oidc.customFetch]: (url: string, init: oidc.CustomFetchOptions) => deps.fetch(url, init as RequestInit),
          // A plain-http issuer only on loopback (a provider beside the gateway, or a test's).
          ...(new URL(cfg.issuer).protocol === "http:" &&
          ["127.0.0.1", "localhost", "[::1]"].includes(new URL(cfg.issuer).hostname)
            ? { execute: [oidc.allowInsecureRequests] }
            : {}),
        },
      )
      .then((c) => {
        // Check the ID token's signature against the provider's JWKS too, not only its claims.
        oidc.enableNonRepudiationChecks(c);
        return c;
      })
      .catch((e) => {
        discovered = undefined;
        throw e;
      });
    return discovered;
  };
  // From the configured public URL only: a request's Host header never picks a security value.
  const redirectUri = cfg.redirectUrl;
  const secure = cfg.publicUrl.startsWith("https:") ? "; Secure" : "";
  const cookie = (name: string, value: string, path: string, maxAge: number) =>
    `${name}=${value}; Path=${path}; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure}`;

  /** The values of the mapped claim. */
  const claimValues = (claims: Record<string, unknown>): string[] => {
    const v = claims[cfg.claim];
    return typeof v === "string" ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
  };

  /**
   * Gives the user each team the claim's rules name (teams made when missing), with the highest
   * team role the rules give there. A membership already held with that role is left as it is
   * (one given by hand stays the admin's). Answers the ids of the teams granted.
   */
  const grantTeams = async (
    store: TeamStore,
    user: User,
    rules: readonly ClaimRule[],
    at: string,
    actor: Principal,
    address: string | null,
  ): Promise<Set<string>> => {
    const wanted = new Map<string, TeamRole>();
    for (const r of rules) {
      if (r.team === undefined || (isOrgRole(r.role) && r.role !== "viewer")) continue;
      const role: TeamRole = r.role === "team-admin" || r.role === "member" ? r.role : "viewer";
      const had = wanted.get(r.team);
      if (!had || TEAM_RANK[role] > TEAM_RANK[had]) wanted.set(r.team, role);
    }
    const granted = new Set<string>();
    for (const [name, role] of wanted) {
      let team: Team | undefined = await store.teamByName(name);
      if (!team) {
        team = {
          id: `team_${randomBytes(9).toString("base64url")}`,
          name,
          models: null,
          rpm: null,
          tpm: null,
          budget_usd: null,
          created_at: at,
          updated_at: at,
        };
        await store.createTeam(team);
        await recordAudit(store, actor, address, { action: "team.create", target: team.id, after: team }, deps.now());
      }
      granted.add(team.id);
      const had = (await store.members(team.id)).find((m) => m.user_id === user.id);
      if (had?.role !== role) {
        const m: Membership = {
          team_id: team.id,
          user_id: user.id,
          role,
          source: "sign-on",
          created_at: had?.created_at ?? at,
        };
        await store.setMember(m);
        await recordAudit(
          store,
          actor,
          address,
          { action: "team.member.set", target: `${team.id}/${user.id}`, before: had ?? null, after: m },
          deps.now(),
        );
      }
    }
    return granted;
  };

  /**
   * Takes away the memberships sign-on gave whose team the claim no longer names (the user left
   * the group at the provider); memberships given by hand stay. Each removal is audited.
   */
  const dropStaleTeams = async (
    store: TeamStore,
    user: User,
    granted: ReadonlySet<string>,
    actor: Principal,
    address: string | null,
  ): Promise<void> => {
    for (const m of await store.membershipsOf(user.id)) {
      if (m.source !== "sign-on" || granted.has(m.team_id)) continue;
      await store.removeMember(m.team_id, user.id);
      await recordAudit(
        store,
        actor,
        address,
        { action: "team.member.remove", target: `${m.team_id}/${user.id}`, before: m },
        deps.now(),
      );
      // A key does not outlive its maker's membership (docs/teams.md).
      for (const k of await revokeMemberKeys(deps.keys, user.id, m.team_id))
        await recordAudit(store, actor, address, keyEnded(k), deps.now());
    }
  };

  /** Makes the user on first sign-in, and gives it the teams and roles its claim maps to. */
  const signIn = async (claims: Record<string, unknown>, address: string | null): Promise<User> => {
    const store = teams();
    const sub = String(claims.sub);
    const email = typeof claims.email === "string" ? claims.email : `${sub}@${new URL(cfg.issuer).hostname}`;
    const values = claimValues(claims);
    const rules = cfg.map.filter((r) => values.includes(r.value));
    const orgRoles = rules
      .map((r) => r.role)
      .filter((r): r is OrgRole => isOrgRole(r) && rules.some((x) => x.role === r && x.team === undefined));
    const org = orgRoles.sort((a, b) => ORG_RANK[b] - ORG_RANK[a])[0];
    let user = await store.userBy("subject", sub);
    if (!user) {
      // A user made by an admin is taken up by email only when the provider vouches for the address.
      const byEmail = await store.userBy("email", email);
      if (byEmail && (byEmail.subject !== null || claims.email_verified !== true))
        throw new SignInRefused(
          `a user with the email ${email} exists and the provider does not vouch for this address (email_verified); an admin can remove or change that user`,
        );
      user = byEmail;
    }
    const at = iso();
    const actor = SIGN_ON_ACTOR;
    if (!user) {
      user = {
        id: `user_${randomBytes(9).toString("base64url")}`,
        email,
        name: typeof claims.name === "string" ? claims.name : null,
        subject: sub,
        role: org ?? null,
        created_at: at,
        updated_at: at,
      };
      await store.createUser(user);
      await recordAudit(store, actor, address, { action: "user.create", target: user.id, after: user }, deps.now());
    } else if ((org !== undefined && raises(user.role, org)) || user.subject !== sub) {
      // The claim raises a role, never lowers one (an owner set by hand stays an owner).
      const before = user;
      user = {
        ...user,
        subject: sub,
        role: org !== undefined && raises(user.role, org) ? org : user.role,
        updated_at: at,
      };
      await store.updateUser(user);
      await recordAudit(
        store,
        actor,
        address,
        { action: "user.update", target: user.id, before, after: user },
        deps.now(),
      );
    }
    const granted = await grantTeams(store, user, rules, at, actor, address);
    await dropStaleTeams(store, user, granted, actor, address);
    return user;
  };

  const session = (request: Request) => sessionPrincipal(teams(), request, deps.now());
  const doc = (summary: string, responses: Record<string, unknown>) => ({
    tags: ["Operations"],
    summary,
    security: [],
    responses,
  });

  const routes: Route[] = [
    {
      method: "GET",
      path: "/auth/login",
      doc: doc("Start signing in to the dashboard at the identity provider", {
        302: { description: "To the provider's authorization endpoint." },
        503: { description: "The provider could not be reached." },
      }),
      handle: async () => {
        let config: oidc.Configuration;
        try {
          config = await provider();
        } catch (e) {
          deps.logger.error("sign-on: the provider's discovery document could not be read", { issuer: cfg.issuer }, e);
          return text(503, "Sign-in is unavailable: the identity provider could not be reached. Try again shortly.");
        }
        const pending: PendingLogin = {
          verifier: oidc.randomPKCECodeVerifier(),
          state: oidc.randomState(),
          nonce: oidc.randomNonce(),
          until: deps.now() + LOGIN_TTL_S * 1000,
        };
        const url = oidc.buildAuthorizationUrl(config, {
          redirect_uri: redirectUri,
          scope: `openid email profile ${cfg.claim}`,
          code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
          code_challenge_method: "S256",
          state: pending.state,
          nonce: pending.nonce,
        });
        const value = sign(Buffer.from(JSON.stringify(pending)).toString("base64url"));
        return new Response(null, {
          status: 302,
          headers: {
            location: url.href,
            "set-cookie": cookie(LOGIN_COOKIE, value, "/auth", LOGIN_TTL_S),
            "cache-control": "no-store",
          },
        });
      },
    },
    {
      method: "GET",
      path: "/auth/callback",
      doc: doc("Where the identity provider returns the browser; sets the session cookie", {
        303: { description: "Signed in: to the dashboard." },
        401: { description: "The sign-in was refused (state, nonce, PKCE or ID token check failed)." },
      }),
      handle: async ({ request, server }) => {
        const raw = unsign(readCookie(request, LOGIN_COOKIE));
        const clear = cookie(LOGIN_COOKIE, "", "/auth", 0);
        const address = clientAddress(server, request, deps.config.trustedProxies);
        const failures = `signin|${address}`;
        const refuse = async (why: string, e?: unknown, subject?: string) => {
          const cause = e instanceof Error && e.cause instanceof Error ? { cause: e.cause.message } : {};
          const error = e instanceof Error ? { error: e.message, ...cause } : {};
          deps.logger.warn("sign-on refused", { reason: why, ...error });
          // Refusals are counted per address like failed keys: past the bound, a 429 and no more
          // audit rows (a flood cannot bury the log). A sign-in that passes is never held back.
          const wait = await deps.authFailures.blockedFor(failures);
          if (wait > 0)
            return text(429, `Too many refused sign-ins from this address; retry after ${wait} s.`, {
              "retry-after": String(wait),
              "set-cookie": clear,
            });
          await deps.authFailures.fail(failures);
          await recordAudit(
            teams(),
            SIGN_ON_ACTOR,
            address,
            { action: "session.refuse", target: subject ?? null, after: { reason: why, ...error } },
            deps.now(),
          ).catch((err) => deps.logger.error("audit write failed", { action: "session.refuse" }, err));
          return text(401, `Sign-in failed: ${why}. Start again at /auth/login.`, { "set-cookie": clear });
        };
        if (!raw) return refuse("no sign-in in progress in this browser (or its cookie was altered)");
        const pending = JSON.parse(Buffer.from(raw, "base64url").toString("utf8")) as PendingLogin; // signed by this gateway above
        if (pending.until <= deps.now()) return refuse("the sign-in took too long");
        let claims: Record<string, unknown>;
        try {
          const config = await provider();
          const current = new URL(redirectUri);
          current.search = new URL(request.url).search;
          const tokens = await oidc.authorizationCodeGrant(
            config,
            current,
            {
              pkceCodeVerifier: pending.verifier,
              expectedState: pending.state,
              expectedNonce: pending.nonce,
              idTokenExpected: true,
            },
            { redirect_uri: redirectUri },
          );
          claims = { ...(tokens.claims() ?? {}) };
          // The library checks `iat` is a number, not when: a token issued in the future is refused here.
          const iat = claims.iat;
          if (typeof iat !== "number" || iat > deps.now() / 1000 + cfg.clockSkewS)
            throw new Error(
              `the ID token's iat (${String(iat)}) is more than ${cfg.clockSkewS} s ahead of the gateway's clock`,
            );
        } catch (e) {
          return refuse("the identity provider's answer did not pass its checks", e);
        }
        const secret = randomBytes(32).toString("base64url");
        try {
          const user = await signIn(claims, address);
          const at = iso();
          const sessionId = `ses_${randomBytes(9).toString("base64url")}`;
          const expires = new Date(deps.now() + cfg.sessionMs).toISOString();
          await teams().createSession({
            id: sessionId,
            hash: sha256(secret),
            user_id: user.id,
            csrf: randomBytes(24).toString("base64url"),
            created_at: at,
            expires_at: expires,
            revoked_at: null,
          });
          await recordAudit(
            teams(),
            userActor(user.id),
            address,
            { action: "session.create", target: user.id, after: { session: sessionId, expires_at: expires } },
            deps.now(),
          );
        } catch (e) {
          if (e instanceof SignInRefused) return refuse(e.message, undefined, String(claims.sub));
          deps.logger.error("sign-on: the user or session could not be stored", {}, e);
          return text(503, "Sign-in could not be completed: the gateway's store did not answer. Try again shortly.", {
            "set-cookie": clear,
          });
        }
        const headers = new Headers({ location: "/dashboard", "cache-control": "no-store" });
        headers.append("set-cookie", cookie(SESSION_COOKIE, secret, "/", Math.floor(cfg.sessionMs / 1000)));
        headers.append("set-cookie", clear);
        return new Response(null, { status: 303, headers });
      },
    },
    {
      method: "GET",
      path: "/auth/session",
      doc: doc("The signed-in user, its roles, and the CSRF token its changes must carry", {
        200: { description: "Signed in." },
        401: { description: "No live session." },
      }),
      handle: async ({ request }) => {
        const who = await session(request);
        const secret = readCookie(request, SESSION_COOKIE);
        const s = secret ? await teams().sessionByHash(sha256(secret)) : undefined;
        if (!who || !s || !who.owner_id)
          return Response.json({ error: { message: "Not signed in.", type: "authentication_error" } }, { status: 401 });
        const user = await teams().user(who.owner_id);
        return Response.json(
          {
            user,
            role: who.org,
            teams: Object.fromEntries(who.teams),
            csrf_token: s.csrf,
            csrf_header: CSRF_HEADER,
            expires_at: s.expires_at,
          },
          { headers: { "cache-control": "no-store" } },
        );
      },
    },
    {
      method: "POST",
      path: "/auth/logout",
      doc: doc("Sign out: ends the session (needs the CSRF token)", {
        200: { description: "Signed out." },
        403: { description: "No CSRF token." },
      }),
      handle: async ({ request, server }) => {
        const expired = cookie(SESSION_COOKIE, "", "/", 0);
        let who: Principal | undefined;
        try {
          who = await session(request);
        } catch {
          return Response.json(
            {
              error: {
                message: `Sign-out needs the session's CSRF token in ${CSRF_HEADER}.`,
                type: "permission_error",
                code: "csrf_failed",
              },
            },
            { status: 403 },
          );
        }
        const secret = readCookie(request, SESSION_COOKIE);
        const s = secret ? await teams().sessionByHash(sha256(secret)) : undefined;
        if (s && who && s.revoked_at === null) {
          await teams().revokeSessions(iso(), { id: s.id });
          await recordAudit(
            teams(),
            who,
            clientAddress(server, request, deps.config.trustedProxies),
            { action: "session.end", target: s.user_id, after: { session: s.id } },
            deps.now(),
          ).catch((err) => deps.logger.error("audit write failed", { action: "session.end" }, err));
        }
        return Response.json({ signed_out: true }, { headers: { "set-cookie": expired, "cache-control": "no-store" } });
      },
    },
  ];
  return { routes, session };
}
