import { decodeCursor, encodeCursor } from "../http/page-cursor";
import { randomBytes } from "node:crypto";
import type { Static, TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { GatewayError } from "@turnpike/providers";
import { explainErrors } from "@turnpike/schema";
import { adminGuard, type SessionPrincipal } from "../access/admin-guard";
import type { AuditEntry } from "../teams/audit";
import type { GatewayDeps } from "../wiring/deps";
import { readJsonObject } from "../request/read-body";
import { invalid } from "../vocabulary/client-errors";
import type { Route } from "../http/route";
import { hashSecret } from "../keys/key-service";
import { teamSpendId } from "../storage/spend-ids";
import { toolPatternProblem } from "../tools/tool-allow-list";
import { admin, idParam, json, ok, query, ref } from "../openapi/operations";
import { nameProblem } from "../storage/clean-text";
import { validationError } from "../vocabulary/client-errors";
import { defaultsProblem, keyEnded, revokeMemberKeys } from "../teams/key-ceilings";
import { ADMIN_TOKEN_PREFIX, forbidden } from "../access/principal";
import {
  grantsOrgRole,
  isAdmin,
  isOrgRole,
  isTeamRole,
  managesTeam,
  type Principal,
  readsAll,
  readsTeam,
} from "../teams/roles";
import { teamDirectory } from "../teams/team-directory";
import { AdminMemberBody, AdminTeamFields, AdminTokenBody, AdminUserFields } from "../teams/team-schemas";
import {
  type AdminToken,
  DEFAULT_TEAM_ID,
  isUniqueViolation,
  type Membership,
  type Team,
  type User,
  teamStoreOf,
} from "../teams/team-store";

const newId = (prefix: string) => `${prefix}_${randomBytes(9).toString("base64url")}`;

function notFound(what: string, id: string): GatewayError {
  return new GatewayError({
    status: 404,
    type: "not_found_error",
    code: `${what}_not_found`,
    param: "id",
    message: `No ${what} with id ${JSON.stringify(id.slice(0, 100))}.`,
  });
}

function conflict(message: string): GatewayError {
  return new GatewayError({ status: 409, type: "invalid_request_error", code: "conflict", message });
}

/**
 * A user write that lost a race for an email (another request took it between the check and the
 * write): the store's unique constraint refuses it, answered as the same 409 as the check.
 */
async function sameEmailConflict(write: Promise<void>, email: string): Promise<void> {
  try {
    await write;
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`A user with email ${JSON.stringify(email)} exists.`);
    throw e;
  }
}

/** A body checked against its schema: one 400 naming the first mistake and the next few. */
/** The longest team, user or admin token name (site/operations/security.md, "Names"). */
export const MAX_TEAM_NAME = 200;

function checked<T extends TSchema>(schema: T, body: unknown): Static<T> {
  if (!Value.Check(schema, body)) throw validationError(explainErrors(schema, body));
  // A name is printed by the CLI and the dashboard and written to logs: printable text only.
  const name = (body as { name?: unknown }).name; // an object: checked just above
  if (typeof name === "string") {
    const problem = nameProblem(name, MAX_TEAM_NAME);
    if (problem) throw invalid(`name: ${problem}`, "name");
  }
  return body;
}

/** A token as the admin API shows it: never its secret or hash. */
const publicToken = ({ hash: _hash, ...t }: AdminToken) => t;

/** A page's end in the audit log (its last record's time and id), opaque to the caller. */
const encodeAuditCursor = (r: { at: string; id: string }) => encodeCursor(r.at, r.id);

/** An audit page's cursor: a record's time and its `aud_…` id. */
const decodeAuditCursor = (cursor: string) =>
  decodeCursor(cursor, (at, id) => !Number.isNaN(Date.parse(at)) && /^aud_[\w-]+$/.test(id));

const TEAM_ID = idParam("The team's id (`team_…`).");
const USER_ID = idParam("The user's id (`user_…`).");

/**
 * Teams, their members, users, named admin tokens and the audit log on the admin API
 * (docs/teams.md); every route checks the caller's role, every write is audited.
 */
