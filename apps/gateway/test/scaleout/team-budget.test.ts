import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { admin, chat, type Instance, newKey, removeDir, spendACent, startInstance, waitFor } from "./cluster";
import { freshDatabase, freshPrefix, postgresUp, redisUp, TEST_REDIS_URL } from "./servers";

/** The worst case one beta-5 request of {@link spendACent} holds: ~30 tokens in, 1,600 out. */
const RESERVATION = 0.0101;

/** A team with a budget and two keys of it (no budgets of their own), made on `a` and seen by the rest. */
async function teamOfTwo(a: Instance, others: Instance[], budget: number) {
  const team = (await (
    await admin(a.url, "POST", "/admin/teams", { name: `race ${crypto.randomUUID().slice(0, 8)}`, budget_usd: budget })
  ).json()) as { id: string };
  const one = await newKey(a.url, { name: "one", team_id: team.id });
  const two = await newKey(a.url, { name: "two", team_id: team.id });
  for (const i of others)
    await waitFor(
      "the keys on every instance",
      async () => (await admin(i.url, "GET", `/admin/keys/${two.id}`)).status === 200 || undefined,
    );
  return { team, one, two };
}

/**
 * 80 requests at once, split between the team's two keys and the instances, on a $0.05 team
 * budget; answers what was admitted and, once their records are in the ledger, what they cost.
 */
async function race(instances: Instance[], budget: number) {
  const [a] = instances as [Instance];
  const { team, one, two } = await teamOfTwo(a, instances.slice(1), budget);
  const results = await Promise.all(
    Array.from({ length: 80 }, (_, i) =>
      spendACent(instances[i % instances.length]!.url, Math.floor(i / instances.length) % 2 ? two.key : one.key),
    ),
  );
  const ok = results.filter((r) => r.status === 200).length;
  const refused = results.filter((r) => r.status === "spent").length;
  const usage = await waitFor("the records of the admitted requests", async () => {
    const rows = (
      (await (await admin(a.url, "GET", "/admin/usage?group_by=team")).json()) as {
        data: { team_id: string; requests: number; cost_usd: number }[];
      }
    ).data;
    const row = rows.find((r) => r.team_id === team.id);
    return row && row.requests === ok ? row : undefined;
  });
  const after = await Promise.all(instances.flatMap((i) => [one, two].map((k) => spendACent(i.url, k.key))));
  return { ok, refused, spent: usage.cost_usd, after: after.map((r) => r.status) };
}

function report(where: string, budget: number, r: { ok: number; spent: number }) {
  console.log(
    `team budget $${budget}, 80 requests of two keys ${where}: ${r.ok} admitted, spent $${r.spent.toFixed(6)} (overspend $${Math.max(0, r.spent - budget).toFixed(6)}, one reservation ≈ $${RESERVATION})`,
  );
}

describe("team budget reserved on one instance (SQLite)", () => {
  let s: Instance;
  beforeAll(async () => {
    s = await startInstance({});
  });
  afterAll(async () => {
    await s.stop();
    removeDir(s.journalDir);
  });

  test("80 requests of two keys at once on a $0.05 team budget: admitted while their worst cases fit, never overspent", async () => {
    const budget = 0.05;
    const r = await race([s], budget);
    report("on one instance", budget, r);
    expect(r.ok + r.refused).toBe(80);
    // Admitted while each one's worst case fit what was left (4 × $0.01014), so never overspent.
    expect(r.spent).toBeLessThanOrEqual(budget);
    expect(r.ok).toBe(4);
    // Spent for both keys from now on.
    expect(r.after).toEqual(["spent", "spent"]);
  }, 60_000);
});

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
      await admin(a.url, "POST", "/admin/teams", { name: "shared", budget_usd: 0.0102 })
    ).json()) as { id: string };
    const one = await newKey(a.url, { name: "one", team_id: team.id });
    const two = await newKey(a.url, { name: "two", team_id: team.id });
    await waitFor(
      "the keys on b",
      async () => (await admin(b.url, "GET", `/admin/keys/${two.id}`)).status === 200 || undefined,
    );
    // Room for one request's worst case ($0.01014): spent by it, about a cent, the rest is too little for another.
    expect((await spendACent(a.url, one.key)).status).toBe(200);
    // The spend is shared through Redis: b sees the team's spend, then refuses the other key.
    const teamOnB = async () =>
      (await (await admin(b.url, "GET", `/admin/teams/${team.id}`)).json()) as { spent_this_month_usd: number };
    await waitFor("the team's spend on b", async () => (await teamOnB()).spent_this_month_usd > 0 || undefined);
    const refused = await chat(b.url, two.key, "hello", 1600);
    expect(refused.status).toBe(429);
    expect(refused.body).toContain("team's monthly budget of $0.0102 has $0.000");
    // One audit log: the team made on a is listed by b.
    const audit = (await (await admin(b.url, "GET", "/admin/audit?action=team.create")).json()) as {
      data: { target: string }[];
    };
    expect(audit.data.map((r) => r.target)).toContain(team.id);
  });

  test("80 requests of two keys at once over both on a $0.05 team budget: admitted while their worst cases fit, never overspent", async () => {
    const budget = 0.05;
    const r = await race([a, b], budget);
    report("over 2 instances", budget, r);
    expect(r.ok + r.refused).toBe(80);
    expect(r.spent).toBeLessThanOrEqual(budget);
    expect(r.ok).toBe(4);
    expect(r.after).toEqual(["spent", "spent", "spent", "spent"]);
  }, 60_000);
});
