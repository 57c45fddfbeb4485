/**
 * The generateContent format's routes, through the official GenAI SDK: JSON, the SSE stream, a
 * function call, countTokens, the models list, errors in the format's envelope, the JSON-array
 * stream without `alt=sse`, and what the mock records.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { ApiError, GoogleGenAI } from "@google/genai";
import { setupServer } from "msw/node";
import { createTurnpikeMock } from "./index.js";

const BASE = "http://gw.test";
const turnpike = createTurnpikeMock({ baseURL: BASE, apiKey: "sk-gen" });
const server = setupServer(...turnpike.handlers);
beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => turnpike.reset());
afterAll(() => server.close());

const ai = new GoogleGenAI({ apiKey: "sk-gen", httpOptions: { baseUrl: BASE, apiVersion: "v1beta" } });

describe("generateContent format", () => {
  test("JSON and stream rebuild the same reply; the request is recorded with its path's model", async () => {
    turnpike.reply({ text: "Bonjour à tous 🚀", usage: { input_tokens: 7, output_tokens: 5 } }, { times: 2 });
    const reply = await ai.models.generateContent({ model: "gamma-3-pro", contents: "Hi" });
    expect(reply.text).toBe("Bonjour à tous 🚀");
    expect(reply.modelVersion).toBe("gamma-3-pro");
    expect(reply.usageMetadata).toEqual({ promptTokenCount: 7, candidatesTokenCount: 5, totalTokenCount: 12 });
    let text = "";
    let usage: unknown;
    for await (const chunk of await ai.models.generateContentStream({ model: "gamma-3-pro", contents: "Hi" })) {
      text += chunk.text ?? "";
      usage = chunk.usageMetadata ?? usage;
    }
    expect(text).toBe("Bonjour à tous 🚀");
    expect(usage).toEqual(reply.usageMetadata);
    expect(turnpike.requests.map((r) => [r.endpoint, r.model, r.stream, r.apiKey])).toEqual([
      ["generate", "gamma-3-pro", false, "sk-gen"],
      ["generate", "gamma-3-pro", true, "sk-gen"],
    ]);
    expect(turnpike.bodies("generate")[0]?.contents).toEqual([{ role: "user", parts: [{ text: "Hi" }] }]);
  });

  test("a function call with its id, countTokens and the models list", async () => {
    turnpike.reply({ toolCalls: [{ id: "toolu_9", name: "lookup", input: { q: "x" } }] });
    const call = await ai.models.generateContent({ model: "alpha-haiku-4-5", contents: "Look it up" });
    expect(call.functionCalls).toEqual([{ id: "toolu_9", name: "lookup", args: { q: "x" } }]);
    turnpike.reply({ usage: { input_tokens: 42 } }, { endpoint: "generate_count_tokens" });
    expect((await ai.models.countTokens({ model: "alpha-haiku-4-5", contents: "Count me" })).totalTokens).toBe(42);
    const names: string[] = [];
    for await (const m of await ai.models.list()) names.push(m.name ?? "");
    expect(names).toContain("models/alpha-sonnet-4-6 (context-1m beta)");
  });

  test("errors in the format's envelope, a bad key and an unknown model", async () => {
    turnpike.fail(429, { message: "slow down" });
    const limited = await ai.models.generateContent({ model: "beta-5", contents: "Hi" }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(ApiError);
    expect((limited as ApiError).status).toBe(429);
    expect((limited as ApiError).message).toContain("RESOURCE_EXHAUSTED");
    const bad = new GoogleGenAI({ apiKey: "sk-other", httpOptions: { baseUrl: BASE, apiVersion: "v1beta" } });
    expect(
      ((await bad.models.generateContent({ model: "beta-5", contents: "Hi" }).catch((e: unknown) => e)) as ApiError)
        .status,
    ).toBe(401);
    const missing = await ai.models
      .generateContent({ model: "no-such-model", contents: "Hi" })
      .catch((e: unknown) => e);
    expect((missing as ApiError).message).toContain("NOT_FOUND");
  });

  test("an in-band error ends the stream as an error; without alt=sse the chunks are one JSON array", async () => {
    turnpike.reply({ text: "a b c d", streamError: { status: 503, afterEvents: 2 } });
    const chunks = async () => {
      for await (const _ of await ai.models.generateContentStream({ model: "gamma-3-flash", contents: "Hi" })) {
        // read to the end
      }
    };
    await expect(chunks()).rejects.toThrow("Mocked error with status 503");

    turnpike.reply({ text: "one two" });
    const res = await fetch(`${BASE}/v1beta/models/gamma-3-flash:streamGenerateContent?key=sk-gen`, {
      method: "POST",
      body: JSON.stringify({ contents: [{ parts: [{ text: "Hi" }] }] }),
    });
    expect(res.headers.get("content-type")).toBe("application/json");
    const array = (await res.json()) as {
      candidates: { content: { parts: { text: string }[] }; finishReason?: string }[];
    }[];
    expect(array.map((c) => c.candidates[0]?.content.parts[0]?.text).join("")).toBe("one two");
    expect(array.at(-1)?.candidates[0]?.finishReason).toBe("STOP");
  });
});
