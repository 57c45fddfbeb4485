import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bootGateway, type Gateway } from "../../src/boot";
import { loadConfig } from "../../src/config/config";
import { ADMIN_KEY } from "../harness";
import { freshDatabase, postgresUp } from "../scaleout/servers";

// Issue 27, item 5: a NUL byte in a response id, `previous_response_id`, a usage filter or a key
// name was a 500 on PostgreSQL (its `text` refuses NUL; SQLite answered 404). Ids, filters and
// names with bytes no stored value has — NUL, a lone UTF-16 surrogate, thousands of characters —
// are now a 404 (ids) or a 400 (filters, names) on both back ends, before any store is asked.

const NUL = "resp_a\u0000b";
const LONE = "resp_\ud800x";
const LONG = `resp_${"a".repeat(5000)}`;
const BAD_IDS = { NUL, LONE, LONG } as const;

/** Percent-encoded as a client would send it; a lone surrogate as the three bytes WTF-8 gives it. */
const enc = (s: string) => encodeURIComponent(s.replace(/\ud800/, "\u00e9")).replace("%C3%A9", "%ED%A0%80");

function backEnd(
  name: string,
  env: () => Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }>,
  skip = false,
) {
  describe.skipIf(skip)(`bad bytes in ids, filters and names (${name})`, () => {
    let gw: Gateway;
    let url = "";
    let key = "";
    let goodResponse = "";
    let cleanup: () => Promise<void> = async () => {};
    const call = (path: string, init: RequestInit = {}, bearer = key) =>
      fetch(url + path, {
        ...init,
        headers: {
          authorization: `Bearer ${bearer}`,
          "content-type": "application/json",
          ...(init.headers as Record<string, string> | undefined),
        },
      });
    const adminCall = (path: string, init: RequestInit = {}) => call(path, init, ADMIN_KEY);

    beforeAll(async () => {
      const made = await env();
      cleanup = made.cleanup;
      gw = await bootGateway(
        loadConfig({
          PORT: "0",
          HOST: "127.0.0.1",
          TURNPIKE_ADMIN_KEY: ADMIN_KEY,
          TURNPIKE_LOG_LEVEL: "warn",
          ...made.env,
        }),
        { firstKey: false },
      );
      gw.app.listen({ port: 0, hostname: "127.0.0.1" });
      url = `http://127.0.0.1:${gw.app.server!.port}`;
      const created = await adminCall("/admin/keys", { method: "POST", body: JSON.stringify({ name: "bad bytes" }) });
      key = ((await created.json()) as { key: string }).key;
      const first = await call("/v1/responses", {
        method: "POST",
        body: JSON.stringify({ model: "beta-5", input: "Remember me" }),
      });
      expect(first.status).toBe(200);
      goodResponse = ((await first.json()) as { id: string }).id;
    });
    afterAll(async () => {
      await gw?.close();
      await cleanup();
    });

    for (const [what, id] of Object.entries(BAD_IDS)) {
      test(`a response id with ${what}: 404 in the Responses envelope on every stored-response route`, async () => {
        for (const [method, path] of [
          ["GET", ""],
          ["GET", "/input_items"],
          ["DELETE", ""],
        ] as const) {
          const res = await call(`/v1/responses/${enc(id)}${path}`, { method });
          expect(`${method} ${path}: ${res.status}`).toBe(`${method} ${path}: 404`);
          expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
        }
      });

      test(`previous_response_id with ${what}: 404 previous_response_not_found, and the stored one still continues`, async () => {
        const res = await call("/v1/responses", {
          method: "POST",
          body: JSON.stringify({ model: "beta-5", previous_response_id: id, input: "Go on" }),
        });
        expect(res.status).toBe(404);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("previous_response_not_found");
      });

      test(`admin key routes with an id with ${what}: 404 key_not_found`, async () => {
        const path = `/admin/keys/${enc(id)}`;
        for (const [method, suffix, body] of [
          ["GET", "", undefined],
          ["PATCH", "", "{}"],
          ["DELETE", "", undefined],
          ["POST", "/rotate", "{}"],
        ] as const) {
          const res = await adminCall(path + suffix, { method, ...(body ? { body } : {}) });
          expect(`${method}${suffix}: ${res.status}`).toBe(`${method}${suffix}: 404`);
        }
      });

      test(`usage filters with ${what}: 400 naming the filter (a lone surrogate cannot cross a query string: no match)`, async () => {
        for (const name of ["key_id", "model"]) {
          const res = await adminCall(`/admin/usage?${name}=${enc(id)}`);
          if (id === LONE) {
            // A query string carries bytes: those of a lone surrogate decode to U+FFFD, which matches nothing.
            expect(`${name}: ${res.status}`).toBe(`${name}: 200`);
            expect(((await res.json()) as { data: unknown[] }).data).toEqual([]);
            continue;
          }
          expect(`${name}: ${res.status}`).toBe(`${name}: 400`);
          expect(((await res.json()) as { error: { param: string } }).error.param).toBe(name);
        }
        const cursor = Buffer.from(JSON.stringify(["2026-01-01T00:00:00.000Z", id])).toString("base64url");
        const res = await adminCall(`/admin/usage?cursor=${cursor}`);
        expect(res.status).toBe(400);
      });

      test(`a key name with ${what}: 400 on create and on update`, async () => {
        const create = await adminCall("/admin/keys", { method: "POST", body: JSON.stringify({ name: id }) });
        expect(create.status).toBe(400);
        expect(((await create.json()) as { error: { param: string } }).error.param).toBe("name");
        const list = (await (await adminCall("/admin/keys")).json()) as { data: { id: string; name: string }[] };
        const mine = list.data.find((k) => k.name === "bad bytes")!;
        const patch = await adminCall(`/admin/keys/${mine.id}`, {
          method: "PATCH",
          body: JSON.stringify({ name: id }),
        });
        expect(patch.status).toBe(400);
      });
    }

    test("the good id still answers: the checks refuse only what no stored value has", async () => {
      expect((await call(`/v1/responses/${goodResponse}`)).status).toBe(200);
      const next = await call("/v1/responses", {
        method: "POST",
        body: JSON.stringify({ model: "beta-5", previous_response_id: goodResponse, input: "Go on" }),
      });
      expect(next.status).toBe(200);
      expect((await adminCall("/admin/usage?model=beta-5")).status).toBe(200);
      expect(
        (await adminCall("/admin/keys", { method: "POST", body: JSON.stringify({ name: "ünïcödé ✓ 😀" }) })).status,
      ).toBe(201);
    });
  });
}

backEnd("SQLite", async () => ({ env: { TURNPIKE_DB: ":memory:" }, cleanup: async () => {} }));

backEnd(
  "PostgreSQL",
  async () => {
    const db = await freshDatabase();
    const dir = mkdtempSync(join(tmpdir(), "turnpike-bad-bytes-"));
    return {
      env: { TURNPIKE_DATABASE_URL: db.url, TURNPIKE_JOURNAL_DIR: dir },
      cleanup: async () => {
        await db.drop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  !postgresUp,
);
