import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_KEY, startHarness, type Harness } from "./harness";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const post = (path: string, body: unknown, dialect: "messages" | "chat", headers: Record<string, string> = {}) =>
  h.call(path, { method: "POST", dialect, headers, body: typeof body === "string" ? body : JSON.stringify(body) });

describe("authentication", () => {
  test("missing key → 401 in each format", async () => {
    const m = await fetch(`${h.url}/v1/messages`, {
      method: "POST",
      headers: { "alpha-version": "2023-06-01" },
      body: "{}",
    });
    expect(m.status).toBe(401);
    expect(m.headers.get("content-type")).toStartWith("application/json");
    const mb = (await m.json()) as any;
    expect(mb.type).toBe("error");
    expect(mb.error.type).toBe("authentication_error");
    expect(mb.error.message).toContain("Missing API key");

    const c = await fetch(`${h.url}/v1/chat/completions`, { method: "POST", body: "{}" });
    expect(c.status).toBe(401);
    const cb = (await c.json()) as any;
    expect(cb.error.code).toBe("invalid_api_key");
    expect(cb.error.type).toBe("invalid_request_error");
    expect(cb.error.param).toBeNull();
  });

  test("wrong key → 401, on every endpoint", async () => {
    for (const [path, method] of [
      ["/v1/models", "GET"],
      ["/v1/models/beta-5", "GET"],
      ["/v1/messages", "POST"],
      ["/v1/chat/completions", "POST"],
      ["/v1/messages/count_tokens", "POST"],
    ] as const) {
      const res = await fetch(h.url + path, {
        method,
        headers: { authorization: "Bearer sk-not-a-real-key" },
        ...(method === "POST" ? { body: "{}" } : {}),
      });
      expect(res.status).toBe(401);
    }
  });

  test("x-api-key and Authorization: Bearer both work", async () => {
    const a = await fetch(`${h.url}/v1/models`, { headers: { "x-api-key": h.key } });
    const b = await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${h.key}` } });
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
  });
});

describe("validation errors name the field and the rule", () => {
  test("malformed JSON → 400 in the caller's format", async () => {
    const m = await post("/v1/messages", "{not json", "messages");
    expect(m.status).toBe(400);
    const mb = (await m.json()) as any;
    expect(mb.error.type).toBe("invalid_request_error");
    expect(mb.error.message).toContain("not valid JSON");
    const c = await post("/v1/chat/completions", "[1,2]", "chat");
    expect(c.status).toBe(400);
    expect(((await c.json()) as any).error.message).toContain("must be a JSON object");
  });

  test("messages: max_tokens is required", async () => {
    const res = await post(
      "/v1/messages",
      { model: "alpha-opus-4-8", messages: [{ role: "user", content: "hi" }] },
      "messages",
    );
    expect(res.status).toBe(400);
    const b = (await res.json()) as any;
    expect(b.error.type).toBe("invalid_request_error");
    expect(b.error.message).toContain("max_tokens");
  });

  test("messages: temperature above 1 and temperature with top_p", async () => {
    const hot = await post(
      "/v1/messages",
      { model: "beta-5", max_tokens: 10, temperature: 1.5, messages: [{ role: "user", content: "hi" }] },
      "messages",
    );
    expect(hot.status).toBe(400);
    const hb = (await hot.json()) as any;
    expect(hb.error.message).toContain("temperature");
    expect(hb.error.message).toContain("1.5");
    const both = await post(
      "/v1/messages",
      { model: "beta-5", max_tokens: 10, temperature: 0.5, top_p: 0.9, messages: [{ role: "user", content: "hi" }] },
      "messages",
    );
    expect(both.status).toBe(400);
    const bb = (await both.json()) as any;
    expect(bb.error.message).toContain("top_p");
  });

  test("chat: temperature up to 2 is fine, above is not; no top-level system", async () => {
    const ok = await post(
      "/v1/chat/completions",
      { model: "beta-5", temperature: 1.7, messages: [{ role: "user", content: "hi" }] },
      "chat",
    );
    expect(ok.status).toBe(200);
    const hot = await post(
      "/v1/chat/completions",
      { model: "beta-5", temperature: 2.5, messages: [{ role: "user", content: "hi" }] },
      "chat",
    );
    expect(hot.status).toBe(400);
    const hb = (await hot.json()) as any;
    expect(hb.error.type).toBe("invalid_request_error");
    expect(hb.error.message).toContain("temperature");
    expect(hb.error.param).toBe("temperature");
    const sys = await post(
      "/v1/chat/completions",
      { model: "beta-5", system: "be nice", messages: [{ role: "user", content: "hi" }] },
      "chat",
    );
    expect(sys.status).toBe(400);
    expect(((await sys.json()) as any).error.message).toContain("system");
  });

  test("never Elysia's 422", async () => {
    const res = await post("/v1/chat/completions", { model: 5, messages: "nope" }, "chat");
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toStartWith("application/json");
  });
});

describe("model_not_found", () => {
  test("unknown model → 404 with model_not_found in each format", async () => {
    const m = await post(
      "/v1/messages",
      { model: "nope-1", max_tokens: 5, messages: [{ role: "user", content: "hi" }] },
      "messages",
    );
    expect(m.status).toBe(404);
    const mb = (await m.json()) as any;
    expect(mb.error.type).toBe("not_found_error");
    expect(mb.error.message).toContain("model_not_found");
    expect(mb.error.message).toContain("nope-1");
    const c = await post(
      "/v1/chat/completions",
      { model: "nope-1", messages: [{ role: "user", content: "hi" }] },
      "chat",
    );
    expect(c.status).toBe(404);
    const cb = (await c.json()) as any;
    expect(cb.error.code).toBe("model_not_found");
  });

  test("a model outside the key's allow-list looks the same as an unknown one", async () => {
    const created = await fetch(`${h.url}/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      body: JSON.stringify({ name: "gamma only", models: ["gamma-*"] }),
    });
    const { key } = (await created.json()) as { key: string };
    const list = await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    const ids = ((await list.json()) as { data: { id: string }[] }).data.map((m) => m.id).sort();
    // The glob takes the vendor's embedding model too.
    expect(ids).toEqual(["gamma-3-flash", "gamma-3-pro", "gamma-embedding-1"]);
    const res = await fetch(`${h.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "beta-5", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.code).toBe("model_not_found");
    const one = await fetch(`${h.url}/v1/models/beta-5`, { headers: { authorization: `Bearer ${key}` } });
    expect(one.status).toBe(404);
  });
});

describe("upstream errors come back in the caller's format", () => {
  test("a 529 from a messages upstream, to a chat client", async () => {
    const res = await post(
      "/v1/chat/completions",
      { model: "alpha-haiku-4-5", messages: [{ role: "user", content: "hi [sim error=529]" }] },
      "chat",
    );
    // "Overloaded" is 529 in the messages format and 503 in the chat format.
    expect(res.status).toBe(503);
    const b = (await res.json()) as any;
    expect(b.error.type).toBe("service_unavailable_error");
    expect(typeof b.error.message).toBe("string");
    const m = await post(
      "/v1/messages",
      { model: "alpha-haiku-4-5", max_tokens: 10, messages: [{ role: "user", content: "hi [sim error=529]" }] },
      "messages",
    );
    expect(m.status).toBe(529);
    expect(((await m.json()) as any).error.type).toBe("overloaded_error");
  });

  test("a 429 from a chat upstream, to a messages client, keeps retry-after", async () => {
    const res = await post(
      "/v1/messages",
      { model: "beta-5", max_tokens: 20, messages: [{ role: "user", content: "hi [sim error=429]" }] },
      "messages",
    );
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).not.toBeNull();
    const b = (await res.json()) as any;
    expect(b.type).toBe("error");
    expect(b.error.type).toBe("rate_limit_error");
  });
});

describe("unknown routes", () => {
  test("404 in the caller's format, not Elysia's text", async () => {
    const res = await fetch(`${h.url}/v1/nothing`, { headers: { authorization: `Bearer ${h.key}` } });
    expect(res.status).toBe(404);
    const b = (await res.json()) as any;
    expect(b.error.message).toContain("/v1/nothing");
  });
});
