import { describe, expect, test } from "bun:test";
import { INVALID_KEY } from "./check-auth";
import { AUTH, PATH, sim } from "./test-support";

const messagesBody = { model: "m", max_tokens: 10, messages: [{ role: "user", content: "Hi" }] };
const chatBody = { model: "m", messages: [{ role: "user", content: "Hi" }] };
const generateBody = { contents: [{ role: "user", parts: [{ text: "Hi" }] }] };

describe("authentication, like the real vendors", () => {
  test("messages: x-api-key or Bearer; no version header needed; missing key is a 401 authentication_error", async () => {
    const s = sim();
    expect((await s.post(PATH.messages, messagesBody, { "x-api-key": "any" })).status).toBe(200);
    expect((await s.post(PATH.messages, messagesBody, { authorization: "Bearer any" })).status).toBe(200);
    const res = await s.post(PATH.messages, messagesBody);
    expect(res.status).toBe(401);
    expect(res.headers.get("x-simulator")).toBe("turnpike");
    expect(await res.json()).toEqual({
      type: "error",
      error: { type: "authentication_error", message: "x-api-key header is required" },
      request_id: expect.stringMatching(/^req_sim\d+$/),
    });
  });

  test("messages: the invalid key gets 'invalid x-api-key'", async () => {
    const res = await sim().post(PATH.messages, messagesBody, { "x-api-key": INVALID_KEY });
    expect(res.status).toBe(401);
    expect((await res.json()).error).toEqual({ type: "authentication_error", message: "invalid x-api-key" });
  });

  test("chat: only Bearer; missing is a 401 invalid_request_error, invalid a 401 invalid_api_key", async () => {
    const s = sim();
    expect((await s.post(PATH.chat, chatBody, AUTH.chat)).status).toBe(200);
    const missing = await s.post(PATH.chat, chatBody, { "x-api-key": "k" });
    expect(missing.status).toBe(401);
    const m = await missing.json();
    expect(m.error).toMatchObject({ type: "invalid_request_error", param: null, code: null });
    expect(m.error.message).toStartWith("You didn't provide an API key.");
    const bad = await s.post(PATH.chat, chatBody, { authorization: `Bearer ${INVALID_KEY}` });
    expect(bad.status).toBe(401);
    expect((await bad.json()).error).toMatchObject({
      type: "invalid_request_error",
      code: "invalid_api_key",
      param: null,
    });
  });

  test("generateContent: x-goog-api-key or ?key=; missing is 401 UNAUTHENTICATED, an invalid key 400 API_KEY_INVALID", async () => {
    const s = sim();
    expect((await s.post(PATH.generate("g"), generateBody, AUTH.generate)).status).toBe(200);
    expect((await s.post(`${PATH.generate("g")}?key=abc`, generateBody)).status).toBe(200);
    const missing = await s.post(PATH.generate("g"), generateBody, { authorization: "Bearer k" });
    expect(missing.status).toBe(401);
    expect((await missing.json()).error).toMatchObject({ code: 401, status: "UNAUTHENTICATED" });
    const bad = await s.post(`${PATH.generate("g")}?key=${INVALID_KEY}`, generateBody);
    expect(bad.status).toBe(400);
    const b = await bad.json();
    expect(b.error.status).toBe("INVALID_ARGUMENT");
    expect(b.error.message).toBe("API key not valid. Please pass a valid API key.");
    expect(b.error.details[0]).toMatchObject({
      "@type": "type.googleapis.com/google.rpc.ErrorInfo",
      reason: "API_KEY_INVALID",
    });
  });

  test("the models lists need a key too, and answer in the caller's shape", async () => {
    const s = sim();
    const get = (path: string, headers: Record<string, string> = {}) => s.fetch(`http://sim${path}`, { headers });
    expect((await get("/v1/models")).status).toBe(401);
    const alpha = await (await get("/v1/models", { "x-api-key": "k", "anthropic-version": "2023-06-01" })).json();
    expect(alpha.data[0]).toEqual({
      type: "model",
      id: "alpha-opus-4-8",
      display_name: "alpha-opus-4-8",
      created_at: "2025-10-01T00:00:00Z",
    });
    expect(alpha).toMatchObject({ has_more: false, first_id: "alpha-opus-4-8", last_id: "alpha-haiku-4-5" });
    const beta = await (await get("/v1/models", AUTH.chat)).json();
    expect(beta.object).toBe("list");
    expect(beta.data[0]).toEqual({ id: "beta-5.5", object: "model", created: 1759276800, owned_by: "simulator" });
    const gamma = await (await get("/v1beta/models", AUTH.generate)).json();
    expect(gamma.models[0]).toMatchObject({
      name: "models/gamma-3-pro",
      supportedGenerationMethods: ["generateContent", "countTokens"],
    });
    expect(await (await get("/v1/models/anything", AUTH.chat)).json()).toMatchObject({
      id: "anything",
      object: "model",
    });
  });

  test("an unknown path is a 404 in the envelope of the protocol it looks like", async () => {
    const s = sim();
    const chat = await s.post("/v1/completions", {}, AUTH.chat);
    expect(chat.status).toBe(404);
    expect((await chat.json()).error.message).toBe("Invalid URL (POST /v1/completions)");
    const gamma = await s.post("/v1beta/files", {}, AUTH.generate);
    expect((await gamma.json()).error.status).toBe("NOT_FOUND");
  });
});

describe("odd paths", () => {
  test("a malformed escape in the model segment is served, not a crash", async () => {
    const res = await sim().post(
      "/v1beta/models/bad%E0:generateContent",
      { contents: [{ parts: [{ text: "Hi" }] }] },
      AUTH.generate,
    );
    expect(res.status).toBe(200);
    expect((await res.json()).modelVersion).toBe("bad%E0");
  });
});
