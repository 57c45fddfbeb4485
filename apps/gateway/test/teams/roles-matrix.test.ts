/**
 * Every admin route against every role: a named admin token of each role calls each route, and
 * the reply is a 403 in the admin API's envelope exactly where the role table says so. The table
 * must name every admin route the description document lists.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_KEY, startHarness, type Harness } from "../harness";

type Role = "owner" | "admin" | "viewer" | "team-admin" | "member" | "team-viewer";
const ROLES: Role[] = ["owner", "admin", "viewer", "team-admin", "member", "team-viewer"];

let h: Harness;
let teamA: string;
let teamB: string;
let keyA: string;
let keyB: string;
let userId: string;
const tokens = {} as Record<Role, string>;

async function asAdmin(path: string, method = "GET", body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(h.url + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

let serial = 0;
const unique = (s: string) => `${s}-${++serial}`;

beforeAll(async () => {
  h = await startHarness();
  teamA = (await asAdmin("/admin/teams", "POST", { name: "alpha-team" })).id as string;
  teamB = (await asAdmin("/admin/teams", "POST", { name: "beta-team" })).id as string;
  keyA = (await asAdmin("/admin/keys", "POST", { name: "a", team_id: teamA })).id as string;
  keyB = (await asAdmin("/admin/keys", "POST", { name: "b", team_id: teamB })).id as string;
  userId = (await asAdmin("/admin/users", "POST", { email: "dev@example.com" })).id as string;
  const mint = async (role: string, team?: string) =>
    (await asAdmin("/admin/tokens", "POST", { name: `${role} token`, role, ...(team ? { team_id: team } : {}) }))
      .token as string;
  tokens.owner = await mint("owner");
  tokens.admin = await mint("admin");
  tokens.viewer = await mint("viewer");
  tokens["team-admin"] = await mint("team-admin", teamA);
  tokens.member = await mint("member", teamA);
  tokens["team-viewer"] = await mint("viewer", teamA);
});
afterAll(async () => {
  await h.close();
});

interface Row {
  method: string;
  /** As the description document writes it. */
  route: string;
  /** The concrete call (made fresh for each role when it uses something up). */
  call: () => Promise<{ path: string; body?: unknown }>;
  allowed: Role[];
}

const ORG: Role[] = ["owner", "admin"];
const READERS: Role[] = ["owner", "admin", "viewer"];
const A_ALL: Role[] = [...READERS, "team-admin", "member", "team-viewer"];

