/**
 * The messages-format agent's gateway contract (docs/protocols.md §1.1): the version and beta
 * headers reach a messages upstream unchanged; its session and attribution headers are consumed
 * (logged) and never break a call; a count is served for every model, and a vendor's failing
 * count call is answered with Turnpike's own count, marked `x-turnpike-count: local`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bootGateway, type Gateway } from "../../src/boot";
import { loadConfig } from "../../src/config/config";
import { SqliteStore } from "../../src/storage/sqlite-store";
import { ADMIN_KEY, CATALOG_IDS } from "../harness";

const sent: { url: string; headers: Headers }[] = [];
/** Vendors' count calls fail while this is set (a vendor outage of its count endpoint). */
let countsFail = false;
const upstreamFetch: typeof fetch = Object.assign(
  (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const url = String(input);
    sent.push({ url, headers: new Headers(init?.headers) });
    if (countsFail && /count_tokens|:countTokens|input_tokens/.test(url)) {
      return Promise.resolve(
        Response.json({ type: "error", error: { type: "api_error", message: "count backend down" } }, { status: 500 }),
      );
    }
    return fetch(input, init);
  },
  { preconnect: fetch.preconnect },
);

const lines: Record<string, unknown>[] = [];
let gw: Gateway;
let url: string;
let key: string;

beforeAll(async () => {
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    TURNPIKE_ADMIN_KEY: ADMIN_KEY,
    TURNPIKE_DB: ":memory:",
    TURNPIKE_LOG_LEVEL: "info",
  });
  const destination = { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) };
  gw = await bootGateway(config, {
    store: new SqliteStore(":memory:"),
    firstKey: false,
    logDestination: destination,
    fetch: upstreamFetch,
  });
  gw.app.listen({ port: 0, hostname: "127.0.0.1" });
  url = `http://127.0.0.1:${gw.app.server!.port}`;
  const created = await fetch(`${url}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "t" }),
  });
  key = ((await created.json()) as { key: string }).key;
});
afterAll(async () => {
  await gw.close();
});

/** What the agent sends besides its key: its version, betas, session and attribution headers. */
const AGENT_HEADERS = {
  "anthropic-version": "2023-06-01",
  "anthropic-beta": "claude-code-20250219, future-beta-2031-01-01,interleaved-thinking-2025-05-14",
  "x-claude-code-session-id": "6f7c8d2e-1111-4222-8333-944455556666",
  "x-app": "cli",
  "user-agent": "claude-cli/9.9.9 (external, sdk-cli)",
  "anthropic-dangerous-direct-browser-access": "true",
};

const post = (path: string, body: Record<string, unknown>, extra: Record<string, string> = {}) =>
  fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...AGENT_HEADERS, ...extra },
    body: JSON.stringify(body),
  });

describe("headers", () => {
  test("anthropic-version and anthropic-beta reach the messages upstream as the client sent them", async () => {
    sent.length = 0;
    const res = await post("/v1/messages", {
      model: "alpha-haiku-4-5",
      max_tokens: 32,
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(res.status).toBe(200);
    const call = sent.find((s) => s.url.endsWith("/v1/messages"))!;
    expect(call.headers.get("anthropic-beta")).toBe(AGENT_HEADERS["anthropic-beta"]);
    expect(call.headers.get("anthropic-version")).toBe("2023-06-01");
    // Consumed, not forwarded: the session and attribution headers stay at the gateway.
    expect(call.headers.get("x-claude-code-session-id")).toBeNull();
    expect(call.headers.get("x-app")).toBeNull();
  });

  test("the session and the client are consumed: the request's log line names them", async () => {
    const res = await post("/v1/messages", {
      model: "beta-5",
      max_tokens: 32,
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(res.status).toBe(200);
    const line = lines.find((l) => l.msg === "request" && l.request_id === res.headers.get("x-request-id"));
    expect(line).toMatchObject({
      session: AGENT_HEADERS["x-claude-code-session-id"],
      client: AGENT_HEADERS["user-agent"],
      status: 200,
    });
  });
});

describe("count_tokens", () => {
  test("is served for every catalog model", async () => {
    for (const model of CATALOG_IDS) {
      const res = await post("/v1/messages/count_tokens", {
        model,
        messages: [{ role: "user", content: "How many tokens is this sentence?" }],
      });
      expect({ model, status: res.status }).toEqual({ model, status: 200 });
      expect(((await res.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
    }
  });

  test("a vendor's failing count is answered with the local count, marked local, and logged", async () => {
    const body = {
      model: "alpha-haiku-4-5",
      messages: [{ role: "user", content: "How many tokens is this sentence?" }],
    };
    const upstream = await post("/v1/messages/count_tokens", body);
    expect(upstream.headers.get("x-turnpike-count")).toBe("upstream");
    countsFail = true;
    try {
      for (const model of ["alpha-haiku-4-5", "gamma-3-flash"]) {
        const res = await post("/v1/messages/count_tokens", { ...body, model });
        expect(res.status).toBe(200);
        expect(res.headers.get("x-turnpike-count")).toBe("local");
        expect(((await res.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
        const warned = lines.find(
          (l) =>
            l.request_id === res.headers.get("x-request-id") &&
            l.msg === "vendor count failed; answered with the local count",
        );
        expect(String(warned?.reason)).toStartWith("500");
      }
    } finally {
      countsFail = false;
    }
  });
});
