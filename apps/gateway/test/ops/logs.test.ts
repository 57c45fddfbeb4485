/**
 * The request log: one JSON line per request with what an operator needs, and never a secret —
 * not a Turnpike key (good, wrong or rotated), not the admin key, not a vendor key, even when a
 * vendor echoes its key back in an error — across success, refused keys and upstream failures.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bootGateway, type Gateway } from "../../src/boot";
import { loadConfig } from "../../src/config/config";
import { SqliteStore } from "../../src/storage/sqlite-store";
import { VERSION } from "../../src/vocabulary/version";
import { ADMIN_KEY } from "../harness";

const BETA_KEY = "sk-fake-beta-3f9c2a7d51e84b06";
const ALPHA_KEY = "sk-fake-alpha-8e1b4c9f20d7a653";
const METRICS_KEY = "metrics-fake-0d4e7a2b9c";
const lines: string[] = [];
let gw: Gateway;
let url: string;
let upstream: ReturnType<typeof Bun.serve>;
/** Every secret these tests hand out or present; none may reach a log line. */
const secrets: string[] = [BETA_KEY, ALPHA_KEY, METRICS_KEY, ADMIN_KEY];

/** A vendor speaking the chat protocol that answers by the prompt, and echoes its key in its errors as some do. */
function fakeVendor() {
  return Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const body = (await req.json()) as { model: string; messages: { content: string }[] };
      const said = body.messages.at(-1)?.content ?? "";
      const key = req.headers.get("authorization") ?? "";
      if (said.includes("reject"))
        return Response.json(
          {
            error: {
              message: `Incorrect API key provided: ${key}.`,
              type: "invalid_request_error",
              code: "invalid_api_key",
            },
          },
          { status: 401 },
        );
      if (said.includes("boom"))
        return new Response(`upstream crashed handling ${key} for ${JSON.stringify(Object.fromEntries(req.headers))}`, {
          status: 500,
        });
      return Response.json({
        id: "chatcmpl-fake",
        object: "chat.completion",
        created: 1_770_000_000,
        model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content: "fine" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
      });
    },
  });
}

beforeAll(async () => {
  upstream = fakeVendor();
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    TURNPIKE_DB: ":memory:",
    TURNPIKE_ADMIN_KEY: ADMIN_KEY,
    TURNPIKE_METRICS_KEY: METRICS_KEY,
    TURNPIKE_LOG_LEVEL: "info",
    BETA_API_KEY: BETA_KEY,
    BETA_BASE_URL: `http://127.0.0.1:${upstream.port}/v1`,
    // A port nothing listens on: the alpha upstream cannot be reached.
    ALPHA_API_KEY: ALPHA_KEY,
    ALPHA_BASE_URL: "http://127.0.0.1:9",
  });
  gw = await bootGateway(config, {
    store: new SqliteStore(":memory:"),
    firstKey: false,
    logDestination: { write: (s: string) => void lines.push(s) },
  });
  gw.app.listen({ port: 0, hostname: "127.0.0.1" });
  url = `http://127.0.0.1:${gw.app.server!.port}`;
});
afterAll(async () => {
  await gw.close();
  upstream.stop(true);
});

const admin = (path: string, init: RequestInit = {}, key = ADMIN_KEY) =>
  fetch(url + path, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } });
const chat = (key: string, model: string, content: string, header: "authorization" | "x-api-key" = "authorization") =>
  fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(header === "authorization" ? { authorization: `Bearer ${key}` } : { "x-api-key": key }),
    },
    body: JSON.stringify({ model, messages: [{ role: "user", content }] }),
  });

