/**
 * A team member's key gets at most what an admin granted its team (issue 41, item 1): the team's
 * `key_ceilings` bound tools, models, rpm, tpm, budget and lifetime for anyone but an organisation
 * admin, `key_defaults` fill what a key is made without, a key made with an expiring token ends
 * with it, and a token's keys are revoked with the token. On SQLite in process and on a gateway
 * process on PostgreSQL.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN_KEY, startHarness } from "../harness";
import { ADMIN_KEY as SCALEOUT_ADMIN_KEY, removeDir, startInstance } from "../scaleout/cluster";
import { freshDatabase, postgresUp } from "../scaleout/servers";

const DAY = 86_400_000;

/** A config naming one MCP server (never called here: allow-lists are checked against the names). */
function configFile(): string {
  const path = join(mkdtempSync(join(tmpdir(), "turnpike-member-keys-")), "turnpike.json");
  writeFileSync(path, JSON.stringify({ mcp_servers: [{ name: "docs", url: "http://127.0.0.1:9/mcp" }] }));
  return path;
}

type Reply = { status: number; json: Record<string, unknown> & { error?: { param?: string; message: string } } };

async function scenario(url: string, adminKey: string): Promise<void> {
  const call = async (as: string, method: string, path: string, body?: unknown): Promise<Reply> => {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${as}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, json: (await res.json()) as Reply["json"] };
  };
  const asAdmin = (method: string, path: string, body?: unknown) => call(adminKey, method, path, body);
  const tag = crypto.randomUUID().slice(0, 6);
  const token = async (role: string, team_id: string, expires_at?: string) =>
    (
      await asAdmin("POST", "/admin/tokens", {
        name: `${role} ${tag}`,
        role,
        team_id,
        ...(expires_at ? { expires_at } : {}),
      })
    ).json.token as string;

  // A team with no rules: its member's key may not grant itself MCP tools (the reported attack).
  const open = (await asAdmin("POST", "/admin/teams", { name: `open ${tag}` })).json.id as string;
  const openMember = await token("member", open);
  const all = await call(openMember, "POST", "/admin/keys", { name: "x", team_id: open, tools: ["*"] });
  expect(all.status).toBe(403);
  expect(all.json.error?.param).toBe("tools");
  expect(all.json.error?.message).toContain("no MCP tool is granted");
  const plain = await call(openMember, "POST", "/admin/keys", { name: "plain", team_id: open });
  expect(plain.status).toBe(201);
  expect(plain.json.tools).toBeNull();

  // Defaults past the ceilings are refused when the team is set.
  const bad = await asAdmin("POST", "/admin/teams", {
    name: `bad ${tag}`,
    key_defaults: { rpm: 50 },
    key_ceilings: { rpm: 10 },
  });
  expect(bad.status).toBe(400);
  expect(bad.json.error?.param).toBe("key_defaults.rpm");

  const ruled = await asAdmin("POST", "/admin/teams", {
    name: `ruled ${tag}`,
    key_defaults: { rpm: 5 },
    key_ceilings: {
      models: ["alpha-*"],
      tools: ["docs__read_*"],
      rpm: 10,
      tpm: 20_000,
      budget_usd: 5,
      lifetime_days: 7,
    },
  });
  expect(ruled.status).toBe(201);
  const team = ruled.json.id as string;
  expect((await asAdmin("GET", `/admin/teams/${team}`)).json.key_ceilings).toMatchObject({ rpm: 10, lifetime_days: 7 });
  const member = await token("member", team);

  // Nothing asked: the default where there is one, else the ceiling.
  const before = Date.now();
  const made = await call(member, "POST", "/admin/keys", { name: "mine", team_id: team });
  expect(made.status).toBe(201);
  expect(made.json).toMatchObject({ models: ["alpha-*"], tools: ["docs__read_*"], rpm: 5, tpm: 20_000, budget_usd: 5 });
  const expires = Date.parse(made.json.expires_at as string);
  expect(expires).toBeGreaterThanOrEqual(before + 7 * DAY - 1000);
  expect(expires).toBeLessThanOrEqual(Date.now() + 7 * DAY + 1000);

  // Within the ceiling: granted as asked.
  const within = await call(member, "POST", "/admin/keys", {
    name: "narrow",
    team_id: team,
    tools: ["docs__read_file"],
    rpm: 10,
    budget_usd: 1,
  });
  expect(within.status).toBe(201);
  expect(within.json).toMatchObject({ tools: ["docs__read_file"], rpm: 10, budget_usd: 1 });

  // Past it: a 403 naming the field.
  for (const [field, asked] of [
    ["tools", ["*"]],
    ["tools", ["docs__*"]],
    ["models", ["beta-5"]],
    ["models", null],
    ["rpm", 11],
    ["rpm", null],
    ["tpm", 20_001],
    ["budget_usd", 50],
    ["expires_at", new Date(Date.now() + 30 * DAY).toISOString()],
    ["expires_at", null],
  ] as const) {
    const r = await call(member, "POST", "/admin/keys", { name: "more", team_id: team, [field]: asked });
    expect([field, r.status, r.json.error?.param]).toEqual([field, 403, field]);
    expect(r.json.error?.message).toContain(`${field}: more than this team grants its keys`);
  }

  // A team-admin changing a key stays within the ceiling too; an organisation admin goes past it.
  const teamAdmin = await token("team-admin", team);
  const raised = await call(teamAdmin, "PATCH", `/admin/keys/${made.json.id}`, { rpm: 100 });
  expect([raised.status, raised.json.error?.param]).toEqual([403, "rpm"]);
  expect((await call(teamAdmin, "PATCH", `/admin/keys/${made.json.id}`, { rpm: 8 })).status).toBe(200);
  const byAdmin = await asAdmin("POST", "/admin/keys", { name: "ops", team_id: team, tools: ["*"], rpm: 1000 });
  expect(byAdmin.status).toBe(201);
  expect(byAdmin.json).toMatchObject({ tools: ["*"], rpm: 1000, models: null });

  // An organisation admin's token: keys it makes are not capped by its expiry nor revoked with it.
  const ci = (
    await asAdmin("POST", "/admin/tokens", {
      name: `ci ${tag}`,
      role: "admin",
      expires_at: new Date(Date.now() + DAY).toISOString(),
    })
  ).json as { id: string; token: string };
  const ciKey = await call(ci.token, "POST", "/admin/keys", { name: "prod", team_id: open });
  expect([ciKey.status, ciKey.json.expires_at]).toEqual([201, null]);
  await asAdmin("DELETE", `/admin/tokens/${ci.id}`);
  expect((await asAdmin("GET", `/admin/keys/${ciKey.json.id}`)).json.revoked_at).toBeNull();

  // A key a member makes with an expiring token ends with the token at the latest.
  const soon = new Date(Date.now() + 2 * DAY).toISOString();
  const shortMember = await token("member", open, soon);
  const short = await call(shortMember, "POST", "/admin/keys", { name: "short", team_id: open });
  expect(short.status).toBe(201);
  expect(short.json.expires_at).toBe(soon);

  // The key works until its maker's token is revoked; then it is revoked too.
  const secret = made.json.key as string;
  expect((await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(200);
  const tokenId = (await asAdmin("GET", "/admin/tokens")).json.data as { id: string; name: string; role: string }[];
  const memberToken = tokenId.find(
    (t) => t.name === `member ${tag}` && t.role === "member" && made.json.user_id === t.id,
  );
  expect(memberToken).toBeDefined();
  expect((await asAdmin("DELETE", `/admin/tokens/${memberToken?.id}`)).status).toBe(200);
  for (const id of [made.json.id, within.json.id])
    expect((await asAdmin("GET", `/admin/keys/${id}`)).json.revoked_at).not.toBeNull();
  expect((await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(401);
  const ended = (await asAdmin("GET", "/admin/audit?action=key.revoke")).json.data as {
    target: string;
    after: unknown;
  }[];
  expect(ended.find((r) => r.target === made.json.id)?.after).toMatchObject({ reason: "maker left" });
}

describe("a member's key within its team's grant", () => {
  test("on SQLite", async () => {
    const h = await startHarness({ TURNPIKE_CONFIG: configFile() });
    try {
      await scenario(h.url, ADMIN_KEY);
    } finally {
      await h.close();
    }
  });

  const withPostgres = postgresUp ? test : test.skip;
  withPostgres(
    "on PostgreSQL (a gateway process)",
    async () => {
      const db = await freshDatabase();
      const instance = await startInstance({ TURNPIKE_DATABASE_URL: db.url, TURNPIKE_CONFIG: configFile() });
      try {
        await scenario(instance.url, SCALEOUT_ADMIN_KEY);
      } finally {
        await instance.stop();
        removeDir(instance.journalDir);
        await db.drop();
      }
    },
    120_000,
  );
});
