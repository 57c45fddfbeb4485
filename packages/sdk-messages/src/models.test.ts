import { describe, expect, test } from "bun:test";
import { http, HttpResponse } from "msw";
import { BASE, KEY, useMockGateway } from "../test/use-mock-gateway.js";
import { AuthenticationError, ModelNotFoundError } from "./index.js";

const { turnpike, server, client } = useMockGateway();

describe("models", () => {
  test("list() resolves to the page; iterating it yields every model", async () => {
    const page = await client().models.list();
    expect(page.data.map((m) => m.id)).toContain("alpha-sonnet-4-6");
    expect(page.has_more).toBe(false);
    const ids: string[] = [];
    for await (const model of client().models.list()) ids.push(model.id);
    expect(ids).toEqual(page.data.map((m) => m.id));
    expect(turnpike.lastRequest()?.url).toBe(`${BASE}/v1/models`);
    expect(turnpike.lastRequest()?.apiKey).toBe(KEY);
  });

  test("iteration follows has_more/last_id with after_id", async () => {
    const all = ["m-1", "m-2", "m-3"];
    server.use(
      http.get(`${BASE}/v1/models`, ({ request }) => {
        const after = new URL(request.url).searchParams.get("after_id");
        const data = after ? all.slice(all.indexOf(after) + 1) : all.slice(0, 2);
        const entries = data.map((id) => ({
          id,
          object: "model",
          type: "model",
          display_name: id,
          created: 0,
          created_at: "1970-01-01T00:00:00Z",
          owned_by: "x",
        }));
        return HttpResponse.json({
          object: "list",
          data: entries,
          has_more: !after,
          first_id: data[0],
          last_id: data.at(-1),
        });
      }),
    );
    const ids: string[] = [];
    for await (const model of client().models.list({ limit: 2 })) ids.push(model.id);
    expect(ids).toEqual(all);
  });

  test("retrieve() escapes ids with spaces and parentheses", async () => {
    const model = await client().models.retrieve("alpha-sonnet-4-6 (context-1m beta)");
    expect(model.id).toBe("alpha-sonnet-4-6 (context-1m beta)");
    expect(turnpike.lastRequest()?.url).toBe(`${BASE}/v1/models/alpha-sonnet-4-6%20(context-1m%20beta)`);
  });

  test("retrieve() of an unknown id is a ModelNotFoundError", async () => {
    const err = await client()
      .models.retrieve("alpha-nope")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelNotFoundError);
    expect((err as ModelNotFoundError).model).toBe("alpha-nope");
  });

  test("validate() resolves to the model the key may use", async () => {
    expect((await client().models.validate("beta-5")).id).toBe("beta-5");
  });

  test("validate() names the id and the key's models when the id is not among them", async () => {
    turnpike.setModels(["alpha-haiku-4-5", "beta-5"]);
    const err = await client()
      .models.validate("alpha-haiku-4")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelNotFoundError);
    expect((err as ModelNotFoundError).message).toBe(
      'Model "alpha-haiku-4" is not available to this API key. Models this key can use: alpha-haiku-4-5, beta-5.',
    );
    expect((err as ModelNotFoundError).availableModels).toEqual(["alpha-haiku-4-5", "beta-5"]);
    expect((err as ModelNotFoundError).requestId).toMatch(/^req_mock_/);
  });

  test("validate() with a bad key fails as an AuthenticationError", async () => {
    await expect(client({ apiKey: "sk-nope" }).models.validate("beta-5")).rejects.toBeInstanceOf(AuthenticationError);
  });
});

describe("messages.countTokens", () => {
  test("posts to /v1/messages/count_tokens and returns input_tokens", async () => {
    turnpike.reply({ usage: { input_tokens: 42 } }, { endpoint: "count_tokens" });
    const { input_tokens } = await client().messages.countTokens({
      model: "alpha-sonnet-4-6",
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(input_tokens).toBe(42);
    expect(turnpike.lastRequest()?.url).toBe(`${BASE}/v1/messages/count_tokens`);
    expect(turnpike.bodies("count_tokens")).toEqual([
      { model: "alpha-sonnet-4-6", messages: [{ role: "user", content: "Hi" }] },
    ]);
  });

  test("an unknown model is a ModelNotFoundError", async () => {
    await expect(
      client().messages.countTokens({ model: "x", messages: [{ role: "user", content: "Hi" }] }),
    ).rejects.toBeInstanceOf(ModelNotFoundError);
  });
});