describe("the request log", () => {
  const requests: { id: string; status: number }[] = [];
  const replies: string[] = [];

  beforeAll(async () => {
    const created = (await (
      await admin("/admin/keys", { method: "POST", body: JSON.stringify({ name: "logged" }) })
    ).json()) as { key: string; id: string };
    const rotated = (await (
      await admin(`/admin/keys/${created.id}/rotate`, { method: "POST", body: JSON.stringify({ grace_seconds: 60 }) })
    ).json()) as { key: string };
    secrets.push(
      created.key,
      rotated.key,
      "sk-tp-not-a-real-key-4c1e9a7b",
      "my-own-password-55271",
      "sk-admin-guessed-0123456789abcdef",
    );
    const calls = [
      chat(created.key, "beta-5.5", "hello"), // the old secret, in its grace period
      chat(rotated.key, "beta-5.5", "hello", "x-api-key"),
      chat("sk-tp-not-a-real-key-4c1e9a7b", "beta-5.5", "hello"),
      chat("my-own-password-55271", "beta-5.5", "hello", "x-api-key"),
      chat(rotated.key, "beta-5.5", "please reject"),
      chat(rotated.key, "beta-5.5", "boom"),
      chat(rotated.key, "alpha-haiku-4-5", "hello"),
    ];
    for (const res of await Promise.all(calls)) {
      replies.push(await res.text());
      requests.push({ id: res.headers.get("x-request-id") ?? "", status: res.status });
    }
    expect(requests.map((r) => r.status)).toEqual([200, 200, 401, 401, 401, 500, 502]);
    expect((await admin("/admin/keys", {}, "sk-admin-guessed-0123456789abcdef")).status).toBe(401);
    expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_KEY}` } })).status).toBe(200);
    await gw.deps.ledger.flush();
  });

  test("the first line names the release starting", () => {
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: "info",
      version: VERSION,
      msg: `Turnpike ${VERSION} starting`,
    });
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+/);
  });

  test("every line is JSON; one request line per request, with its id, key id, model, vendor, status, attempts, latency, tokens and cost", () => {
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const requestLines = parsed.filter((l) => l.msg === "request");
    expect(requestLines.map((l) => l.request_id).sort()).toEqual(requests.map((r) => r.id).sort());
    const byId = new Map(requestLines.map((l) => [l.request_id, l]));
    const ok = byId.get(requests[0]!.id)!;
    expect(ok).toMatchObject({
      level: "info",
      endpoint: "chat",
      model: "beta-5.5",
      vendor: "beta",
      status: 200,
      upstream_status: 200,
      attempts: 1,
      input_tokens: 5,
      output_tokens: 1,
      aborted: false,
    });
    expect(ok.key_id).toMatch(/^key_/);
    expect(ok.latency_ms).toBeGreaterThanOrEqual(0);
    expect(ok.cost_usd).toBeGreaterThan(0);
    expect(typeof ok.time).toBe("string");
    expect(byId.get(requests[2]!.id)).toMatchObject({ status: 401, attempts: 0, endpoint: "chat" });
    expect(byId.get(requests[2]!.id)!.key_id).toBeUndefined();
    // A key refused by its vendor's upstream, or by Turnpike's limits after it was accepted, is named.
    expect(byId.get(requests[4]!.id)).toMatchObject({ status: 401, upstream_status: 401, key_id: ok.key_id });
    expect(byId.get(requests[5]!.id)).toMatchObject({ status: 500, upstream_status: 500, vendor: "beta" });
    expect(byId.get(requests[6]!.id)).toMatchObject({
      status: 502,
      upstream_status: 0,
      vendor: "alpha",
      model: "alpha-haiku-4-5",
    });
  });

  test("no secret reaches any log line", () => {
    expect(lines.length).toBeGreaterThan(requests.length);
    for (const line of lines)
      for (const secret of secrets) expect({ line, leaked: line.includes(secret) }).toEqual({ line, leaked: false });
  });

  test("the client never sees a vendor key either: the vendor's error text reaches it with the key blanked", () => {
    // The two calls the vendor answered with its key quoted (401 and 500).
    for (const i of [4, 5]) {
      expect(replies[i]).not.toContain(BETA_KEY);
      expect(replies[i]).toContain("[redacted]");
    }
    for (const reply of replies) for (const secret of secrets) expect(reply.includes(secret)).toBe(false);
  });

  test("a line that would carry one has it blanked: a vendor's error text, echoing its key, logged as it came", () => {
    const echoed = [`Incorrect API key provided: ${BETA_KEY}.`, `upstream crashed handling ${BETA_KEY}`];
    const before = lines.length;
    for (const text of echoed) gw.deps.logger.warn("upstream said", { reason: text });
    gw.deps.logger.error("failed", { request_id: "req_1" }, new Error(`call with x-api-key: ${secrets[4]} failed`));
    const added = lines.slice(before);
    expect(added.length).toBe(3);
    for (const line of added) {
      for (const secret of secrets) expect(line.includes(secret)).toBe(false);
      expect(line).toContain("[redacted]");
    }
  });
});
