/**
 * The audit log against a flood (issue 41, item 2): `GET /admin/audit` pages by an opaque cursor
 * down to the first record, with `since` and `until`; admin writes are limited per principal
 * (`TURNPIKE_ADMIN_WRITES_PER_MINUTE`), a 429 in the admin API's error format, shared by every
 * instance on PostgreSQL and Redis.
 */
import { describe, expect, test } from "bun:test";
import { ADMIN_KEY, startHarness } from "../harness";
import { ADMIN_KEY as SCALEOUT_ADMIN_KEY, type Instance, removeDir, startInstance } from "../scaleout/cluster";
import { freshDatabase, freshPrefix, postgresUp, redisUp, TEST_REDIS_URL } from "../scaleout/servers";

type Audit = { id: string; at: string; action: string; target: string | null };
type Page = { data: Audit[]; next_cursor: string | null };

function caller(url: string) {
  return async (as: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${as}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> };
  };
}

describe("GET /admin/audit, a page at a time", () => {
  test("pages reach the first record, in order, none twice, with until and since", async () => {
    // One instant for every write: the order between them is the id's alone.
    let clock = Date.UTC(2026, 5, 1, 12, 0, 0);
    const h = await startHarness({}, { now: () => clock });
    try {
      const call = caller(h.url);
      const team = (await call(ADMIN_KEY, "POST", "/admin/teams", { name: "audited" })).json.id as string;
      for (let i = 0; i < 230; i++) await call(ADMIN_KEY, "PATCH", `/admin/teams/${team}`, { rpm: i + 1 });
      clock += 60_000;
      for (let i = 0; i < 5; i++) await call(ADMIN_KEY, "PATCH", `/admin/teams/${team}`, { tpm: i + 1000 });

      const seen: Audit[] = [];
      let cursor: string | null = "";
      let pages = 0;
      while (cursor !== null) {
        const r = await call(ADMIN_KEY, "GET", `/admin/audit?limit=100${cursor ? `&cursor=${cursor}` : ""}`);
        expect(r.status).toBe(200);
        const page = r.json as unknown as Page;
        expect(page.data.length).toBeLessThanOrEqual(100);
        seen.push(...page.data);
        cursor = page.next_cursor;
        pages++;
      }
      // The harness's own key, the team, 235 changes: every record, the first one last.
      expect(pages).toBe(3);
      expect(seen).toHaveLength(237);
      expect(new Set(seen.map((r) => r.id)).size).toBe(237);
      expect(seen.at(-1)?.action).toBe("key.create");
      expect(seen.at(-2)?.action).toBe("team.create");
      const order = seen.map((r) => `${r.at}|${r.id}`);
      expect(order).toEqual([...order].sort().reverse());

      // until: before the last minute's five; since: only them.
      const minute = new Date(clock).toISOString();
      const older = (await call(ADMIN_KEY, "GET", `/admin/audit?until=${minute}&limit=1000`)).json as unknown as Page;
      expect(older.data).toHaveLength(232);
      expect(older.next_cursor).toBeNull();
      const newer = (await call(ADMIN_KEY, "GET", `/admin/audit?since=${minute}`)).json as unknown as Page;
      expect(newer.data.map((r) => r.action)).toEqual(Array(5).fill("team.update"));

      // A cursor that was not given out, and a page past the bound: 400s naming the parameter.
      const forged = await call(ADMIN_KEY, "GET", "/admin/audit?cursor=bm90LWEtY3Vyc29y");
      expect([forged.status, (forged.json.error as { param: string }).param]).toEqual([400, "cursor"]);
      const big = await call(ADMIN_KEY, "GET", "/admin/audit?limit=1001");
      expect([big.status, (big.json.error as { param: string }).param]).toEqual([400, "limit"]);
    } finally {
      await h.close();
    }
  });
});

/**
 * A member token makes `limit` writes, then the next is a 429 (its own, not the admin's); reads
 * pass; with `advance`, a minute later it may write again. `urls` are the instances to spread
 * the writes over.
 */
async function writesLimited(urls: string[], adminKey: string, limit: number, advance?: () => void) {
  const call = (i: number) => caller(urls[i % urls.length] ?? "");
  const team = (await call(0)(adminKey, "POST", "/admin/teams", { name: `busy ${crypto.randomUUID()}` })).json
    .id as string;
  const member = (await call(0)(adminKey, "POST", "/admin/tokens", { name: "busy", role: "member", team_id: team }))
    .json.token as string;
  for (let i = 0; i < limit; i++) {
    const made = await call(i)(member, "POST", "/admin/keys", { name: `k${i}`, team_id: team });
    expect(made.status).toBe(201);
  }
  const refused = await call(limit)(member, "POST", "/admin/keys", { name: "one more", team_id: team });
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(refused.json.error).toMatchObject({ type: "requests", code: "admin_write_limit" });
  expect((refused.json.error as { message: string }).message).toContain(`at most ${limit} a minute`);
  // Reads are not writes; another principal has its own allowance.
  expect((await call(limit)(member, "GET", "/admin/keys")).status).toBe(200);
  expect((await call(limit)(adminKey, "POST", "/admin/keys", { name: "admin's", team_id: team })).status).toBe(201);
  // The refused write left no record: the member's keys and the admin's, no more.
  const rows = (await call(0)(adminKey, "GET", "/admin/audit?action=key.create&limit=1000")).json.data as (Audit & {
    after: { team_id: string };
  })[];
  expect(rows.filter((r) => r.after.team_id === team)).toHaveLength(limit + 1);
  // Pages of three reach the same records, in the same order (the store's SQL, here on each database).
  const walked: string[] = [];
  let cursor: string | null = "";
  while (cursor !== null) {
    const page = (
      await call(1)(adminKey, "GET", `/admin/audit?action=key.create&limit=3${cursor ? `&cursor=${cursor}` : ""}`)
    ).json as unknown as Page;
    walked.push(...page.data.map((r) => r.id));
    cursor = page.next_cursor;
  }
  expect(walked).toEqual(rows.map((r) => r.id));
  if (advance) {
    advance();
    expect((await call(0)(member, "POST", "/admin/keys", { name: "later", team_id: team })).status).toBe(201);
  }
}

describe("admin writes limited per principal", () => {
  test("on one instance: a 429 past the limit, again allowed a minute later", async () => {
    let clock = Date.UTC(2026, 5, 1, 12, 0, 0);
    const h = await startHarness({ TURNPIKE_ADMIN_WRITES_PER_MINUTE: "5" }, { now: () => clock });
    try {
      await writesLimited([h.url], ADMIN_KEY, 5, () => {
        clock += 61_000;
      });
    } finally {
      await h.close();
    }
  });

  const shared = postgresUp && redisUp ? test : test.skip;
  shared(
    "shared by two instances on PostgreSQL and Redis",
    async () => {
      const db = await freshDatabase();
      const prefix = freshPrefix();
      const env = {
        TURNPIKE_DATABASE_URL: db.url,
        TURNPIKE_REDIS_URL: TEST_REDIS_URL,
        TURNPIKE_REDIS_PREFIX: prefix.prefix,
        TURNPIKE_ADMIN_WRITES_PER_MINUTE: "6",
      };
      const instances: Instance[] = [];
      try {
        instances.push(await startInstance(env), await startInstance(env));
        await writesLimited(
          instances.map((i) => i.url),
          SCALEOUT_ADMIN_KEY,
          6,
        );
      } finally {
        for (const i of instances) {
          await i.stop();
          removeDir(i.journalDir);
        }
        await db.drop();
        await prefix.drop();
      }
    },
    120_000,
  );
});
