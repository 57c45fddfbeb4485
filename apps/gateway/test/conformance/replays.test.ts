/**
 * Recorded vendor payloads (packages/simulator/src/__fixtures__, from vercel/ai's recorded
 * fixtures) replayed byte for byte by the simulator, through the gateway to the other client
 * format. The expected values are read off the fixtures by hand: text, tool calls, stop reason
 * and usage (docs/protocols.md §4.4: generateContent output = candidates + thoughts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../harness";
import { callJson, callStream } from "./calls";
import type { Outcome, UsageOutcome } from "./outcome";
import { ALPHA, BETA, GAMMA, type ClientFormat, type Upstream } from "./upstreams";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

interface Reply {
  text?: string;
  tool?: { id: string | RegExp; name: string; args: unknown };
  usage: UsageOutcome;
}

interface Replay {
  name: string;
  upstream: Upstream;
  clients: ("messages" | "chat")[];
  json: Reply;
  stream: Reply;
}

const REPLAYS: Replay[] = [
  {
    name: "openai-text",
    upstream: BETA,
    clients: ["messages"],
    json: { text: "**Holiday Name:** Galaxy Day", usage: { input: 16, output: 363 } },
    stream: { text: "**Holiday.", usage: { input: 16, output: 300 } },
  },
  {
    name: "openai-tool",
    upstream: BETA,
    clients: ["messages"],
    json: {
      tool: { id: "call_qOfTGgDrItLORNfC6VwUbyLL", name: "get_weather", args: { location: "Shanghai" } },
      usage: { input: 91, output: 14 },
    },
    stream: {
      tool: { id: "call_PieqNSej6kM9hgYbcQdbZSaC", name: "get_weather", args: { location: "Paris" } },
      usage: { input: 61, output: 15 },
    },
  },
  {
    name: "anthropic-text",
    upstream: ALPHA,
    clients: ["chat"],
    json: { text: "Hello!", usage: { input: 10, output: 5 } },
    stream: {
      text: "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
      usage: { input: 12, output: 30 },
    },
  },
  {
    name: "anthropic-tool",
    upstream: ALPHA,
    clients: ["chat"],
    json: {
      tool: {
        id: "toolu_01Q9ExVZnzZj7E2QQYHYtNUa",
        name: "json",
        args: {
          elements: [
            { location: "San Francisco", temperature: -5, condition: "snowy" },
            { location: "London", temperature: 0, condition: "snowy" },
            { location: "Paris", temperature: 23, condition: "cloudy" },
            { location: "Berlin", temperature: -9, condition: "snowy" },
          ],
        },
      },
      usage: { input: 1151, output: 87 },
    },
    stream: {
      tool: {
        id: "toolu_01KFbKqPYSuAKujiL6mTfzYA",
        name: "json",
        args: { elements: [{ location: "San Francisco", temperature: 58, condition: "sunny" }] },
      },
      usage: { input: 849, output: 47 },
    },
  },
  {
    name: "google-text",
    upstream: GAMMA,
    clients: ["messages", "chat"],
    json: {
      text: "There are **3** r's in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.",
      usage: { input: 9, output: 28 + 244, reasoning: 244 },
    },
    stream: {
      text: 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y',
      usage: { input: 9, output: 23 + 185, reasoning: 185 },
    },
  },
  {
    name: "google-tool",
    upstream: GAMMA,
    clients: ["messages", "chat"],
    json: {
      tool: { id: GAMMA.toolId, name: "weather", args: { location: "San Francisco" } },
      usage: { input: 29, output: 15 + 893, reasoning: 893 },
    },
    stream: {
      tool: { id: GAMMA.toolId, name: "weather", args: { location: "San Francisco" } },
      usage: { input: 29, output: 15 + 45, reasoning: 45 },
    },
  },
];

/** The outcome a client of `client` format must see for `r` (the tool-call id is checked apart). */
function expected(client: ClientFormat, r: Reply): Outcome {
  const toolCalls = r.tool ? [{ id: "", name: r.tool.name, args: r.tool.args }] : [];
  if (client === "chat") {
    return { text: r.text ?? null, thinking: "", toolCalls, stop: r.tool ? "tool_calls" : "stop", usage: r.usage };
  }
  return {
    text: r.text ?? null,
    thinking: "",
    signatures: [],
    blocks: [r.text ? "text" : "tool_use"],
    toolCalls,
    stop: r.tool ? "tool_use" : "end_turn",
    stopSequence: null,
    usage: r.usage,
  };
}

function check(o: Outcome, client: ClientFormat, r: Reply): void {
  const id = o.toolCalls[0]?.id;
  expect({ ...o, toolCalls: o.toolCalls.map((c) => ({ ...c, id: "" })) }).toEqual(expected(client, r));
  if (r.tool) {
    if (typeof r.tool.id === "string") expect(id).toBe(r.tool.id);
    else expect(id).toMatch(r.tool.id);
  }
}

const TOOLS = {
  messages: [
    {
      name: "get_weather",
      input_schema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
    },
  ],
  chat: [
    {
      type: "function",
      function: {
        name: "get_weather",
        parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
      },
    },
  ],
};

for (const r of REPLAYS) {
  describe(`replay=${r.name} from the ${r.upstream.label} upstream (${r.upstream.model})`, () => {
    for (const client of r.clients) {
      const body = {
        model: r.upstream.model,
        ...(client === "messages" ? { max_tokens: 500 } : {}),
        tools: TOOLS[client],
        messages: [{ role: "user", content: `Replay it. [sim replay=${r.name}]` }],
      };
      test(`${client} client, JSON`, async () => {
        check((await callJson(h, client, body)).outcome, client, r.json);
      });
      test(`${client} client, stream`, async () => {
        const s = await callStream(h, client, body);
        expect(s.error).toBeUndefined();
        check(s.outcome, client, r.stream);
      });
    }
  });
}
