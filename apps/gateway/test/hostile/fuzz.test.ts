import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Harness, startHarness } from "../harness";
import { errorMessageOf } from "./bad-upstream";

// Issue 11, tests: a fuzzer in the suite. Seeded (the same requests every run) and bounded (a
// 1,500 requests, a few seconds): mutations of valid requests of every client format, to
// models of every upstream protocol, JSON and stream, most of them still valid enough to pass
// validation and reach the converters. No 5xx, and every body in the caller's own format.

const SEED = 0x7e11;
const ROUNDS = 1500;

/** mulberry32: a small seeded generator, so that a failure names a request that can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const TOOL = {
  name: "get_weather",
  description: "Weather of a city",
  input_schema: {
    type: "object",
    properties: { city: { type: "string" }, days: { type: "integer" } },
    required: ["city"],
  },
};

const MESSAGES_BASES: Record<string, unknown>[] = [
  { max_tokens: 200, messages: [{ role: "user", content: "Hello there" }] },
  {
    max_tokens: 300,
    system: "Be brief.",
    stop_sequences: ["END"],
    temperature: 0.5,
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "Describe this" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
        ],
      },
    ],
  },
  {
    max_tokens: 400,
    tools: [TOOL],
    tool_choice: { type: "auto" },
    messages: [
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Checking." },
          { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris", days: 2 } },
        ],
      },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_01", content: [{ type: "text", text: "Sunny, 21C" }] }],
      },
    ],
  },
  {
    max_tokens: 4096,
    thinking: { type: "enabled", budget_tokens: 1024 },
    messages: [{ role: "user", content: "Think, then answer: 2+2?" }],
  },
];

const CHAT_BASES: Record<string, unknown>[] = [
  { messages: [{ role: "user", content: "Hello there" }] },
  {
    max_tokens: 300,
    temperature: 1.2,
    stop: ["END"],
    messages: [
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "Describe this" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
        ],
      },
    ],
  },
  {
    tools: [
      {
        type: "function",
        function: { name: "get_weather", description: "Weather of a city", parameters: TOOL.input_schema },
      },
    ],
    tool_choice: "auto",
    messages: [
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_01",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Paris","days":2}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_01", content: "Sunny, 21C" },
    ],
  },
  {
    reasoning_effort: "low",
    response_format: { type: "json_object" },
    seed: 7,
    messages: [{ role: "user", content: "Answer in JSON: 2+2?" }],
  },
];

const RESPONSES_BASES: Record<string, unknown>[] = [
  { store: false, input: "Hello there" },
  {
    store: false,
    instructions: "Be brief.",
    max_output_tokens: 300,
    input: [
      {
        role: "user",
        content: [
          { type: "input_text", text: "Describe this" },
          { type: "input_image", image_url: `data:image/png;base64,${PNG}` },
        ],
      },
    ],
  },
  {
    store: false,
    tools: [{ type: "function", name: "get_weather", description: "Weather of a city", parameters: TOOL.input_schema }],
    input: [
      { role: "user", content: "Weather in Paris?" },
      { type: "function_call", call_id: "call_01", name: "get_weather", arguments: '{"city":"Paris","days":2}' },
      { type: "function_call_output", call_id: "call_01", output: "Sunny, 21C" },
    ],
  },
];

const BASES = { messages: MESSAGES_BASES, chat: CHAT_BASES, responses: RESPONSES_BASES } as const;
const PATHS = { messages: "/v1/messages", chat: "/v1/chat/completions", responses: "/v1/responses" } as const;
/** What a JSON reply of each format says it is. */
const REPLY_KIND = {
  messages: (j: any) => j.type === "message",
  chat: (j: any) => j.object === "chat.completion",
  responses: (j: any) => j.object === "response",
} as const;
type FormatName = keyof typeof BASES;

const MODELS = ["alpha-haiku-4-5", "beta-5", "gamma-3-flash", "delta-m3"];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!; // the index is within the list
}

function randomValue(r: () => number): Json {
  const kinds: (() => Json)[] = [
    () => null,
    () => r() < 0.5,
    () => pick(r, [0, -1, 1, 2.5, -0.0001, 1e308, -1e308, 4096, 2 ** 53, 1e15]),
    () =>
      pick(r, [
        "",
        " ",
        "user",
        "assistant",
        "tool",
        "text",
        "image",
        "tool_use",
        "object",
        "\u0000",
        "é漢字🙂",
        "<|endoftext|>",
        "x".repeat(300),
        "lorem ipsum ".repeat(80),
        "data:image/png;base64,AAAA",
        "https://example.com/a.png",
      ]),
    () => [],
    () => ({}),
    () => [randomValue(r)],
    () => ({
      type: pick(r, [
        "text",
        "image",
        "tool_use",
        "tool_result",
        "thinking",
        "document",
        "function",
        "image_url",
        "nope",
      ]),
      text: "hi",
    }),
    () => JSON.parse("[".repeat(60) + "1" + "]".repeat(60)) as Json, // JSON text parses to a Json value
  ];
  return pick(r, kinds)();
}

