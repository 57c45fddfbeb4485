/**
 * The official GenAI SDK (`@google/genai`) pointed at Turnpike with only a base URL and a key, on
 * all ten catalog models: generateContent, generateContentStream, countTokens, a function-calling
 * round trip, structured output and a chat; the models list; its errors for a bad key and an
 * unknown model; and its other API version (`/v1/models/{model}:…`).
 */
import { ApiError, FinishReason, GoogleGenAI, Type, type Content } from "@google/genai";
import { countTextTokens } from "@turnpike/simulator";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CATALOG_IDS, startHarness, type Harness } from "./harness";

let h: Harness;
let ai: GoogleGenAI;
beforeAll(async () => {
  h = await startHarness();
  ai = new GoogleGenAI({ apiKey: h.key, httpOptions: { baseUrl: h.url } });
});
afterAll(async () => {
  await h.close();
});

const REPLY = "Every format reaches every model.";
const prompt = `Repeat after me. [sim text="${REPLY}"]`;
const WEATHER = {
  name: "get_weather",
  description: "Current weather of a city",
  parametersJsonSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const RESULT = "18 C and sunny";

describe("official GenAI SDK", () => {
  test("lists the key's models with their token limits", async () => {
    const names: string[] = [];
    for await (const m of await ai.models.list()) names.push(m.name ?? "");
    expect(names.sort()).toEqual(CATALOG_IDS.map((id) => `models/${id}`).sort());
    const one = await ai.models.get({ model: "gamma-3-pro" });
    const entry = h.gw.deps.catalog.get("gamma-3-pro")!;
    expect([one.inputTokenLimit, one.outputTokenLimit, one.displayName]).toEqual([
      entry.context_window,
      entry.max_output_tokens,
      "Gamma 3 Pro",
    ]);
  });

  for (const model of CATALOG_IDS) {
    test(`${model}: generateContent, generateContentStream and countTokens`, async () => {
      const reply = await ai.models.generateContent({ model, contents: prompt });
      expect(reply.text).toBe(REPLY);
      expect(reply.modelVersion).toBe(model);
      expect(reply.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
      const usage = reply.usageMetadata!;
      expect(usage.candidatesTokenCount).toBe(countTextTokens(REPLY));
      expect(usage.totalTokenCount).toBe(usage.promptTokenCount! + usage.candidatesTokenCount!);

      let text = "";
      let last: typeof reply | undefined;
      for await (const chunk of await ai.models.generateContentStream({ model, contents: prompt })) {
        text += chunk.text ?? "";
        last = chunk;
      }
      expect(text).toBe(REPLY);
      expect(last?.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
      expect(last?.usageMetadata).toEqual(usage);

      const counted = await ai.models.countTokens({ model, contents: prompt });
      // The upstream's own count where its protocol has a count call; chat upstreams have none,
      // and Turnpike's local tokenizer counts for them (its number differs from the vendor's).
      if (h.gw.deps.catalog.get(model)?.protocol === "chat") expect(counted.totalTokens).toBeGreaterThan(0);
      else expect(counted.totalTokens).toBe(usage.promptTokenCount);
    });

    test(`${model}: a function call, its response, structured output and a chat`, async () => {
      const tools = [{ functionDeclarations: [WEATHER] }];
      const asked: Content = { role: "user", parts: [{ text: "Weather in Paris? [sim tools=1]" }] };
      const call = await ai.models.generateContent({ model, contents: [asked], config: { tools } });
      const fc = call.functionCalls?.[0];
      expect(fc?.name).toBe(WEATHER.name);
      expect(fc?.args).toEqual({ city: "sample city" });
      const answered = await ai.models.generateContent({
        model,
        contents: [
          asked,
          call.candidates![0]!.content!,
          {
            role: "user",
            parts: [{ functionResponse: { id: fc?.id, name: fc!.name!, response: { output: RESULT } } }],
          },
        ],
        config: { tools },
      });
      // The simulator names the result it read: proof that the response reached the model.
      expect(answered.text).toStartWith(
        `Simulated reply from ${model.split(" ")[0]} after ${WEATHER.name} returned: ${RESULT}`,
      );

      const person = await ai.models.generateContent({
        model,
        contents: "Describe a person.",
        config: {
          responseMimeType: "application/json",
          responseSchema: {
            type: Type.OBJECT,
            properties: { name: { type: Type.STRING }, age: { type: Type.INTEGER } },
            required: ["name", "age"],
          },
        },
      });
      expect(JSON.parse(person.text!)).toEqual({ name: "sample name", age: expect.any(Number) });

      const chat = ai.chats.create({ model });
      const first = await chat.sendMessage({ message: prompt });
      expect(first.text).toBe(REPLY);
      let streamed = "";
      for await (const chunk of await chat.sendMessageStream({ message: prompt })) streamed += chunk.text ?? "";
      expect(streamed).toBe(REPLY);
      // The SDK keeps each streamed chunk as a model turn of its own.
      const history = chat.getHistory();
      expect(history.filter((c) => c.role === "user")).toHaveLength(2);
      expect(
        history
          .slice(3)
          .flatMap((c) => c.parts?.map((p) => p.text) ?? [])
          .join(""),
      ).toBe(REPLY);
    });
  }

  test("raises ApiError 401 on a bad key and 404 on an unknown model", async () => {
    const bad = new GoogleGenAI({ apiKey: "sk-wrong", httpOptions: { baseUrl: h.url } });
    const e1 = await bad.models.generateContent({ model: "beta-5", contents: "hi" }).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(ApiError);
    expect((e1 as ApiError).status).toBe(401);
    expect((e1 as ApiError).message).toContain("UNAUTHENTICATED");
    const e2 = await ai.models.generateContent({ model: "no-such-model", contents: "hi" }).catch((e: unknown) => e);
    expect((e2 as ApiError).status).toBe(404);
    expect((e2 as ApiError).message).toContain("NOT_FOUND");
  });

  test("calls the v1 API version too", async () => {
    const v1 = new GoogleGenAI({ apiKey: h.key, httpOptions: { baseUrl: h.url, apiVersion: "v1" } });
    const reply = await v1.models.generateContent({ model: "alpha-haiku-4-5", contents: prompt });
    expect(reply.text).toBe(REPLY);
  });
});