export function teamRoutes(deps: GatewayDeps, session?: SessionPrincipal): Route[] {
  const guarded = adminGuard(deps, session);
  const teams = () => teamStoreOf(deps.store);
  const iso = () => new Date(deps.now()).toISOString();
  const body = (request: Request) => readJsonObject(request, deps.config.maxBodyBytes, deps.config.maxBodyValues);
  const catalogIds = deps.catalog.all().map((e) => e.id);
  const need = (allowed: boolean, what: string) => {
    if (!allowed) throw forbidden(what);
  };
  const team = async (id: string): Promise<Team> => {
    const t = await teams().team(id);
    if (!t) throw notFound("team", id);
    return t;
  };
  const user = async (id: string): Promise<User> => {
    const u = await teams().user(id);
    if (!u) throw notFound("user", id);
    return u;
  };
  /** This month's spend of the team's keys: the team's own counter (limits/admit.ts). */
  const teamSpend = async (id: string) => Math.round((await deps.spend.spent(teamSpendId(id))) * 1e6) / 1e6;
  const mcpServers = deps.config.mcp.servers.map((s) => s.name);
  /** Each entry of a team's MCP allow-list checked as a key's are (`POST /admin/keys`). */
  const toolsIssue = (tools: string[] | null | undefined) => {
    for (const p of tools ?? []) {
      const problem = toolPatternProblem(p, mcpServers);
      if (problem) throw invalid(`tools: ${JSON.stringify(p.slice(0, 60))}: ${problem}`, "tools");
    }
  };
  const modelsIssue = (models: string[] | null | undefined) => {
    for (const m of models ?? []) {
      const re = new RegExp(
        `^${m
          .split("*")
          .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
          .join(".*")}$`,
      );
      if (!catalogIds.some((id) => re.test(id)))
        throw invalid(
          `models: ${JSON.stringify(m.slice(0, 60))} names no catalog model (see GET /v1/models)`,
          "models",
        );
    }
  };
  /** Each guardrail policy a team names must be one of the config's. */
  const guardrailsIssue = (names: string[] | null | undefined) => {
    for (const g of names ?? [])
      if (!deps.config.guardrails.policies.has(g))
        throw invalid(
          `guardrails: ${JSON.stringify(g.slice(0, 60))} is not a policy of the config's guardrails.policies`,
          "guardrails",
        );
  };
  /** A team's key defaults and ceilings: their lists checked as a team's, defaults within ceilings. */
  const rulesIssue = (b: AdminTeamFields, before?: Team) => {
    for (const which of ["key_defaults", "key_ceilings"] as const) {
      const r = b[which];
      if (!r) continue;
      try {
        modelsIssue(r.models);
        toolsIssue(r.tools);
      } catch (e) {
        if (e instanceof GatewayError) throw invalid(`${which}.${e.message}`, `${which}.${e.param ?? ""}`);
        throw e;
      }
    }
    const d = b.key_defaults === undefined ? before?.key_defaults : b.key_defaults;
    const c = b.key_ceilings === undefined ? before?.key_ceilings : b.key_ceilings;
    const field = defaultsProblem(d, c);
    if (field)
      throw invalid(
        `key_defaults.${field}: past the team's key_ceilings.${field}; a default must be within the ceiling`,
        `key_defaults.${field}`,
      );
  };
  /** Ends the keys a user or token made (in one team, or all), each revocation audited. */
  const endKeysOf = async (ownerId: string, teamId: string, audit: (e: AuditEntry) => Promise<void>) => {
    for (const k of await revokeMemberKeys(deps.keys, ownerId, teamId)) await audit(keyEnded(k));
  };
  /** Only an owner touches an owner. */
  const touchesUser = (who: Principal, u: User) => isAdmin(who) && (u.role !== "owner" || who.org === "owner");

  return [
    {
      method: "POST",
      path: "/admin/teams",
      doc: admin(
        "Create a team",
        { 201: { description: "Created.", content: json(ref("AdminTeam")) } },
        { requestBody: { required: true, content: json({ allOf: [ref("AdminTeamFields"), { required: ["name"] }] }) } },
      ),
      handle: guarded(async ({ request, who, audit }) => {
        need(isAdmin(who), "create a team");
        const b = checked(AdminTeamFields, await body(request));
        if (b.name === undefined) throw invalid("name: required non-empty string, got nothing", "name");
        modelsIssue(b.models);
        toolsIssue(b.tools);
        rulesIssue(b);
        guardrailsIssue(b.guardrails);
        if (await teams().teamByName(b.name)) throw conflict(`A team named ${JSON.stringify(b.name)} exists.`);
        const at = iso();
        const t: Team = {
          id: newId("team"),
          name: b.name,
          models: b.models ?? null,
          rpm: b.rpm ?? null,
          tpm: b.tpm ?? null,
          budget_usd: b.budget_usd ?? null,
          tools: b.tools ?? null,
          key_defaults: b.key_defaults ?? null,
          key_ceilings: b.key_ceilings ?? null,
          guardrails: b.guardrails?.length ? [...new Set(b.guardrails)] : null,
          created_at: at,
          updated_at: at,
        };
        await teams().createTeam(t);
        await audit({ action: "team.create", target: t.id, after: t });
        return Response.json(t, { status: 201 });
      }),
    },
    {
      method: "GET",
      path: "/admin/teams",
      doc: admin(
        "List teams (the caller's own, unless it reads everything)",
        ok("Teams with this month's spend.", ref("AdminTeamList")),
      ),
      handle: guarded(async ({ who }) => {
        const all = (await teams().listTeams()).filter((t) => readsTeam(who, t.id));
        return Response.json({
          data: await Promise.all(all.map(async (t) => ({ ...t, spent_this_month_usd: await teamSpend(t.id) }))),
        });
      }),
    },
    {
      method: "GET",
      path: "/admin/teams/{id}",
      doc: admin("Get a team", ok("The team with this month's spend.", ref("AdminTeam")), { parameters: [TEAM_ID] }),
      handle: guarded(async ({ params, who }) => {
        const t = await team(params.id ?? "");
        need(readsTeam(who, t.id), `read team ${t.id}`);
        return Response.json({ ...t, spent_this_month_usd: await teamSpend(t.id) });
      }),
    },
    {
      method: "PATCH",
      path: "/admin/teams/{id}",
      doc: admin(
        "Change a team's name, models or limits (null clears one)",
        ok("The changed team.", ref("AdminTeam")),
        { parameters: [TEAM_ID], requestBody: { required: true, content: json(ref("AdminTeamFields")) } },
      ),
      handle: guarded(async ({ request, params, who, audit }) => {
        const before = await team(params.id ?? "");
        need(isAdmin(who), `change team ${before.id}`);
        const b = checked(AdminTeamFields, await body(request));
        modelsIssue(b.models);
        toolsIssue(b.tools);
        rulesIssue(b, before);
        guardrailsIssue(b.guardrails);
        if (b.name !== undefined && b.name !== before.name && (await teams().teamByName(b.name)))
          throw conflict(`A team named ${JSON.stringify(b.name)} exists.`);
        const after: Team = {
          ...before,
          ...Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined)),
          updated_at: iso(),
        };
        await teams().updateTeam(after);
        teamDirectory(deps.store, deps.now).forget(after.id);
        await audit({ action: "team.update", target: after.id, before, after });
        return Response.json(after);
      }),
    },
    {
      method: "DELETE",
      path: "/admin/teams/{id}",
      doc: admin(
        "Delete a team that has no live keys (not the default team)",
        ok("The deleted team.", ref("AdminTeam")),
        { parameters: [TEAM_ID] },
      ),
      handle: guarded(async ({ params, who, audit }) => {
        const t = await team(params.id ?? "");
        need(isAdmin(who), `delete team ${t.id}`);
        if (t.id === DEFAULT_TEAM_ID) throw conflict("The default team stays: keys made without a team belong to it.");
        const live = (await deps.keys.list()).filter((k) => k.team_id === t.id && k.revoked_at === null);
        if (live.length) throw conflict(`Team ${t.id} still has ${live.length} live key(s); revoke them first.`);
        await teams().deleteTeam(t.id);
        teamDirectory(deps.store, deps.now).forget(t.id);
        await audit({ action: "team.delete", target: t.id, before: t });
        return Response.json(t);
      }),
    },
    {
      method: "GET",
      path: "/admin/teams/{id}/members",
      doc: admin("A team's members and their roles", ok("The members.", ref("AdminMemberList")), {
        parameters: [TEAM_ID],
      }),
      handle: guarded(async ({ params, who }) => {
        const t = await team(params.id ?? "");
        need(readsTeam(who, t.id), `read team ${t.id}`);
        return Response.json({ data: await teams().members(t.id) });
      }),
    },
    {
      method: "POST",
      path: "/admin/teams/{id}/members",
      doc: admin("Add a user to a team, or change its role there", ok("The membership.", ref("AdminMember")), {
        parameters: [TEAM_ID],
        requestBody: { required: true, content: json(ref("AdminMemberBody")) },
      }),
      handle: guarded(async ({ request, params, who, audit }) => {
        const t = await team(params.id ?? "");
        need(managesTeam(who, t.id), `manage the members of team ${t.id}`);
        const b = checked(AdminMemberBody, await body(request));
        await user(b.user_id);
        const before = (await teams().members(t.id)).find((m) => m.user_id === b.user_id) ?? null;
        const m: Membership = {
          team_id: t.id,
          user_id: b.user_id,
          role: b.role,
          source: "admin",
          created_at: before?.created_at ?? iso(),
        };
        await teams().setMember(m);
        await audit({ action: "team.member.set", target: `${t.id}/${b.user_id}`, before, after: m });
        return Response.json(m);
      }),
    },
    {
      method: "DELETE",
      path: "/admin/teams/{id}/members/{user_id}",
      doc: admin(
        "Remove a user from a team (and revoke the keys it made there)",
        ok("The removed membership.", ref("AdminMember")),
        {
          parameters: [TEAM_ID, { ...USER_ID, name: "user_id" }],
        },
      ),
      handle: guarded(async ({ params, who, audit }) => {
        const t = await team(params.id ?? "");
        need(managesTeam(who, t.id), `manage the members of team ${t.id}`);
        const userId = params.user_id ?? "";
        const before = (await teams().members(t.id)).find((m) => m.user_id === userId);
        if (!before) throw notFound("member", userId);
        await teams().removeMember(t.id, userId);
        await audit({ action: "team.member.remove", target: `${t.id}/${userId}`, before });
        // A key does not outlive its maker's membership (docs/teams.md).
        await endKeysOf(userId, t.id, audit);
        return Response.json(before);
      }),
    },
    {
      method: "POST",
      path: "/admin/users",
      doc: admin(
        "Create a user (sign-on also makes them on first sign-in)",
        { 201: { description: "Created.", content: json(ref("AdminUser")) } },
        {
          requestBody: { required: true, content: json({ allOf: [ref("AdminUserFields"), { required: ["email"] }] }) },
        },
      ),
      handle: guarded(async ({ request, who, audit }) => {
        const b = checked(AdminUserFields, await body(request));
        need(grantsOrgRole(who, b.role ?? null), b.role === "owner" ? "make an owner" : "create a user");
        if (b.email === undefined) throw invalid("email: required, got nothing", "email");
        if (await teams().userBy("email", b.email))
          throw conflict(`A user with email ${JSON.stringify(b.email)} exists.`);
        const at = iso();
        const u: User = {
          id: newId("user"),
          email: b.email,
          name: b.name ?? null,
          subject: null,
          role: b.role ?? null,
          created_at: at,
          updated_at: at,
        };
        await sameEmailConflict(teams().createUser(u), u.email);
        await audit({ action: "user.create", target: u.id, after: u });
        return Response.json(u, { status: 201 });
      }),
    },
    {
      method: "GET",
      path: "/admin/users",
      doc: admin("List users", ok("Every user.", ref("AdminUserList"))),
      handle: guarded(async ({ who }) => {
        need(readsAll(who), "list every user");
        return Response.json({ data: await teams().listUsers() });
      }),
    },
    {
      method: "GET",
      path: "/admin/users/{id}",
      doc: admin("Get a user", ok("The user.", ref("AdminUser")), { parameters: [USER_ID] }),
      handle: guarded(async ({ params, who }) => {
        const u = await user(params.id ?? "");
        need(readsAll(who) || who.owner_id === u.id, `read user ${u.id}`);
        return Response.json(u);
      }),
    },
    {
      method: "PATCH",
      path: "/admin/users/{id}",
      doc: admin("Change a user's name, email or organisation role", ok("The changed user.", ref("AdminUser")), {
        parameters: [USER_ID],
        requestBody: { required: true, content: json(ref("AdminUserFields")) },
      }),
      handle: guarded(async ({ request, params, who, audit }) => {
        const before = await user(params.id ?? "");
        const b = checked(AdminUserFields, await body(request));
        need(
          touchesUser(who, before) && (b.role === undefined || grantsOrgRole(who, b.role)),
          `change user ${before.id}`,
        );
        const after: User = {
          ...before,
          ...Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined)),
          updated_at: iso(),
        };
        const holder = b.email === undefined ? undefined : await teams().userBy("email", b.email);
        if (holder && holder.id !== before.id) throw conflict(`A user with email ${JSON.stringify(b.email)} exists.`);
        await sameEmailConflict(teams().updateUser(after), after.email);
        await audit({ action: "user.update", target: after.id, before, after });
        return Response.json(after);
      }),
    },
    {
      method: "DELETE",
      path: "/admin/users/{id}",
      doc: admin(
        "Delete a user, its memberships and sessions, and revoke the keys it made in its teams",
        ok("The deleted user.", ref("AdminUser")),
        { parameters: [USER_ID] },
      ),
      handle: guarded(async ({ params, who, audit }) => {
        const u = await user(params.id ?? "");
        need(touchesUser(who, u), `delete user ${u.id}`);
        const memberships = await teams().membershipsOf(u.id);
        await teams().deleteUser(u.id);
        await audit({ action: "user.delete", target: u.id, before: u });
        // Its keys in its teams end with it (keys an organisation admin made outside its teams stay).
        for (const m of memberships) await endKeysOf(u.id, m.team_id, audit);
        return Response.json(u);
      }),
    },
    {
      method: "POST",
      path: "/admin/tokens",
      doc: admin(
        "Mint a named admin token with a role (and an expiry), for CI; its secret is in this reply only",
        { 201: { description: "Created.", content: json(ref("AdminTokenWithSecret")) } },
        { requestBody: { required: true, content: json(ref("AdminTokenBody")) } },
      ),
      handle: guarded(async ({ request, who, audit }) => {
        const b = checked(AdminTokenBody, await body(request));
        // Without team_id the role is organisation-wide (owner, admin, viewer); with it, a team's (team-admin, member, viewer).
        need(
          grantsOrgRole(who, b.role === "owner" ? "owner" : "admin"),
          b.role === "owner" ? "mint an owner token" : "mint admin tokens",
        );
        if (b.team_id !== undefined && !isTeamRole(b.role))
          throw invalid(
            `team_id: a ${b.role} token is organisation-wide; give team_id only with team-admin, member or viewer`,
            "team_id",
          );
        if (b.team_id === undefined && !isOrgRole(b.role))
          throw invalid(`team_id: required for a ${b.role} token`, "team_id");
        if (b.team_id !== undefined)
          await team(b.team_id).catch(() => {
            throw invalid(`team_id: no team ${JSON.stringify(b.team_id)}`, "team_id");
          });
        if (b.expires_at && Date.parse(b.expires_at) <= deps.now())
          throw invalid("expires_at: must be in the future", "expires_at");
        const secret = ADMIN_TOKEN_PREFIX + randomBytes(24).toString("base64url");
        const t: AdminToken = {
          id: newId("tok"),
          name: b.name,
          hash: hashSecret(secret),
          prefix: secret.slice(0, ADMIN_TOKEN_PREFIX.length + 4),
          role: b.role,
          team_id: b.team_id ?? null,
          expires_at: b.expires_at ? new Date(b.expires_at).toISOString() : null,
          created_by: who.actor,
          created_at: iso(),
          revoked_at: null,
        };
        await teams().createToken(t);
        await audit({ action: "token.create", target: t.id, after: publicToken(t) });
        return Response.json({ ...publicToken(t), token: secret }, { status: 201 });
      }),
    },
    {
      method: "GET",
      path: "/admin/tokens",
      doc: admin("List named admin tokens", ok("Every token (never a secret).", ref("AdminTokenList"))),
      handle: guarded(async ({ who }) => {
        need(isAdmin(who), "list admin tokens");
        return Response.json({ data: (await teams().listTokens()).map(publicToken) });
      }),
    },
    {
      method: "DELETE",
      path: "/admin/tokens/{id}",
      doc: admin(
        "Revoke a named admin token (and, for a team token, the keys made with it)",
        ok("The revoked token.", ref("AdminToken")),
        {
          parameters: [idParam("The token's id (`tok_…`).")],
        },
      ),
      handle: guarded(async ({ params, who, audit }) => {
        const id = params.id ?? "";
        const before = await teams().token(id);
        if (!before) throw notFound("token", id);
        need(isAdmin(who) && (before.role !== "owner" || who.org === "owner"), `revoke token ${id}`);
        await teams().revokeToken(id, iso());
        const after = (await teams().token(id)) ?? before;
        await audit({ action: "token.revoke", target: id, before: publicToken(before), after: publicToken(after) });
        // A team token's keys end with it; an organisation token's (an admin's automation) stay.
        if (before.team_id !== null) await endKeysOf(id, before.team_id, audit);
        return Response.json(publicToken(after));
      }),
    },
    {
      method: "GET",
      path: "/admin/audit",
      doc: admin(
        "The audit log of admin writes and session events, newest first, a page at a time to its first record",
        ok("A page of records, and the cursor of the next (null on the last page).", ref("AdminAuditList")),
        {
          parameters: [
            query(
              "actor",
              "Only this actor's writes (`admin-key`, `admin-key:previous`, `token:<id>`, `user:<id>`, `sign-on`).",
              {
                type: "string",
              },
            ),
            query("action", "Only this action (`key.create`, `team.update`, `session.create`, …).", {
              type: "string",
            }),
            query("since", "From this instant (ISO 8601), included.", { type: "string" }),
            query("until", "Before this instant (ISO 8601).", { type: "string" }),
            query("limit", "Records per page, 1 to 1000 (default 100).", {
              type: "integer",
              minimum: 1,
              maximum: 1000,
            }),
            query("cursor", "`next_cursor` of the previous page (the same filters apply).", { type: "string" }),
          ],
        },
      ),
      handle: guarded(async ({ request, who }) => {
        need(readsAll(who), "read the audit log");
        const q = new URL(request.url).searchParams;
        const time = (name: string) => {
          const v = q.get(name);
          if (!v) return undefined;
          if (Number.isNaN(Date.parse(v)))
            throw invalid(`${name}: must be an ISO 8601 date or time, got ${JSON.stringify(v.slice(0, 60))}`, name);
          return new Date(v).toISOString();
        };
        const since = time("since");
        const until = time("until");
        const limit = Number(q.get("limit") ?? 100);
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
          throw invalid(`limit: a whole number from 1 to 1000, got ${JSON.stringify(q.get("limit"))}`, "limit");
        const cursor = q.get("cursor");
        // One more than the page says whether another follows.
        const rows = await teams().listAudit({
          ...(q.get("actor") ? { actor: q.get("actor") ?? "" } : {}),
          ...(q.get("action") ? { action: q.get("action") ?? "" } : {}),
          ...(since ? { since } : {}),
          ...(until ? { until } : {}),
          ...(cursor ? { before: decodeAuditCursor(cursor) } : {}),
          limit: limit + 1,
        });
        const data = rows.slice(0, limit);
        const last = data.at(-1);
        return Response.json({ data, next_cursor: rows.length > limit && last ? encodeAuditCursor(last) : null });
      }),
    },
  ];
}
