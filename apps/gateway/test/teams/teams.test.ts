/**
 * Teams as a user of the admin API meets them: a key's models and limits are the intersection of
 * its own and its team's, a team budget caps the sum of its keys' spend, every write lands in
 * the audit log, tokens expire, and a store from before teams migrates into a default team.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { runCli } from "../../src/cli";
import { MIGRATIONS, migrateSqlite } from "../../src/storage/migrations";
import { migratePostgres } from "../../src/storage/postgres-migrate";
import { PostgresStore } from "../../src/storage/postgres-store";
import { freshDatabase, postgresUp } from "../scaleout/servers";
import { SqliteStore } from "../../src/storage/sqlite-store";
import { DEFAULT_TEAM_ID, teamStoreOf } from "../../src/teams/team-store";
import { ADMIN_KEY, startHarness, type Harness } from "../harness";

let h: Harness;
let clock = Date.UTC(2026, 10, 15, 12, 0, 0);

async function asAdmin(
  path: string,
  method = "GET",
  body?: unknown,
  as = ADMIN_KEY,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(h.url + path, {
    method,
    headers: { authorization: `Bearer ${as}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const chat = (key: string, model: string) =>
  fetch(`${h.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 16 }),
  });

/** Waits (bounded) until `check` holds. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await Bun.sleep(25);
  }
  throw new Error(`gave up waiting for ${what}`);
}

beforeAll(async () => {
  h = await startHarness({}, { now: () => clock });
});
afterAll(async () => {
  await h.close();
});

describe("a key within its team", () => {
  test("models: both lists apply; rpm: the lower of the two", async () => {
    const team = (await asAdmin("/admin/teams", "POST", { name: "alpha only", models: ["alpha-*"], rpm: 2 })).json;
    expect(team.models).toEqual(["alpha-*"]);
    const open = (await asAdmin("/admin/keys", "POST", { name: "open", team_id: team.id })).json as {
      key: string;
      team_id: string;
    };
    expect(open.team_id).toBe(team.id as string);
    const listed = (
      (await (await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${open.key}` } })).json()) as {
        data: { id: string }[];
      }
    ).data.map((m) => m.id);
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((id) => id.startsWith("alpha-"))).toBe(true);
    expect((await chat(open.key, "beta-5.5")).status).toBe(404);
    // The key's own list narrows further: one alpha model only.
    const narrow = (
      await asAdmin("/admin/keys", "POST", { name: "narrow", team_id: team.id, models: [listed[0], "beta-5.5"] })
    ).json as { key: string };
    const narrowList = (
      (await (await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${narrow.key}` } })).json()) as {
        data: { id: string }[];
      }
    ).data.map((m) => m.id);
    expect(narrowList).toEqual([listed[0] as string]);
    // rpm 2 from the team (the key has none): the third call in a minute is refused.
    expect((await chat(open.key, listed[0] as string)).status).toBe(200);
    expect((await chat(open.key, listed[0] as string)).status).toBe(200);
    const third = await chat(open.key, listed[0] as string);
    expect(third.status).toBe(429);
    expect(((await third.json()) as { error: { message: string } }).error.message).toContain("2 requests per minute");
    // A team's change reaches its keys at once on this instance.
    await asAdmin(`/admin/teams/${team.id}`, "PATCH", { models: null, rpm: null });
    clock += 61_000;
    expect((await chat(open.key, "beta-5.5")).status).toBe(200);
  });

  test("keys made without a team are in the default team, which has no limits", async () => {
    const k = (await asAdmin("/admin/keys", "POST", { name: "plain" })).json as { key: string; team_id: string };
    expect(k.team_id).toBe(DEFAULT_TEAM_ID);
    const def = (await asAdmin(`/admin/teams/${DEFAULT_TEAM_ID}`)).json;
    expect([def.models, def.rpm, def.tpm, def.budget_usd]).toEqual([null, null, null, null]);
    expect((await chat(k.key, "beta-5.5")).status).toBe(200);
    expect((await asAdmin(`/admin/teams/${DEFAULT_TEAM_ID}`, "DELETE")).status).toBe(409);
    expect((await asAdmin("/admin/keys", "POST", { name: "x", team_id: "team_nope" })).status).toBe(400);
  });
});

describe("team budget", () => {
  test("the sum of two keys' spend is capped: once one key spends it, the other is refused too", async () => {
    // Room for one call's worst case (16 output tokens): once it is spent, lowered to what was spent.
    const team = (await asAdmin("/admin/teams", "POST", { name: "frugal", budget_usd: 1 })).json as {
      id: string;
    };
    const one = (await asAdmin("/admin/keys", "POST", { name: "one", team_id: team.id })).json as {
      key: string;
      id: string;
    };
    const two = (await asAdmin("/admin/keys", "POST", { name: "two", team_id: team.id })).json as {
      key: string;
      id: string;
    };
    expect((await chat(one.key, "beta-5.5")).status).toBe(200);
    await until(
      async () => ((await asAdmin(`/admin/teams/${team.id}`)).json.spent_this_month_usd as number) > 0,
      "the team's spend",
    );
    const spent = (await asAdmin(`/admin/teams/${team.id}`)).json.spent_this_month_usd as number;
    expect((await asAdmin(`/admin/teams/${team.id}`, "PATCH", { budget_usd: spent })).status).toBe(200);
    const refused = await chat(two.key, "beta-5.5");
    expect(refused.status).toBe(429); // the chat format's rendering of a spent budget (insufficient_quota)
    const err = ((await refused.json()) as { error: { code: string; message: string } }).error;
    expect(err.code).toBe("insufficient_quota");
    expect(err.message).toContain("team's monthly budget");
    // Its own key budget is unset: the team's is what refused. A larger team budget lets it in again.
    await asAdmin(`/admin/teams/${team.id}`, "PATCH", { budget_usd: 100 });
    expect((await chat(two.key, "beta-5.5")).status).toBe(200);
  });
});

describe("usage by team and by user", () => {
  test("group_by=team and user fold the keys' usage; the daily chart draws one series per team", async () => {
    const team = (await asAdmin("/admin/teams", "POST", { name: "metered" })).json as { id: string };
    const member = (await asAdmin("/admin/tokens", "POST", { name: "dev", role: "member", team_id: team.id })).json as {
      id: string;
      token: string;
    };
    const byAdmin = (await asAdmin("/admin/keys", "POST", { name: "shared", team_id: team.id })).json as {
      key: string;
    };
    const byMember = (await asAdmin("/admin/keys", "POST", { name: "mine", team_id: team.id }, member.token)).json as {
      key: string;
    };
    for (const k of [byAdmin.key, byAdmin.key, byMember.key]) expect((await chat(k, "beta-5.5")).status).toBe(200);
    type Row = { team_id?: string | null; user_id?: string | null; requests: number; cost_usd: number };
    const rows = async (q: string) => (await asAdmin(`/admin/usage?group_by=${q}`)).json.data as Row[];
    await until(
      async () => (await rows("team")).find((r) => r.team_id === team.id)?.requests === 3,
      "the team's three requests",
    );
    const byTeam = (await rows("team")).find((r) => r.team_id === team.id);
    expect(byTeam?.cost_usd).toBeGreaterThan(0);
    const byUser = await rows("user");
    expect(byUser.find((r) => r.user_id === member.id)?.requests).toBe(1);
    expect(byUser.find((r) => r.user_id === "(admin)")?.requests).toBeGreaterThanOrEqual(2);
    // The same totals per model: the team's three calls were all beta-5.5.
    expect(
      (await rows("team,model"))
        .filter((r) => r.team_id === team.id)
        .map((r) => [(r as Row & { model: string }).model, r.requests]),
    ).toEqual([["beta-5.5", 3]]);
    expect((await asAdmin("/admin/usage?group_by=team,key")).status).toBe(400);
    const daily = (await asAdmin(`/admin/usage/daily?by=team&until=${new Date(clock).toISOString().slice(0, 10)}`))
      .json as { by: string; series: { id: string; requests: number[] }[] };
    expect(daily.by).toBe("team");
    expect(daily.series.find((s) => s.id === team.id)?.requests.at(-1)).toBe(3);
  });
});

describe("audit log", () => {
  test("every write is recorded with actor, target, before and after; filters by actor, action and since", async () => {
    const since = new Date(clock).toISOString();
    const tok = (await asAdmin("/admin/tokens", "POST", { name: "ops", role: "admin" })).json as {
      id: string;
      token: string;
    };
    const team = (await asAdmin("/admin/teams", "POST", { name: "audited" }, tok.token)).json as { id: string };
    await asAdmin(`/admin/teams/${team.id}`, "PATCH", { rpm: 10 }, tok.token);
    const key = (await asAdmin("/admin/keys", "POST", { name: "audited key", team_id: team.id }, tok.token)).json as {
      id: string;
      key: string;
    };
    await asAdmin(`/admin/keys/${key.id}`, "DELETE", undefined, tok.token);
    const byToken = (await asAdmin(`/admin/audit?actor=token:${tok.id}&since=${encodeURIComponent(since)}`)).json
      .data as {
      action: string;
      target: string;
      before: Record<string, unknown> | null;
      after: Record<string, unknown> | null;
      address: string;
    }[];
    expect(byToken.map((r) => r.action)).toEqual(["key.revoke", "key.create", "team.update", "team.create"]);
    const update = byToken.find((r) => r.action === "team.update");
    expect([update?.before?.rpm, update?.after?.rpm]).toEqual([null, 10]);
    expect(byToken[0]?.address).toBe("127.0.0.1");
    // No secret in the log, ever.
    const all = JSON.stringify((await asAdmin("/admin/audit?limit=1000")).json);
    expect(all).not.toContain(key.key);
    expect(all).not.toContain(tok.token);
    const created = (await asAdmin("/admin/audit?action=token.create")).json.data as {
      actor: string;
      target: string;
    }[];
    expect(created.some((r) => r.target === tok.id && r.actor === "admin-key")).toBe(true);
    expect(
      (await asAdmin(`/admin/audit?since=${encodeURIComponent(new Date(clock + 60_000).toISOString())}`)).json.data,
    ).toEqual([]);
    expect((await asAdmin("/admin/audit?since=yesterday")).status).toBe(400);
  });
});

describe("audit log covers every write", () => {
  test("each kind of admin write leaves its record", async () => {
    const tok = (await asAdmin("/admin/tokens", "POST", { name: "every-write", role: "owner" })).json as {
      id: string;
      token: string;
    };
    const as = (path: string, method = "GET", body?: unknown) => asAdmin(path, method, body, tok.token);
    const team = (await as("/admin/teams", "POST", { name: "every write" })).json as { id: string };
    await as(`/admin/teams/${team.id}`, "PATCH", { tpm: 1000 });
    const user = (await as("/admin/users", "POST", { email: "every@example.com" })).json as { id: string };
    await as(`/admin/users/${user.id}`, "PATCH", { name: "Every" });
    await as(`/admin/teams/${team.id}/members`, "POST", { user_id: user.id, role: "member" });
    await as(`/admin/teams/${team.id}/members/${user.id}`, "DELETE");
    const key = (await as("/admin/keys", "POST", { name: "k", team_id: team.id })).json as { id: string };
    await as(`/admin/keys/${key.id}`, "PATCH", { rpm: 5 });
    await as(`/admin/keys/${key.id}/rotate`, "POST", { grace_seconds: 0 });
    await as(`/admin/keys/${key.id}`, "DELETE");
    await as(`/admin/teams/${team.id}`, "DELETE");
    await as(`/admin/users/${user.id}`, "DELETE");
    const other = (await as("/admin/tokens", "POST", { name: "other", role: "viewer" })).json as { id: string };
    await as(`/admin/tokens/${other.id}`, "DELETE");
    const actions = ((await asAdmin(`/admin/audit?actor=token:${tok.id}`)).json.data as { action: string }[])
      .map((r) => r.action)
      .reverse();
    expect(actions).toEqual([
      "team.create",
      "team.update",
      "user.create",
      "user.update",
      "team.member.set",
      "team.member.remove",
      "key.create",
      "key.update",
      "key.rotate",
      "key.revoke",
      "team.delete",
      "user.delete",
      "token.create",
      "token.revoke",
    ]);
  });
});

describe("admin tokens", () => {
  test("a token stops working at its expiry", async () => {
    const t = (
      await asAdmin("/admin/tokens", "POST", {
        name: "ci",
        role: "viewer",
        expires_at: new Date(clock + 3_600_000).toISOString(),
      })
    ).json as { token: string };
    expect((await asAdmin("/admin/keys", "GET", undefined, t.token)).status).toBe(200);
    clock += 3_600_000;
    expect((await asAdmin("/admin/keys", "GET", undefined, t.token)).status).toBe(401);
  });
});

describe("CLI", () => {
  test("teams, a key in a team, a named token used by the CLI itself, and the audit log", async () => {
    const run = async (argv: string[], key = ADMIN_KEY) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(argv, {
        env: { TURNPIKE_URL: h.url, TURNPIKE_ADMIN_KEY: key },
        fetch,
        out: (l) => out.push(l),
        err: (l) => err.push(l),
      });
      return { code, json: out.length ? JSON.parse(out.join("\n")) : null, err: err.join("\n") };
    };
    const team = await run([
      "teams",
      "create",
      "--name",
      "cli team",
      "--models",
      "beta-*",
      "--rpm",
      "30",
      "--budget",
      "20",
    ]);
    expect(team.code).toBe(0);
    expect(team.json).toMatchObject({ name: "cli team", models: ["beta-*"], rpm: 30, budget_usd: 20 });
    const key = await run(["keys", "create", "--name", "in team", "--team", team.json.id]);
    expect(key.json.team_id).toBe(team.json.id);
    const token = await run(["tokens", "create", "--name", "ci", "--role", "team-admin", "--team", team.json.id]);
    expect(token.json.token).toMatch(/^tp-adm-/);
    // The CLI with the team-admin token: its team's keys only; no audit log.
    const listed = await run(["keys", "list"], token.json.token);
    expect(listed.json.data.map((k: { id: string }) => k.id)).toEqual([key.json.id]);
    const denied = await run(["audit"], token.json.token);
    expect(denied.code).toBe(2);
    expect(denied.err).toContain("403");
    const audit = await run(["audit", "--action", "token.create", "--limit", "5"]);
    expect(audit.json.data[0].target).toBe(token.json.id);
    expect((await run(["tokens", "revoke", token.json.id])).json.revoked_at).not.toBeNull();
    expect((await run(["teams", "list"])).json.data.some((t: { id: string }) => t.id === team.json.id)).toBe(true);
  });
});

describe("migration from flat keys", () => {
  test.skipIf(!postgresUp)("a version-5 PostgreSQL store's keys land in the default team too", async () => {
    const db = await freshDatabase();
    const sql = new SQL(db.url, { max: 1 });
    try {
      await migratePostgres(
        sql,
        MIGRATIONS.filter((m) => m.version <= 5),
      );
      await sql`INSERT INTO keys (id, name, hash, prefix, rpm, created_at, updated_at) VALUES ('key_pg', 'old', ${"cd".repeat(32)}, 'sk-tp-old', 9, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`;
      await sql.close();
      const store = await PostgresStore.open(db.url, { max: 2 });
      const [k] = await store.listKeys();
      expect(k).toMatchObject({ id: "key_pg", team_id: DEFAULT_TEAM_ID, rpm: 9, models: null });
      expect(await teamStoreOf(store).team(DEFAULT_TEAM_ID)).toMatchObject({
        name: "default",
        models: null,
        rpm: null,
        tpm: null,
        budget_usd: null,
      });
      await store.close();
    } finally {
      await sql.close().catch(() => {});
      await db.drop();
    }
  });

  test("a version-5 SQLite store's keys land in the default team, unchanged otherwise", async () => {
    const dir = mkdtempSync(join(tmpdir(), "turnpike-teams-"));
    try {
      const path = join(dir, "old.db");
      const db = new Database(path, { create: true, strict: true });
      migrateSqlite(
        db,
        MIGRATIONS.filter((m) => m.version <= 5),
      );
      db.query(
        "INSERT INTO keys (id, name, hash, prefix, models, rpm, tpm, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      ).run(
        "key_old",
        "old",
        "ab".repeat(32),
        "sk-tp-old",
        '["beta-*"]',
        7,
        null,
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:00.000Z",
      );
      db.close();
      const store = new SqliteStore(path);
      const [k] = await store.listKeys();
      expect(k).toMatchObject({ id: "key_old", team_id: DEFAULT_TEAM_ID, models: ["beta-*"], rpm: 7, tpm: null });
      expect(k?.user_id).toBeUndefined();
      const team = await teamStoreOf(store).team(DEFAULT_TEAM_ID);
      expect(team).toMatchObject({ name: "default", models: null, rpm: null, tpm: null, budget_usd: null });
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
