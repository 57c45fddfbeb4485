import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { admin, chat, type Instance, newKey, removeDir, startInstance, waitFor } from "./cluster";
import { freshDatabase, freshPrefix, postgresUp, redisUp, TEST_REDIS_URL } from "./servers";

/**
 * A team's budget over two gateway processes on one PostgreSQL and one Redis: the team, made on
 * one instance, is seen by the other; the spend of a key used on one caps the team's other key
 * used on the other; the audit log is one log.
 */
describe.skipIf(!postgresUp || !redisUp)("team budget across two instances", () => {
  let a: Instance;
  let b: Instance;
  const cleanups: (() => Promise<void> | void)[] = [];

  beforeAll(async () => {
    const db = await freshDatabase();
    const prefix = freshPrefix();
    cleanups.push(db.drop, prefix.drop);
    const env = {
      TURNPIKE_DATABASE_URL: db.url,
      TURNPIKE_REDIS_URL: TEST_REDIS_URL,
      TURNPIKE_REDIS_PREFIX: prefix.prefix,
      TURNPIKE_TRUSTED_PROXIES: "127.0.0.1",
    };
    [a, b] = await Promise.all([startInstance(env), startInstance(env)]);
    cleanups.unshift(async () => {
      await Promise.all([a.stop(), b.stop()]);
      removeDir(a.journalDir);
      removeDir(b.journalDir);
    });
  });
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  test("one key's spend on instance a refuses the team's other key on instance b", async () => {
    const team = (await (
      await admin(a.url, "POST", "/admin/teams", { name: "shared", budget_usd: 0.000001 })
    ).json()) as { id: string };
    const one = await newKey(a.url, { name: "one", team_id: team.id });
    const two = await newKey(a.url, { name: "two", team_id: team.id });
    await waitFor(
      "the keys on b",
      async () => (await admin(b.url, "GET", `/admin/keys/${two.id}`)).status === 200 || undefined,
    );
    expect((await chat(a.url, one.key)).status).toBe(200);
    // The spend is shared through Redis: b sees the team's spend, then refuses the other key.
    const teamOnB = async () =>
      (await (await admin(b.url, "GET", `/admin/teams/${team.id}`)).json()) as { spent_this_month_usd: number };
    await waitFor("the team's spend on b", async () => (await teamOnB()).spent_this_month_usd > 0 || undefined);
    const refused = await chat(b.url, two.key);
    expect(refused.status).toBe(429);
    expect(refused.body).toContain("team's monthly budget");
    // One audit log: the team made on a is listed by b.
    const audit = (await (await admin(b.url, "GET", "/admin/audit?action=team.create")).json()) as {
      data: { target: string }[];
    };
    expect(audit.data.map((r) => r.target)).toContain(team.id);
  });
});
