/**
 * The Vercel AI SDK's default OpenAI provider (`openai(model)` calls the Responses API) against
 * every upstream protocol: `generateText`, `streamText`, and a multi-step tool loop in which the
 * SDK runs the tool and sends its result back.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { z } from "zod";
import { startHarness, type Harness } from "./harness";
import { DELTA, UPSTREAMS } from "./conformance/upstreams";

let h: Harness;
let openai: ReturnType<typeof createOpenAI>;
beforeAll(async () => {
  h = await startHarness();
  openai = createOpenAI({ apiKey: h.key, baseURL: `${h.url}/v1` });
});
afterAll(async () => {
  await h.close();
});

for (const up of [...UPSTREAMS, DELTA]) {
  describe(`Vercel AI SDK, default OpenAI provider → ${up.model} (${up.label} upstream)`, () => {
    test("generateText", async () => {
      const r = await generateText({
        model: openai(up.model),
        prompt: 'Hello [sim text="Hello from Turnpike."]',
        maxRetries: 0,
      });
      expect(r.text).toBe("Hello from Turnpike.");
      expect(r.finishReason).toBe("stop");
      expect(r.usage.inputTokens).toBeGreaterThan(0);
      expect(r.usage.outputTokens).toBeGreaterThan(0);
      expect(r.response.modelId).toBe(up.model);
    });

    test("streamText", async () => {
      const s = streamText({
        model: openai(up.model),
        prompt: '[sim text="Streamed through Turnpike." chunks=3]',
        maxRetries: 0,
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
        model: openai(up.model),
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
      });
      expect(r.steps.map((s) => s.finishReason)).toEqual(["tool-calls", "stop"]);
      // The simulator fills a required string with "sample <name>".
      expect(seen).toEqual(["sample city"]);
      expect(r.text).toContain("after get_weather");
      // The tool's result reached the upstream on the second step.
      expect(JSON.stringify(h.gw.simulator!.requests.at(-1)!.body)).toContain('\\"celsius\\":18');
    });
  });
}
