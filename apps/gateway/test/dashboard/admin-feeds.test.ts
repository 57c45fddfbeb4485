import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_KEY, LISTED_IDS, startHarness, type Harness } from "../harness";

// The admin routes the dashboard draws from: usage per day, the request log and the catalog.
// The gateway's clock is set by the test, so records land on known UTC days.
let h: Harness;
let clock = Date.parse("2026-11-20T12:00:00Z");
let otherKey: { id: string; key: string };

const admin = (path: string, init: RequestInit = {}) =>
  fetch(h.url + path, { ...init, headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(init.headers ?? {}) } });
const chat = (key: string, model: string, text: string) =>
  fetch(`${h.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: text }] }),
  });

const SECRET_PROMPT = "the password of the vault is tulip-4417";

beforeAll(async () => {
  h = await startHarness({}, { now: () => clock });
  otherKey = (await (
    await admin("/admin/keys", { method: "POST", body: JSON.stringify({ name: "other" }) })
  ).json()) as any;
  // Day 20: two calls to delta-m3 by the harness key; day 22: one to beta-5 by the other key.
  expect((await chat(h.key, "delta-m3", `${SECRET_PROMPT} [sim text="first reply"]`)).status).toBe(200);
  clock += 60_000;
  expect((await chat(h.key, "delta-m3", `[sim text="second, a little longer reply"]`)).status).toBe(200);
  clock = Date.parse("2026-11-22T08:30:00Z");
  expect((await chat(otherKey.key, "beta-5", `[sim text="third"]`)).status).toBe(200);
});
afterAll(async () => {
  await h.close();
});

/** The ledger's own records, to check the feeds against. */
async function records(): Promise<any[]> {
  return ((await (await admin("/admin/usage")).json()) as any).data;
}

describe("GET /admin/usage/daily", () => {
  test("one zero-filled series per model over the range, equal to the ledger's records", async () => {
    const res = await admin("/admin/usage/daily?by=model&since=2026-11-19&until=2026-11-23");
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.days).toEqual(["2026-11-19", "2026-11-20", "2026-11-21", "2026-11-22", "2026-11-23"]);
    const rows = await records();
    const delta = rows.filter((r) => r.model === "delta-m3");
    const beta = rows.filter((r) => r.model === "beta-5");
    expect(delta).toHaveLength(2);
    expect(beta).toHaveLength(1);
    const tokens = (rs: any[]) => rs.reduce((a, r) => a + r.input_tokens + r.output_tokens, 0);
    const cost = (rs: any[]) => rs.reduce((a, r) => a + r.cost_usd, 0);
    const byId = Object.fromEntries(body.series.map((s: any) => [s.id, s]));
    expect(Object.keys(byId).sort()).toEqual(["beta-5", "delta-m3"]);
    expect(byId["delta-m3"].requests).toEqual([0, 2, 0, 0, 0]);
    expect(byId["delta-m3"].tokens).toEqual([0, tokens(delta), 0, 0, 0]);
    expect(byId["delta-m3"].cost_usd[1]).toBeCloseTo(cost(delta), 12);
    expect(byId["beta-5"].requests).toEqual([0, 0, 0, 1, 0]);
    expect(byId["beta-5"].tokens).toEqual([0, 0, 0, tokens(beta), 0]);
    expect(byId["beta-5"].cost_usd[3]).toBeCloseTo(cost(beta), 12);
    expect(tokens(delta)).toBeGreaterThan(0);
  });

  test("by key, and by default the 14 days up to the gateway's today", async () => {
    const body = (await (await admin("/admin/usage/daily?by=key&since=2026-11-20&until=2026-11-22")).json()) as any;
    const byId = Object.fromEntries(body.series.map((s: any) => [s.id, s.requests]));
    expect(byId).toEqual({ [h.keyId]: [2, 0, 0], [otherKey.id]: [0, 0, 1] });
    const dflt = (await (await admin("/admin/usage/daily")).json()) as any;
    expect(dflt.by).toBe("model");
    expect(dflt.days).toHaveLength(14);
    expect(dflt.days.at(-1)).toBe("2026-11-22");
    expect(dflt.days[0]).toBe("2026-11-09");
  });

  test("a bad range or grouping is a 400 naming the parameter; no admin key is a 401", async () => {
    const cases: [string, string][] = [
      ["by=vendor", "by"],
      ["since=2026-11-23&until=2026-11-20", "until"],
      ["since=2025-01-01&until=2026-11-20", "since"],
      ["since=20-11-2026", "since"],
      ["until=2026-13-45", "until"],
    ];
    for (const [q, param] of cases) {
      const res = await admin(`/admin/usage/daily?${q}`);
      expect(res.status).toBe(400);
      const err = ((await res.json()) as any).error;
      expect(err.type).toBe("invalid_request_error");
      expect(err.param).toBe(param);
    }
    expect((await fetch(`${h.url}/admin/usage/daily`, { headers: { authorization: `Bearer ${h.key}` } })).status).toBe(
      401,
    );
  });
});

describe("GET /admin/usage/latency", () => {
  test("p50, p90 and p99 per model from the ledger, each inside the bucket of its records' latencies", async () => {
    const res = await admin("/admin/usage/latency?by=model&since=2026-11-19T00:00:00Z&until=2026-11-23T00:00:00Z");
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.by).toEqual(["model"]);
    const rows = await records();
    expect(body.data.map((r: any) => [r.model, r.requests])).toEqual([
      ["beta-5", 1],
      ["delta-m3", 2],
    ]);
    const bounds: number[] = body.bucket_bounds_ms;
    const bucketOf = (ms: number) => bounds.findIndex((b) => ms < b);
    for (const row of body.data) {
      const own = rows.filter((r) => r.model === row.model).map((r) => r.latency_ms as number);
      const worst = Math.max(...own);
      const b = bucketOf(worst);
      // Of one or two requests, the p99 is the slowest one's, placed within its bucket.
      expect(row.p99_ms).toBeGreaterThanOrEqual(b === 0 ? 0 : bounds[b - 1]!);
      expect(row.p99_ms).toBeLessThanOrEqual(bounds[b]!);
      expect(row.latency_buckets.reduce((a: number, n: number) => a + n, 0)).toBe(own.length);
    }
  });

  test("an unknown grouping is refused by name", async () => {
    const res = await admin("/admin/usage/latency?by=model,region");
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.message).toBe('by: each of key, model, deployment; got "region"');
  });
});

describe("GET /admin/requests", () => {
  test("newest first, what happened and never what was said", async () => {
    const res = await admin("/admin/requests");
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain("tulip-4417");
    expect(text).not.toContain("first reply");
    const lines = (JSON.parse(text) as any).data;
    expect(lines.map((l: any) => l.model)).toEqual(["beta-5", "delta-m3", "delta-m3"]);
    expect(lines.map((l: any) => l.key_id)).toEqual([otherKey.id, h.keyId, h.keyId]);
    const rows = await records();
    expect(lines.map((l: any) => l.request_id)).toEqual(rows.map((r) => r.request_id));
    const first = rows[0];
    expect(lines[0]).toEqual({
      request_id: first.request_id,
      created_at: "2026-11-22T08:30:00.000Z",
      key_id: otherKey.id,
      model: "beta-5",
      endpoint: "chat",
      stream: false,
      status: 200,
      latency_ms: first.latency_ms,
      input_tokens: first.input_tokens,
      output_tokens: first.output_tokens,
      cost_usd: first.cost_usd,
      aborted: false,
    });
  });

  test("since and limit page the log; bad values are 400s", async () => {
    const since = (await (await admin("/admin/requests?since=2026-11-20T12:01:00Z")).json()) as any;
    expect(since.data.map((l: any) => l.model)).toEqual(["beta-5", "delta-m3"]);
    const one = (await (await admin("/admin/requests?limit=1")).json()) as any;
    expect(one.data).toHaveLength(1);
    expect(one.data[0].model).toBe("beta-5");
    for (const q of ["limit=0", "limit=1001", "limit=x", "since=soon", "cursor=nope"])
      expect((await admin(`/admin/requests?${q}`)).status).toBe(400);
  });

  test("next_cursor walks the whole log a page at a time, newest first, each request once", async () => {
    const whole = (await (await admin("/admin/requests")).json()) as any;
    expect(whole.next_cursor).toBeNull();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = (await (
        await admin(`/admin/requests?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`)
      ).json()) as any;
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((l: any) => l.request_id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(2);
    expect(seen).toEqual(whole.data.map((l: any) => l.request_id));
  });
});

describe("GET /admin/keys", () => {
  test("pages oldest first by cursor, each key once; a bad limit or cursor is a 400", async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await admin("/admin/keys", { method: "POST", body: JSON.stringify({ name: `paged ${i}` }) });
      made.push(((await res.json()) as any).id);
    }
    const whole = (await (await admin("/admin/keys")).json()) as any;
    expect(whole.next_cursor).toBeNull();
    const ids = whole.data.map((k: any) => k.id);
    expect(ids).toEqual(expect.arrayContaining([h.keyId, otherKey.id, ...made]));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = (await (
        await admin(`/admin/keys?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`)
      ).json()) as any;
      expect(page.data.length).toBeLessThanOrEqual(3);
      seen.push(...page.data.map((k: any) => k.id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(Math.ceil(ids.length / 3));
    expect(seen).toEqual(ids);
    for (const q of ["limit=0", "limit=1001", "cursor=nope"])
      expect((await admin(`/admin/keys?${q}`)).status).toBe(400);
  });
});

describe("GET /admin/models", () => {
  test("the whole catalog with its prices and vendor", async () => {
    const body = (await (await admin("/admin/models")).json()) as any;
    expect(body.data.map((m: any) => m.id).sort()).toEqual([...LISTED_IDS].sort());
    const delta = body.data.find((m: any) => m.id === "delta-m3");
    expect(delta.vendor).toBe("delta");
    expect(delta.pricing.input_per_mtok).toBe(0.3);
    expect(delta.pricing.output_per_mtok).toBe(1.2);
    expect((await fetch(`${h.url}/admin/models`)).status).toBe(401);
  });
});
