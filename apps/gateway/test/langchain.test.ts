/**
 * LangChain's chat models against every upstream protocol, through the client format each speaks:
 * `ChatOpenAI` (chat completions, and the Responses API with `useResponsesApi`) and
 * `ChatAnthropic` (the messages format). Each runs `invoke`, `stream`, and a tool round trip: the
 * model asks for a tool, the caller runs it and sends a `ToolMessage` back, the model answers.
 */
import { ChatAnthropic } from "@langchain/anthropic";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { z } from "zod";
import { startHarness, type Harness } from "./harness";
import { DELTA, UPSTREAMS } from "./conformance/upstreams";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const CLIENTS: { label: string; make: (model: string) => BaseChatModel }[] = [
  {
    label: "ChatOpenAI, chat completions",
    make: (model) => new ChatOpenAI({ model, apiKey: h.key, configuration: { baseURL: `${h.url}/v1` }, maxRetries: 0 }),
  },
  {
    label: "ChatOpenAI, Responses API",
    make: (model) =>
      new ChatOpenAI({
        model,
        apiKey: h.key,
        configuration: { baseURL: `${h.url}/v1` },
        useResponsesApi: true,
        maxRetries: 0,
      }),
  },
  {
    label: "ChatAnthropic, messages",
    make: (model) => new ChatAnthropic({ model, apiKey: h.key, anthropicApiUrl: h.url, maxTokens: 256, maxRetries: 0 }),
  },
];

const weather = tool(async ({ city }: { city: string }) => JSON.stringify({ city, celsius: 18 }), {
  name: "get_weather",
  description: "Current weather of a city",
  schema: z.object({ city: z.string() }),
});

function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (typeof p === "string" ? p : p?.type === "text" ? String(p.text) : "")).join("");
}

for (const client of CLIENTS) {
  for (const up of [...UPSTREAMS, DELTA]) {
    describe(`LangChain ${client.label} → ${up.model} (${up.label} upstream)`, () => {
      test("invoke", async () => {
        const reply = await client.make(up.model).invoke('Hello [sim text="Hello from Turnpike."]');
        expect(text(reply.content)).toBe("Hello from Turnpike.");
        expect(reply.usage_metadata?.input_tokens).toBeGreaterThan(0);
        expect(reply.usage_metadata?.output_tokens).toBeGreaterThan(0);
      });

      test("stream", async () => {
        let streamed = "";
        let chunks = 0;
        for await (const chunk of await client
          .make(up.model)
          .stream('[sim text="Streamed through Turnpike." chunks=3]')) {
          streamed += text(chunk.content);
          chunks++;
        }
        expect(streamed).toBe("Streamed through Turnpike.");
        expect(chunks).toBeGreaterThan(1);
      });

      test("a tool round trip: the call, the ToolMessage back, the answer", async () => {
        const model = client.make(up.model);
        if (!model.bindTools) throw new Error("the chat model has no bindTools");
        const withTools = model.bindTools([weather]);
        const question = new HumanMessage("What is the weather in Paris? [sim tools=1]");
        const first = (await withTools.invoke([question])) as AIMessage;
        expect(first.tool_calls?.map((c) => c.name)).toEqual(["get_weather"]);
        const call = first.tool_calls![0]!;
        // The simulator fills a required string with "sample <name>".
        expect(call.args).toEqual({ city: "sample city" });
        const result = await weather.invoke(call.args as { city: string });
        const second = (await withTools.invoke([
          question,
          first,
          new ToolMessage({ content: String(result), tool_call_id: call.id! }),
        ])) as AIMessage;
        expect(text(second.content)).toContain("after get_weather");
        expect(JSON.stringify(h.gw.simulator!.requests.at(-1)!.body)).toMatch(/\\?"celsius\\?":18/);
      });
    });
  }
}
