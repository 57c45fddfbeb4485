import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCli } from "../../src/cli";
import { loadConfig } from "../../src/config/config";
import { isAdminKey } from "../../src/keys/admin-key";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";

// Issue 11, items 8 (admin side), 9 (admin inputs), 10 (unknown key ids) and 11 (usage listing).

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

async function admin(path: string, method = "GET", body?: unknown, key = ADMIN_KEY) {
  const res = await fetch(h.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe("the admin key", () => {
  test("shorter than 32 characters is refused at start-up, saying so", () => {
    expect(() => loadConfig({ TURNPIKE_ADMIN_KEY: "sk-admin-short-0123456789" })).toThrow(
      "TURNPIKE_ADMIN_KEY must be at least 32 characters long (got 25)",
    );
    expect(loadConfig({ TURNPIKE_ADMIN_KEY: "x".repeat(32) }).adminKey).toBe("x".repeat(32));
  });

  test("compared whole: a prefix, an extension or a same-length guess is not the key", () => {
    expect(isAdminKey(ADMIN_KEY, ADMIN_KEY)).toBe(true);
    for (const guess of [ADMIN_KEY.slice(0, -1), `${ADMIN_KEY}x`, `${ADMIN_KEY.slice(0, -1)}X`, "", "sk-admin"])
      expect(isAdminKey(guess, ADMIN_KEY)).toBe(false);
  });

  test("failures are limited per address in their own counters; the right key always passes", async () => {
    for (let i = 0; i < 30; i++)
      expect((await admin("/admin/keys", "GET", undefined, `sk-admin-guess-${i}-0123456789abcdefghijkl`)).status).toBe(
        401,
      );
    const locked = await admin("/admin/keys", "GET", undefined, "sk-admin-guess-31-0123456789abcdefghijkl");
    expect(locked.status).toBe(429);
    expect(locked.body.error.code).toBe("too_many_failed_auth");
    expect((await admin("/admin/keys")).status).toBe(200);
    // The inference API's counters are others: a good inference key from the same address is served.
    const models = await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${h.key}` } });
    expect(models.status).toBe(200);
    const wrongInferenceKey = await fetch(`${h.url}/v1/models`, { headers: { authorization: "Bearer sk-tp-nope" } });
    expect(wrongInferenceKey.status).toBe(401);
  });
});

describe("admin inputs are validated", () => {
  const refused: [string, Record<string, unknown>, string][] = [
    ["rpm 0", { name: "x", rpm: 0 }, "rpm: must be a whole number from 1 to 1000000"],
    ["rpm beyond bounds", { name: "x", rpm: 1e12 }, "rpm: must be a whole number from 1 to 1000000"],
    ["tpm negative", { name: "x", tpm: -5 }, "tpm: must be a whole number"],
    ["budget 0", { name: "x", budget_usd: 0 }, "budget_usd: must be a number of US dollars above 0"],
    ["budget negative", { name: "x", budget_usd: -6 }, "budget_usd: must be a number of US dollars above 0"],
    ["budget beyond bounds", { name: "x", budget_usd: 1e12 }, "at most 10000000"],
    [
      "model_limits naming no catalog model",
      { name: "x", model_limits: { "gpt-nope": { rpm: 1 } } },
      "model_limits.gpt-nope: not a catalog model id",
    ],
    [
      "model_limits with an unknown field",
      { name: "x", model_limits: { "beta-5": { rps: 1 } } },
      "model_limits.beta-5.rps: unknown field",
    ],
    ["models glob naming nothing", { name: "x", models: ["zeta-*"] }, 'models: "zeta-*" names no catalog model'],
    ["models with a control character", { name: "x", models: ["beta-5\u0000"] }, "is not a model id or glob"],
  ];
  for (const [what, body, message] of refused) {
    test(`${what} → 400 naming the field`, async () => {
      const res = await admin("/admin/keys", "POST", body);
      expect(res.status).toBe(400);
      expect(res.body.error.type).toBe("invalid_request_error");
      expect(res.body.error.message).toContain(message);
    });
  }

  test("valid globs, catalog ids and bounded limits are accepted", async () => {
    const res = await admin("/admin/keys", "POST", {
      name: "ok",
      models: ["gamma-*", "alpha-sonnet-4-6 (context-1m beta)"],
      rpm: 60,
      tpm: 100_000,
      budget_usd: 25,
      model_limits: { "gamma-3-pro": { rpm: 10 } },
    });
    expect(res.status).toBe(201);
    expect(res.body.models).toEqual(["gamma-*", "alpha-sonnet-4-6 (context-1m beta)"]);
  });

  test("an unknown key id says so (not model_not_found)", async () => {
    for (const [method, path] of [
      ["GET", "/admin/keys/key_nope"],
      ["PATCH", "/admin/keys/key_nope"],
      ["DELETE", "/admin/keys/key_nope"],
    ] as const) {
      const res = await admin(path, method, method === "PATCH" ? { name: "y" } : undefined);
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: "key_not_found", message: "No key with id key_nope." });
    }
  });
});

describe("usage listing", () => {
  test("newest first, a page at a time along next_cursor; the CLI follows it to the end", async () => {
    const { body: k } = await admin("/admin/keys", "POST", { name: "pages" });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${h.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${k.key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "beta-5", messages: [{ role: "user", content: `hello ${i}` }] }),
      });
      expect(res.status).toBe(200);
      ids.push(res.headers.get("x-request-id")!);
      await Bun.sleep(2); // distinct instants
    }
    const newestFirst = [...ids].reverse();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const { status, body } = await admin(`/admin/usage?key_id=${k.id}&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(status).toBe(200);
      seen.push(...body.data.map((r: any) => r.request_id));
      cursor = body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(newestFirst);

    const out: string[] = [];
    const io = {
      env: { TURNPIKE_URL: h.url, TURNPIKE_ADMIN_KEY: ADMIN_KEY },
      fetch,
      out: (l: string) => out.push(l),
      err: (l: string) => out.push(l),
    };
    expect(await runCli(["usage", "--key", k.id, "--page-size", "2"], io)).toBe(0);
    expect(JSON.parse(out.join("\n")).data.map((r: any) => r.request_id)).toEqual(newestFirst);
    out.length = 0;
    expect(await runCli(["usage", "--key", k.id, "--page-size", "2", "--limit", "3"], io)).toBe(0);
    expect(JSON.parse(out.join("\n")).data.map((r: any) => r.request_id)).toEqual(newestFirst.slice(0, 3));
  });

  test("a cursor it did not give out is a 400", async () => {
    const res = await admin("/admin/usage?cursor=not-a-cursor");
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe("cursor");
  });
});
