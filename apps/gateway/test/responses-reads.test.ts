/**
 * Issue 27, item 7: reads of stored responses (`GET`/`DELETE /v1/responses/{id}`, its
 * `input_items`) took nothing from the key's rate limit, and `order=sideways` was accepted. They
 * now count one request each against `rpm` (before the lookup: probing ids costs too), and the
 * list's query is checked: `order` asc|desc, `limit` 1–100, `after`/`before` item ids of the list.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_KEY, startHarness, type Harness } from "./harness";
import { SpecWatch } from "./support/open-responses";

// A stopped clock: the buckets never refill during the test, so the counts are exact.
const NOW = Date.parse("2026-11-20T12:00:00Z");
let h: Harness;
beforeAll(async () => {
  h = await startHarness({}, { now: () => NOW });
});
// A stored reply read back is the specification's whole response object, as it was written.
const spec = new SpecWatch();
afterEach(async () => {
  await spec.settle();
  expect(spec.problems).toEqual([]);
});
afterAll(async () => {
  await h.close();
  expect(spec.checked).toBeGreaterThan(0);
});

const call = (key: string, path: string, method = "GET", body?: unknown) =>
  spec.fetch(h.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

async function store(key: string): Promise<string> {
  const input = ["one", "two", "three"].map((text) => ({ role: "user", content: text }));
  const res = await call(key, "/v1/responses", "POST", { model: "beta-5", input });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

describe("stored-response reads and the key's rate limit", () => {
  test("each read takes one request from rpm, with the limit headers; past it, a 429 with retry-after for every read route", async () => {
    const made = await fetch(`${h.url}/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "reader", rpm: 3 }),
    });
    const key = ((await made.json()) as { key: string }).key;
    const id = await store(key); // 1 of 3
    const got = await call(key, `/v1/responses/${id}`); // 2 of 3
    expect(got.status).toBe(200);
    expect(got.headers.get("x-ratelimit-limit-requests")).toBe("3");
    expect(got.headers.get("x-ratelimit-remaining-requests")).toBe("1");
    const items = await call(key, `/v1/responses/${id}/input_items`); // 3 of 3
    expect(items.status).toBe(200);
    expect(items.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    for (const [method, path] of [
      ["GET", ""],
      ["GET", "/input_items"],
      ["DELETE", ""],
    ] as const) {
      const res = await call(key, `/v1/responses/${id}${path}`, method);
      expect(`${method} ${path}: ${res.status}`).toBe(`${method} ${path}: 429`);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("rate_limit_exceeded");
    }
    // Unknown ids cost a request too: nothing to probe for free.
    expect((await call(key, "/v1/responses/resp_unknown")).status).toBe(429);
    // The refused DELETE deleted nothing.
    expect(
      await h.gw.deps.responses.get(
        (await h.gw.deps.keys.list()).find((k) => k.name === "reader")!.id,
        id,
        new Date(NOW).toISOString(),
      ),
    ).toBeDefined();
  });
});

describe("input_items query parameters", () => {
  let id = "";
  let ids: string[] = [];
  beforeAll(async () => {
    id = await store(h.key);
    const all = (await (await call(h.key, `/v1/responses/${id}/input_items?order=asc`)).json()) as {
      data: { id: string }[];
    };
    ids = all.data.map((i) => i.id);
    expect(ids).toHaveLength(3);
  });

  test("order, limit, after and before out of their ranges: a 400 naming the parameter", async () => {
    const bad: [string, string][] = [
      ["order=sideways", "order"],
      ["order=", "order"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=2.5", "limit"],
      ["limit=ten", "limit"],
      ["after=item_nope", "after"],
      ["before=item_nope", "before"],
    ];
    for (const [query, param] of bad) {
      const res = await call(h.key, `/v1/responses/${id}/input_items?${query}`);
      expect(`${query}: ${res.status}`).toBe(`${query}: 400`);
      const error = ((await res.json()) as { error: { param: string; type: string } }).error;
      expect(error).toMatchObject({ param, type: "invalid_request_error" });
    }
  });

  test("pages by after and before, in either order", async () => {
    const page = async (query: string) =>
      (await (await call(h.key, `/v1/responses/${id}/input_items?${query}`)).json()) as {
        data: { id: string }[];
        has_more: boolean;
        first_id: string;
      };
    const desc = await page("order=desc");
    expect(desc.data.map((i) => i.id)).toEqual([...ids].reverse());
    expect(await page(`order=asc&limit=1&after=${ids[0]}`)).toMatchObject({ data: [{ id: ids[1] }], has_more: true });
    expect(await page(`order=asc&limit=1&before=${ids[2]}`)).toMatchObject({ data: [{ id: ids[1] }], has_more: true });
    expect(await page(`order=asc&limit=5&before=${ids[1]}`)).toMatchObject({ data: [{ id: ids[0] }], has_more: false });
    expect(await page(`order=asc&after=${ids[0]}&before=${ids[2]}`)).toMatchObject({
      data: [{ id: ids[1] }],
      has_more: false,
    });
    expect((await page(`order=desc&limit=1&after=${ids[2]}`)).data.map((i) => i.id)).toEqual(ids.slice(1, 2));
  });
});
