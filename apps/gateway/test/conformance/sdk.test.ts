/**
 * The official client libraries' stream helpers rebuild exactly what the JSON call returns:
 * `anthropic.messages.stream(…).finalMessage()` against `messages.create`, and
 * `openai.chat.completions.stream(…).finalChatCompletion()` against `chat.completions.create`,
 * for text, one tool call and parallel tool calls, through every upstream protocol.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startHarness, type Harness } from "../harness";
import { CLOCK, WEATHER, chatTools, messagesTools } from "./tools";
import { UPSTREAMS } from "./upstreams";

let h: Harness;
let anthropic: Anthropic;
let openai: OpenAI;
beforeAll(async () => {
  h = await startHarness();
  anthropic = new Anthropic({ apiKey: h.key, baseURL: h.url, maxRetries: 0 });
  openai = new OpenAI({ apiKey: h.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await h.close();
});

const CASES = [
  { name: "text", tools: [], directive: '[sim text="Both helpers agree with the JSON reply."]', calls: 0 },
  { name: "one tool call", tools: [WEATHER], directive: "[sim tools=1]", calls: 1 },
  { name: "parallel tool calls", tools: [WEATHER, CLOCK], directive: "[sim tools=2]", calls: 2 },
] as const;

/**
 * Two calls never share ids: the simulator numbers its messages and calls per request, and
 * Turnpike makes fresh tool-call ids for generateContent (which has none). So the reply id and
 * the tool-call ids — and only those — are normalized before comparing. The helpers also add
 * their own parse results, which no wire field carries (`parsed_output`, `parsed`,
 * `parsed_arguments`, and keys set to `undefined`); a JSON round trip without them drops those.
 * And a chat upstream's JSON reply lists `annotations: []` (no citations) where its stream has no
 * field at all (docs/protocols.md §2.4 vs §2.6), so an empty `annotations` list is dropped too.
 */
const HELPER_FIELDS = new Set(["parsed_output", "parsed", "parsed_arguments"]);

function plain(v: unknown): unknown {
  const drop = (k: string, x: unknown) =>
    HELPER_FIELDS.has(k) || (k === "annotations" && Array.isArray(x) && x.length === 0);
  return JSON.parse(JSON.stringify(v, (k, x: unknown) => (drop(k, x) ? undefined : x)));
}

function normalizeMessage(m: Anthropic.Message): unknown {
  const { id, ...rest } = m;
  expect(id).toMatch(/^msg_/);
  return plain({ ...rest, content: m.content.map((b, i) => (b.type === "tool_use" ? { ...b, id: `#${i}` } : b)) });
}

/** As above; `created` (the second the reply was made) is a timestamp, not content. */
function normalizeCompletion(c: OpenAI.ChatCompletion): unknown {
  const { id, created, ...rest } = c;
  expect(id).toMatch(/^chatcmpl-/);
  expect(typeof created).toBe("number");
  return plain({
    ...rest,
    choices: c.choices.map((ch) => ({
      ...ch,
      message: {
        ...ch.message,
        ...(ch.message.tool_calls ? { tool_calls: ch.message.tool_calls.map((t, i) => ({ ...t, id: `#${i}` })) } : {}),
      },
    })),
  });
}

for (const up of UPSTREAMS) {
  describe(`through the ${up.label} upstream (${up.model})`, () => {
    for (const c of CASES) {
      test(`@anthropic-ai/sdk: ${c.name} — finalMessage() equals messages.create()`, async () => {
        const params: Anthropic.MessageCreateParamsNonStreaming = {
          model: up.model,
          max_tokens: 300,
          messages: [{ role: "user", content: `Go. ${c.directive}` }],
          ...(c.tools.length ? { tools: messagesTools(...c.tools) as Anthropic.Tool[] } : {}), // the tools' schemas are plain JSON Schema objects
        };
        const json = await anthropic.messages.create(params);
        const final = await anthropic.messages.stream(params).finalMessage();
        expect(json.content.filter((b) => b.type === "tool_use")).toHaveLength(c.calls);
        expect(normalizeMessage(final)).toEqual(normalizeMessage(json));
      });

      test(`openai: ${c.name} — finalChatCompletion() equals chat.completions.create()`, async () => {
        const params = {
          model: up.model,
          messages: [{ role: "user" as const, content: `Go. ${c.directive}` }],
          ...(c.tools.length ? { tools: chatTools(...c.tools) as OpenAI.ChatCompletionTool[] } : {}), // as above
        };
        const json = await openai.chat.completions.create(params);
        const final = await openai.chat.completions
          .stream({ ...params, stream_options: { include_usage: true } })
          .finalChatCompletion();
        expect(json.choices[0]!.message.tool_calls ?? []).toHaveLength(c.calls);
        expect(normalizeCompletion(final)).toEqual(normalizeCompletion(json));
      });
    }
  });
}