const ROWS: Row[] = [
  {
    method: "POST",
    route: "/admin/keys",
    call: async () => ({ path: "/admin/keys", body: { name: "k", team_id: teamA } }),
    allowed: ["owner", "admin", "team-admin", "member"],
  },
  { method: "GET", route: "/admin/keys", call: async () => ({ path: "/admin/keys" }), allowed: A_ALL },
  {
    method: "GET",
    route: "/admin/keys/{id}",
    call: async () => ({ path: `/admin/keys/${keyA}` }),
    allowed: [...READERS, "team-admin", "team-viewer"],
  },
  {
    method: "PATCH",
    route: "/admin/keys/{id}",
    call: async () => ({ path: `/admin/keys/${keyA}`, body: { rpm: 1000 } }),
    allowed: [...ORG, "team-admin"],
  },
  {
    method: "DELETE",
    route: "/admin/keys/{id}",
    call: async () => ({
      path: `/admin/keys/${(await asAdmin("/admin/keys", "POST", { name: "doomed", team_id: teamA })).id}`,
    }),
    allowed: [...ORG, "team-admin"],
  },
  {
    method: "POST",
    route: "/admin/keys/{id}/rotate",
    call: async () => ({ path: `/admin/keys/${keyA}/rotate`, body: { grace_seconds: 0 } }),
    allowed: [...ORG, "team-admin"],
  },
  { method: "GET", route: "/admin/usage", call: async () => ({ path: "/admin/usage" }), allowed: READERS },
  { method: "GET", route: "/admin/usage/daily", call: async () => ({ path: "/admin/usage/daily" }), allowed: READERS },
  // Every key's latency: the org's readers; a team's roles read it only naming a key of theirs.
  {
    method: "GET",
    route: "/admin/usage/latency",
    call: async () => ({ path: "/admin/usage/latency" }),
    allowed: READERS,
  },
  { method: "GET", route: "/admin/requests", call: async () => ({ path: "/admin/requests" }), allowed: READERS },
  {
    method: "GET",
    route: "/admin/guardrails",
    call: async () => ({ path: "/admin/guardrails" }),
    allowed: READERS,
  },
  { method: "GET", route: "/admin/deployments", call: async () => ({ path: "/admin/deployments" }), allowed: A_ALL },
  { method: "GET", route: "/admin/latency", call: async () => ({ path: "/admin/latency" }), allowed: A_ALL },
  { method: "GET", route: "/admin/models", call: async () => ({ path: "/admin/models" }), allowed: A_ALL },
  {
    method: "POST",
    route: "/admin/teams",
    call: async () => ({ path: "/admin/teams", body: { name: unique("t") } }),
    allowed: ORG,
  },
  { method: "GET", route: "/admin/teams", call: async () => ({ path: "/admin/teams" }), allowed: A_ALL },
  {
    method: "GET",
    route: "/admin/teams/{id}",
    call: async () => ({ path: `/admin/teams/${teamB}` }),
    allowed: READERS,
  },
  {
    method: "PATCH",
    route: "/admin/teams/{id}",
    call: async () => ({ path: `/admin/teams/${teamA}`, body: { rpm: 5000 } }),
    allowed: ORG,
  },
  {
    method: "DELETE",
    route: "/admin/teams/{id}",
    call: async () => ({
      path: `/admin/teams/${(await asAdmin("/admin/teams", "POST", { name: unique("gone") })).id}`,
    }),
    allowed: ORG,
  },
  {
    method: "GET",
    route: "/admin/teams/{id}/members",
    call: async () => ({ path: `/admin/teams/${teamA}/members` }),
    allowed: A_ALL,
  },
  {
    method: "POST",
    route: "/admin/teams/{id}/members",
    call: async () => ({ path: `/admin/teams/${teamA}/members`, body: { user_id: userId, role: "member" } }),
    allowed: [...ORG, "team-admin"],
  },
  {
    method: "DELETE",
    route: "/admin/teams/{id}/members/{user_id}",
    call: async () => {
      const u = (await asAdmin("/admin/users", "POST", { email: `${unique("m")}@example.com` })).id as string;
      await asAdmin(`/admin/teams/${teamA}/members`, "POST", { user_id: u, role: "member" });
      return { path: `/admin/teams/${teamA}/members/${u}` };
    },
    allowed: [...ORG, "team-admin"],
  },
  {
    method: "POST",
    route: "/admin/users",
    call: async () => ({ path: "/admin/users", body: { email: `${unique("u")}@example.com` } }),
    allowed: ORG,
  },
  { method: "GET", route: "/admin/users", call: async () => ({ path: "/admin/users" }), allowed: READERS },
  {
    method: "GET",
    route: "/admin/users/{id}",
    call: async () => ({ path: `/admin/users/${userId}` }),
    allowed: READERS,
  },
  {
    method: "PATCH",
    route: "/admin/users/{id}",
    call: async () => ({ path: `/admin/users/${userId}`, body: { name: "Dev" } }),
    allowed: ORG,
  },
  {
    method: "DELETE",
    route: "/admin/users/{id}",
    call: async () => ({
      path: `/admin/users/${(await asAdmin("/admin/users", "POST", { email: `${unique("d")}@example.com` })).id}`,
    }),
    allowed: ORG,
  },
  {
    method: "POST",
    route: "/admin/tokens",
    call: async () => ({ path: "/admin/tokens", body: { name: "ci", role: "viewer" } }),
    allowed: ORG,
  },
  { method: "GET", route: "/admin/tokens", call: async () => ({ path: "/admin/tokens" }), allowed: ORG },
  {
    method: "DELETE",
    route: "/admin/tokens/{id}",
    call: async () => ({
      path: `/admin/tokens/${(await asAdmin("/admin/tokens", "POST", { name: "x", role: "viewer" })).id}`,
    }),
    allowed: ORG,
  },
  { method: "GET", route: "/admin/audit", call: async () => ({ path: "/admin/audit" }), allowed: READERS },
];

