/** Scripting replies and reading captured requests. */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { setupServer } from "msw/node";
import { createTurnpikeMock } from "./index.js";

const BASE = "http://gw.test";
const turnpike = createTurnpikeMock({ baseURL: BASE, apiKey: ["sk-a", "sk-b"], models: ["alpha-haiku-4-5", "beta-5"] });
const server = setupServer(...turnpike.handlers);
beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => turnpike.reset());
afterAll(() => server.close());

const messages = (body: object = {}, key = "sk-a") =>
  fetch(`${BASE}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify({
      model: "alpha-haiku-4-5",
      max_tokens: 10,
      messages: [{ role: "user", content: "Hi" }],
      ...body,
    }),
  });
const chat = (body: object = {}, key = "sk-a") =>
  fetch(`${BASE}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: "beta-5", messages: [{ role: "user", content: "Hi" }], ...body }),
  });
const textOf = async (res: Response) => {
  const body = (await res.json()) as {
    content?: Array<{ text?: string }>;
    choices?: Array<{ message: { content: string } }>;
  };
  return body.content?.[0]?.text ?? body.choices?.[0]?.message.content;
};

describe("scripted replies", () => {
  test("queued replies answer the next requests in order, whichever format, then the default", async () => {
    turnpike.reply({ text: "first" }).reply({ text: "second" });
    expect(await textOf(await chat())).toBe("first");
    expect(await textOf(await messages())).toBe("second");
    expect(await textOf(await messages())).toBe("Hello from the Turnpike mock.");
  });

  test("`times` repeats a reply; `endpoint` aims it at one format", async () => {
    turnpike.reply({ text: "chat only" }, { endpoint: "chat", times: 2 });
    expect(await textOf(await messages())).toBe("Hello from the Turnpike mock.");
    expect(await textOf(await chat())).toBe("chat only");
    expect(await textOf(await chat())).toBe("chat only");
    expect(await textOf(await chat())).toBe("Hello from the Turnpike mock.");
  });

  test("replyAlways sets the reply until reset; queued replies still come first", async () => {
    turnpike.replyAlways({ text: "always" }).reply({ text: "once" });
    expect(await textOf(await messages())).toBe("once");
    expect(await textOf(await messages())).toBe("always");
    expect(await textOf(await chat())).toBe("always");
    turnpike.reset();
    expect(await textOf(await chat())).toBe("Hello from the Turnpike mock.");
  });

  test("a reply can be a function of the captured request", async () => {
    turnpike.replyAlways((req) => ({ text: `you asked ${req.model} to ${req.stream ? "stream" : "answer"}` }));
    expect(await textOf(await chat())).toBe("you asked beta-5 to answer");
  });

  test("fail() answers with an error in the caller's format", async () => {
    turnpike.fail(500, { message: "kaput" }, { times: 2 });
    const m = await messages();
    expect(m.status).toBe(500);
    expect(await m.json()).toMatchObject({ type: "error", error: { type: "api_error", message: "kaput" } });
    const c = await chat();
    expect(await c.json()).toEqual({ error: { message: "kaput", type: "server_error", param: null, code: null } });
  });

  test("fail() can target the models endpoint, e.g. to test start-up checks", async () => {
    turnpike.fail(403, {}, { endpoint: "models" });
    const res = await fetch(`${BASE}/v1/models`, { headers: { authorization: "Bearer sk-a" } });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: { type: "permission_error" } });
  });

  test("networkError makes fetch reject", async () => {
    turnpike.reply({ networkError: true });
    await expect(chat()).rejects.toThrow();
  });

  test("delayMs holds the reply back", async () => {
    turnpike.reply({ text: "late", delayMs: 2_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 5);
    await expect(
      fetch(`${BASE}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: "Bearer sk-a" },
        body: "{}",
        signal: controller.signal,
      }),
    ).rejects.toThrow();
  });
});

describe("gateway rules", () => {
  test("a missing or unknown key is a 401 in the caller's format", async () => {
    const m = await messages({}, "sk-zzz");
    expect(m.status).toBe(401);
    expect(await m.json()).toMatchObject({ error: { type: "authentication_error" } });
    const c = await chat({}, "sk-b");
    expect(c.status).toBe(200);
    const none = await fetch(`${BASE}/v1/chat/completions`, { method: "POST", body: "{}" });
    expect(await none.json()).toMatchObject({ error: { type: "invalid_request_error", code: "invalid_api_key" } });
  });

  test("an invalid body is a 400 naming the field, and the issue is recorded", async () => {
    const res = await messages({ max_tokens: undefined, temperature: 2 });
    expect(res.status).toBe(400);
    const text = JSON.stringify(await res.json());
    expect(text).toContain("max_tokens");
    expect(text).toContain("temperature");
    expect(turnpike.lastRequest()?.issues.length).toBeGreaterThanOrEqual(2);
    expect(turnpike.bodies("messages")).toEqual([]);
  });

  test("a model outside the catalog is a 404 model_not_found", async () => {
    const res = await chat({ model: "gamma-3-pro" });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { type: "invalid_request_error", code: "model_not_found" } });
  });

  test("models list and retrieve serve the catalog; setModels replaces it", async () => {
    const list = (await (await fetch(`${BASE}/v1/models`, { headers: { "x-api-key": "sk-a" } })).json()) as {
      data: Array<{ id: string }>;
      has_more: boolean;
      first_id: string;
    };
    expect(list.data.map((m) => m.id)).toEqual(["alpha-haiku-4-5", "beta-5"]);
    expect(list).toMatchObject({ object: "list", has_more: false, first_id: "alpha-haiku-4-5" });
    turnpike.setModels(["delta-m3"]);
    const one = await fetch(`${BASE}/v1/models/delta-m3`, { headers: { "x-api-key": "sk-a" } });
    expect(await one.json()).toMatchObject({
      id: "delta-m3",
      type: "model",
      object: "model",
      owned_by: "delta",
      display_name: "Delta M3",
    });
    expect((await fetch(`${BASE}/v1/models/beta-5`, { headers: { "x-api-key": "sk-a" } })).status).toBe(404);
  });

  test("count_tokens estimates, or answers what the script says", async () => {
    const count = (body: object) =>
      fetch(`${BASE}/v1/messages/count_tokens`, {
        method: "POST",
        headers: { "x-api-key": "sk-a" },
        body: JSON.stringify(body),
      });
    const body = { model: "alpha-haiku-4-5", messages: [{ role: "user", content: "Hello there" }] };
    expect(((await (await count(body)).json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
    turnpike.reply({ usage: { input_tokens: 99 } }, { endpoint: "count_tokens" });
    expect(await (await count(body)).json()).toEqual({ input_tokens: 99 });
  });
});

describe("captured requests", () => {
  test("each request is recorded with endpoint, key, model, stream flag and headers", async () => {
    await messages({ stream: true }).then((r) => r.text());
    await chat({}, "sk-b");
    expect(turnpike.requests.map((r) => [r.endpoint, r.apiKey, r.model, r.stream])).toEqual([
      ["messages", "sk-a", "alpha-haiku-4-5", true],
      ["chat", "sk-b", "beta-5", false],
    ]);
    expect(turnpike.lastRequest()?.headers.authorization).toBe("Bearer sk-b");
    expect(turnpike.bodies("chat")[0]?.messages).toEqual([{ role: "user", content: "Hi" }]);
  });
});
