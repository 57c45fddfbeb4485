/**
 * The Vercel AI SDK against every upstream protocol, through each of Turnpike's client formats by
 * the SDK's own provider for it: the OpenAI provider's default (`openai(model)`, the Responses
 * API) and its chat-completions model (`openai.chat(model)`), the Anthropic provider (the messages
 * format) and the Google provider (the generateContent format). Each runs `generateText`,
 * `streamText`, and a multi-step tool loop in which the SDK runs the tool and sends its result back.
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, type LanguageModel, stepCountIs, streamText, tool } from "ai";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { z } from "zod";
import { startHarness, type Harness } from "./harness";
import { DELTA, UPSTREAMS } from "./conformance/upstreams";

let h: Harness;
/** Each provider's model for a catalog id, by the client format it speaks to Turnpike. */
const PROVIDERS: { label: string; model: (id: string) => LanguageModel }[] = [];
beforeAll(async () => {
  h = await startHarness();
  const openai = createOpenAI({ apiKey: h.key, baseURL: `${h.url}/v1` });
  const anthropic = createAnthropic({ apiKey: h.key, baseURL: `${h.url}/v1` });
  const google = createGoogleGenerativeAI({ apiKey: h.key, baseURL: `${h.url}/v1beta` });
  PROVIDERS.push(
    { label: "OpenAI provider, Responses (default)", model: (id) => openai(id) },
    { label: "OpenAI provider, chat completions", model: (id) => openai.chat(id) },
    { label: "Anthropic provider, messages", model: (id) => anthropic(id) },
    { label: "Google provider, generateContent", model: (id) => google(id) },
  );
});
afterAll(async () => {
  await h.close();
});

const PROVIDER_LABELS = [
  "OpenAI provider, Responses (default)",
  "OpenAI provider, chat completions",
  "Anthropic provider, messages",
  "Google provider, generateContent",
];
for (const [i, providerLabel] of PROVIDER_LABELS.entries())
  for (const up of [...UPSTREAMS, DELTA]) {
    describe(`Vercel AI SDK, ${providerLabel} → ${up.model} (${up.label} upstream)`, () => {
      const model = (id: string) => {
        expect(PROVIDERS[i]!.label).toBe(providerLabel);
        return PROVIDERS[i]!.model(id);
      };
      test("generateText", async () => {
        const r = await generateText({
          model: model(up.model),
          prompt: 'Hello [sim text="Hello from Turnpike."]',
          maxRetries: 0,
          maxOutputTokens: 256,
        });
        expect(r.text).toBe("Hello from Turnpike.");
        expect(r.finishReason).toBe("stop");
        expect(r.usage.inputTokens).toBeGreaterThan(0);
        expect(r.usage.outputTokens).toBeGreaterThan(0);
        expect(r.response.modelId).toBe(up.model);
      });

      test("streamText", async () => {
        const s = streamText({
          model: model(up.model),
          prompt: '[sim text="Streamed through Turnpike." chunks=3]',
          maxRetries: 0,
          maxOutputTokens: 256,
        });
        let text = "";
        for await (const piece of s.textStream) text += piece;
        expect(text).toBe("Streamed through Turnpike.");
        expect(await s.finishReason).toBe("stop");
        expect((await s.usage).outputTokens).toBeGreaterThan(0);
      });

      test("a multi-step tool loop: the tool runs, its result goes back, the model answers", async () => {
        const seen: string[] = [];
        const r = await generateText({
          model: model(up.model),
          prompt: "What is the weather in Paris? [sim tools=1]",
          tools: {
            get_weather: tool({
              description: "Current weather of a city",
              inputSchema: z.object({ city: z.string() }),
              execute: async ({ city }) => {
                seen.push(city);
                return { city, celsius: 18 };
              },
            }),
          },
          stopWhen: stepCountIs(3),
          maxRetries: 0,
          maxOutputTokens: 256,
        });
        expect(r.steps.map((s) => s.finishReason)).toEqual(["tool-calls", "stop"]);
        // The simulator fills a required string with "sample <name>".
        expect(seen).toEqual(["sample city"]);
        expect(r.text).toContain("after get_weather");
        // The tool's result reached the upstream on the second step.
        // (as a JSON string in most protocols, as an object in generateContent's functionResponse).
        expect(JSON.stringify(h.gw.simulator!.requests.at(-1)!.body)).toMatch(/\\?"celsius\\?":18/);
      });
    });
  }