/** Every path to a value inside `v` (object keys and array indexes). */
function paths(v: Json, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (Array.isArray(v))
    v.forEach((x, i) => {
      out.push([...at, i]);
      paths(x, [...at, i], out);
    });
  else if (v !== null && typeof v === "object")
    for (const [k, x] of Object.entries(v)) {
      out.push([...at, k]);
      paths(x, [...at, k], out);
    }
  return out;
}

function mutate(r: () => number, body: { [k: string]: Json }): void {
  const all = paths(body);
  const path = pick(r, all);
  const key = path.at(-1)!; // every path has at least one step
  let parent: Json = body;
  for (const step of path.slice(0, -1)) parent = (parent as Record<string | number, Json>)[step]!; // the path was read from this very value
  const holder = parent as Record<string | number, Json>; // an object or array: it had a child at `key`
  const op = r();
  if (op < 0.2) {
    if (Array.isArray(holder) && typeof key === "number") holder.splice(key, 1);
    else delete holder[key];
  } else if (op < 0.7) holder[key] = randomValue(r);
  else if (op < 0.8) holder[key] = [holder[key] ?? null];
  else if (op < 0.9) {
    if (Array.isArray(holder))
      holder.push(JSON.parse(JSON.stringify(holder[key] ?? null)) as Json); // a copy of a Json value
    else holder[`x_${Math.floor(r() * 1000)}`] = randomValue(r);
  } else if (typeof holder[key] === "string") holder[key] = (holder[key] as string).slice(0, Math.floor(r() * 5));
  else holder[key] = String(holder[key]);
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ TURNPIKE_KEEPALIVE_SECONDS: "0" });
});
afterAll(() => h.close());

/** The event a stream of each format must end with (its terminal frame or its in-band error). */
const STREAM_ENDS: Record<FormatName, readonly string[]> = {
  messages: ["event: message_stop", "event: error"],
  chat: ["data: [DONE]"],
  responses: ["event: response.completed", "event: response.incomplete", "event: response.failed", "event: error"],
};

function checkStream(format: FormatName, text: string, label: string): void {
  const last = text.trimEnd().split("\n\n").at(-1) ?? "";
  if (!STREAM_ENDS[format].some((e) => last.startsWith(e)))
    throw new Error(
      `${label}: a ${format} stream must end with one of ${STREAM_ENDS[format].join(", ")}: …${text.slice(-200)}`,
    );
}

describe(`fuzzer (seed ${SEED}, ${ROUNDS} requests)`, () => {
  test("no 5xx, every body in the caller's format", async () => {
    const r = prng(SEED);
    const statuses = new Map<number, number>();
    for (let i = 0; i < ROUNDS; i++) {
      const format = pick(r, ["messages", "chat", "responses"] as const);
      const base = pick(r, BASES[format]);
      // A deep copy of a JSON object literal: a Json object.
      const body = JSON.parse(JSON.stringify({ model: pick(r, MODELS), stream: r() < 0.3, ...base })) as {
        [k: string]: Json;
      };
      const n = r() < 0.7 ? 1 : 2;
      for (let m = 0; m < n; m++) mutate(r, body);
      const label = `round ${i} (${format}): ${JSON.stringify(body).slice(0, 300)}`;
      const res = await h.call(PATHS[format], {
        method: "POST",
        dialect: format === "messages" ? "messages" : "chat",
        body: JSON.stringify(body),
      });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const text = await res.text();
      if (res.status >= 500) throw new Error(`${label} → ${res.status} ${text.slice(0, 300)}`);
      const type = res.headers.get("content-type") ?? "";
      if (res.status === 200 && type.startsWith("text/event-stream")) {
        checkStream(format, text, label);
        continue;
      }
      expect(type).toStartWith("application/json");
      const json = JSON.parse(text) as any;
      if (res.status === 200) {
        if (!REPLY_KIND[format](json)) throw new Error(`${label}: not a ${format} reply: ${text.slice(0, 300)}`);
      } else {
        errorMessageOf(format, json);
      }
    }
    // Deep enough: a good share of the mutated requests passed validation and were answered.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(ROUNDS / 10);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(ROUNDS / 5);
  }, 30_000);
});