describe("role × route matrix", () => {
  test("the table names every admin route of the description document", async () => {
    const doc = (await (await fetch(`${h.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const served = Object.entries(doc.paths)
      .filter(([p]) => p.startsWith("/admin/"))
      .flatMap(([p, ops]) =>
        Object.keys(ops)
          .filter((m) => m !== "parameters")
          .map((m) => `${m.toUpperCase()} ${p}`),
      )
      .sort();
    expect(ROWS.map((r) => `${r.method} ${r.route}`).sort()).toEqual(served);
  });

  for (const row of ROWS) {
    test(`${row.method} ${row.route}`, async () => {
      const seen: Record<string, number> = {};
      for (const role of ROLES) {
        const { path, body } = await row.call();
        const res = await fetch(h.url + path, {
          method: row.method,
          headers: { authorization: `Bearer ${tokens[role]}`, "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        seen[role] = res.status;
        const json = (await res.json()) as { error?: { type?: string; code?: string; message?: string } };
        if (res.status === 403) {
          // The admin API's envelope (the chat format's), saying why.
          expect(json.error?.code).toBe("forbidden");
          expect(json.error?.message).toContain("Your role does not allow this");
        }
      }
      const expected = Object.fromEntries(ROLES.map((r) => [r, row.allowed.includes(r) ? "allowed" : 403]));
      const got = Object.fromEntries(
        ROLES.map((r) => [r, seen[r] === 403 ? 403 : (seen[r] ?? 0) < 300 ? "allowed" : seen[r]]),
      );
      expect(got).toEqual(expected);
    });
  }
});

describe("role rules beyond the table", () => {
  test("an admin may not mint an owner token nor change an owner; an owner may", async () => {
    const mintOwner = (as: string) =>
      fetch(`${h.url}/admin/tokens`, {
        method: "POST",
        headers: { authorization: `Bearer ${as}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "root", role: "owner" }),
      });
    expect((await mintOwner(tokens.admin)).status).toBe(403);
    expect((await mintOwner(tokens.owner)).status).toBe(201);
    const boss = (await asAdmin("/admin/users", "POST", { email: "boss@example.com", role: "owner" })).id as string;
    const patch = (as: string) =>
      fetch(`${h.url}/admin/users/${boss}`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${as}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "The boss" }),
      });
    expect((await patch(tokens.admin)).status).toBe(403);
    expect((await patch(tokens.owner)).status).toBe(200);
  });

  test("a member sees and revokes only its own keys, made in its own team", async () => {
    const as = (path: string, method = "GET", body?: unknown) =>
      fetch(h.url + path, {
        method,
        headers: { authorization: `Bearer ${tokens.member}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const mine = (await (await as("/admin/keys", "POST", { name: "my agent", team_id: teamA })).json()) as {
      id: string;
      key: string;
      team_id: string;
      user_id: string;
    };
    expect(mine.team_id).toBe(teamA);
    expect(mine.user_id).toMatch(/^tok_/);
    expect((await as("/admin/keys", "POST", { name: "elsewhere", team_id: teamB })).status).toBe(403);
    const listed = ((await (await as("/admin/keys")).json()) as { data: { id: string }[] }).data.map((k) => k.id);
    expect(listed).toContain(mine.id);
    expect(listed).not.toContain(keyA);
    expect(listed).not.toContain(keyB);
    expect((await as(`/admin/usage?key_id=${mine.id}`)).status).toBe(200);
    expect((await as(`/admin/usage?key_id=${keyA}`)).status).toBe(403);
    expect((await as(`/admin/keys/${keyA}`, "DELETE")).status).toBe(403);
    expect((await as(`/admin/keys/${mine.id}`, "DELETE")).status).toBe(200);
  });

  test("a revoked token is a 401, like a wrong secret; a token listing shows no secret", async () => {
    const t = (await asAdmin("/admin/tokens", "POST", {
      name: "short",
      role: "viewer",
      expires_at: new Date(Date.now() + 60_000).toISOString(),
    })) as { id: string; token: string; expires_at: string };
    expect(t.expires_at).not.toBeNull();
    const read = () => fetch(`${h.url}/admin/keys`, { headers: { authorization: `Bearer ${t.token}` } });
    expect((await read()).status).toBe(200);
    await asAdmin(`/admin/tokens/${t.id}`, "DELETE");
    expect((await read()).status).toBe(401);
    const past = await fetch(`${h.url}/admin/tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "old", role: "viewer", expires_at: "2020-01-01T00:00:00Z" }),
    });
    expect(past.status).toBe(400);
    const listed = ((await asAdmin("/admin/tokens")) as { data: Record<string, unknown>[] }).data;
    expect(JSON.stringify(listed)).not.toContain(t.token);
    expect(JSON.stringify(listed)).not.toContain(tokens.owner);
    expect(listed.every((x) => x.hash === undefined)).toBe(true);
  });
});
