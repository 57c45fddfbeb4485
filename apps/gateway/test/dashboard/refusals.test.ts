/**
 * Refused requests in the live log (`GET /admin/requests`): a refusal has no usage record, so the
 * gateway keeps its own; each shows its status and the reason the client was given. And the
 * failed requests of the daily usage, for the dashboard's error rate.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config/config";
import { bootGateway } from "../../src/boot";
import { SqliteStore } from "../../src/storage/sqlite-store";
import { ADMIN_KEY, startHarness, type Harness } from "../harness";

let h: Harness;
const admin = (path: string, init: RequestInit = {}) =>
  fetch(h.url + path, { ...init, headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(init.headers ?? {}) } });
const chat = (key: string, body: unknown) =>
  fetch(`${h.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
const hi = (model: string, text = "hi") => ({ model, messages: [{ role: "user", content: text }] });

interface Line {
  request_id: string;
  key_id: string;
  status: number;
  refused?: boolean;
  error_type?: string;
  reason?: string;
  endpoint: string;
}

beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe("the live log", () => {
  test("lists every refused request with its status and the reason the client got, newest first", async () => {
    const limited = (await (
      await admin("/admin/keys", { method: "POST", body: JSON.stringify({ name: "one a minute", rpm: 1 }) })
    ).json()) as { id: string; key: string };
    const made: { status: number; id: string; message: string; type: string; keyId: string }[] = [];
    const call = async (key: string, body: unknown, keyId = "") => {
      const res = await chat(key, body);
      const json = (await res.json()) as { error?: { message: string; type: string } };
      made.push({
        status: res.status,
        id: res.headers.get("x-request-id") ?? "",
        message: json.error?.message ?? "",
        type: json.error?.type ?? "",
        keyId,
      });
    };
    await call("sk-tp-not-a-key-0123456789", hi("beta-5.5"));
    await call(h.key, hi("no-such-model"), h.keyId);
    await call(h.key, "{ not json", h.keyId);
    await call(limited.key, hi("beta-5.5"), limited.id);
    await call(limited.key, hi("beta-5.5"), limited.id);
    expect(made.map((m) => m.status)).toEqual([401, 404, 400, 200, 429]);

    const { data } = (await (await admin("/admin/requests")).json()) as { data: Line[] };
    const refused = made.filter((m) => m.status >= 400);
    for (const m of refused) {
      const line = data.find((l) => l.request_id === m.id);
      expect(line).toMatchObject({
        status: m.status,
        refused: true,
        reason: m.message,
        key_id: m.keyId,
        endpoint: "chat",
      });
      expect(line?.error_type).toBeTruthy();
      expect(m.message.length).toBeGreaterThan(10);
    }
    // The metered request is there too, not marked refused; the newest line is the last refusal.
    expect(data.find((l) => l.request_id === made[3]!.id)?.refused).toBeUndefined();
    expect(data[0]?.request_id).toBe(made[4]!.id);
    // `since` after them all: none.
    const later = new Date(Date.now() + 60_000).toISOString();
    expect(((await (await admin(`/admin/requests?since=${later}`)).json()) as { data: Line[] }).data).toEqual([]);
  });
});

describe("GET /admin/usage/daily", () => {
  test("counts the requests the client saw fail among each series' requests", async () => {
    // An overloaded upstream, told to a chat client as a 503.
    expect((await chat(h.key, hi("alpha-haiku-4-5", "fail [sim error=529]"))).status).toBe(503);
    expect((await chat(h.key, hi("alpha-haiku-4-5"))).status).toBe(200);
    const daily = (await (await admin("/admin/usage/daily?by=model")).json()) as {
      series: { id: string; requests: number[]; errors: number[] }[];
    };
    const alpha = daily.series.find((s) => s.id === "alpha-haiku-4-5");
    expect(alpha?.requests.reduce((a, b) => a + b, 0)).toBe(2);
    expect(alpha?.errors.reduce((a, b) => a + b, 0)).toBe(1);
    const beta = daily.series.find((s) => s.id === "beta-5.5");
    expect(beta?.errors.reduce((a, b) => a + b, 0)).toBe(0);
  });
});

describe("error rates that agree across groupings", () => {
  test("by model, key, team and user: the same requests and the same failures in all", async () => {
    // Another team's key, and an upstream failure under each team.
    const team = (await (
      await admin("/admin/teams", { method: "POST", body: JSON.stringify({ name: "agreeing" }) })
    ).json()) as { id: string };
    const k = (await (
      await admin("/admin/keys", {
        method: "POST",
        body: JSON.stringify({ name: "small", team_id: team.id }),
      })
    ).json()) as { key: string };
    expect((await chat(k.key, hi("beta-5.5"))).status).toBe(200);
    expect((await chat(k.key, hi("beta-5.5", "fail [sim error=500]"))).status).toBe(500);
    expect((await chat(h.key, hi("beta-5.5", "fail [sim error=500]"))).status).toBe(500);
    const totals: Record<string, [number, number]> = {};
    for (const by of ["model", "key", "team", "user"]) {
      const daily = (await (await admin(`/admin/usage/daily?by=${by}`)).json()) as {
        series: { id: string; requests: number[]; errors: number[] }[];
      };
      const sum = (f: "requests" | "errors") => daily.series.flatMap((x) => x[f]).reduce((a, b) => a + b, 0);
      totals[by] = [sum("requests"), sum("errors")];
      if (by === "team") {
        const mine = daily.series.find((x) => x.id === team.id);
        expect(mine?.errors.reduce((a, b) => a + b, 0)).toBe(1);
      }
    }
    expect(totals.model?.[1]).toBeGreaterThanOrEqual(3);
    for (const by of ["key", "team", "user"]) expect(totals[by]).toEqual(totals.model!);
  });

  test("a spent budget shows in the live log as the 429 the chat client saw", async () => {
    const k = (await (
      await admin("/admin/keys", { method: "POST", body: JSON.stringify({ name: "spent", budget_usd: 1 }) })
    ).json()) as { key: string; id: string };
    expect((await chat(k.key, { ...hi("beta-5.5"), max_tokens: 16 })).status).toBe(200);
    // Lowered below what it spent: one call alone never spends a budget whole (its worst case must fit).
    const lowered = await admin(`/admin/keys/${k.id}`, {
      method: "PATCH",
      body: JSON.stringify({ budget_usd: 0.000001 }),
    });
    expect(lowered.status).toBe(200);
    const refused = await chat(k.key, hi("beta-5.5"));
    expect(refused.status).toBe(429);
    const id = refused.headers.get("x-request-id");
    const { data } = (await (await admin("/admin/requests")).json()) as { data: Line[] };
    expect(data.find((l) => l.request_id === id)).toMatchObject({ status: 429, refused: true });
  });
});

test("the first key of a fresh install is in the default team", async () => {
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    TURNPIKE_ADMIN_KEY: ADMIN_KEY,
    TURNPIKE_LOG_LEVEL: "warn",
  });
  const gw = await bootGateway(config, { store: new SqliteStore(":memory:"), firstKey: true });
  try {
    gw.app.listen({ port: 0, hostname: "127.0.0.1" });
    const url = `http://127.0.0.1:${gw.app.server!.port}`;
    expect(gw.firstKey?.secret).toBeTruthy();
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${gw.firstKey!.secret}`, "content-type": "application/json" },
      body: JSON.stringify(hi("beta-5.5")),
    });
    expect(res.status).toBe(200);
    const get = async (path: string) =>
      (await (await fetch(url + path, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json()) as any;
    expect((await get(`/admin/keys/${gw.firstKey!.id}`)).team_id).toBe("team_default");
    const daily = (await get("/admin/usage/daily?by=team")) as { series: { id: string }[] };
    expect(daily.series.map((x) => x.id)).toEqual(["team_default"]);
  } finally {
    await gw.close();
  }
});
