/**
 * The stream shapes real vendors send (docs/protocols.md §2.6, §1.7, §3.3; the simulator's
 * `variant=` directive), through the gateway to the other client format: the client must see
 * exactly the reply of the plain stream — and of the JSON call of the same request.
 */
import { countPromptTokens, countTextTokens } from "@turnpike/simulator";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../harness";
import { callJson, callStream } from "./calls";
import { localCount, withoutIds, type Outcome } from "./outcome";
import { CLOCK, WEATHER, messagesTools } from "./tools";
import { ALPHA, BETA, GAMMA } from "./upstreams";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const TEXT = "Variants change the framing, never the reply.";

/** A messages-format reply as a messages client sees it. */
function messagesReply(o: {
  text?: string;
  tools?: { name: string; args: unknown }[];
  stop: string;
  input: number;
  output: number;
}): Outcome {
  const tools = o.tools ?? [];
  return {
    text: o.text ?? null,
    thinking: "",
    signatures: [],
    blocks: [...(o.text ? ["text"] : []), ...tools.map(() => "tool_use")],
    toolCalls: tools.map((t, i) => ({ id: `#${i}`, ...t })),
    stop: o.stop,
    stopSequence: null,
    usage: { input: o.input, output: o.output },
  };
}

const argsTokens = (tools: { args: unknown }[]) =>
  tools.reduce((n, t) => n + countTextTokens(JSON.stringify(t.args)), 0);

interface ChatVariant {
  variant: string;
  /** tools=N, or none for a text reply. */
  tools?: number;
}

const CHAT_VARIANTS: ChatVariant[] = [
  { variant: "whole-tool-call", tools: 2 },
  { variant: "usage-every-chunk" },
  { variant: "finish-with-content" },
  { variant: "finish-with-content", tools: 1 },
  { variant: "prompt-filter-first" },
  { variant: "tool-index-1", tools: 2 },
  // Two parallel calls by default, whose openers, then fragments, interleave.
  { variant: "interleaved-tools" },
  { variant: "empty-tool-calls" },
  { variant: "usage-in-finish" },
];

describe("chat-completions stream variants → a messages client", () => {
  for (const { variant, tools } of CHAT_VARIANTS) {
    const withTools = tools !== undefined || variant === "interleaved-tools";
    test(`${variant}${tools ? ` (tools=${tools})` : ""}`, async () => {
      const directive = withTools
        ? `[sim variant=${variant}${tools ? ` tools=${tools}` : ""}]`
        : `[sim variant=${variant} text="${TEXT}"]`;
      const body = {
        model: BETA.model,
        max_tokens: 300,
        ...(withTools ? { tools: messagesTools(WEATHER, CLOCK) } : {}),
        messages: [{ role: "user", content: `Go. ${directive}` }],
      };
      const s = await callStream(h, "messages", body);
      const calls = withTools ? [WEATHER, CLOCK].slice(0, tools ?? 2).map((t) => ({ name: t.name, args: t.args })) : [];
      const expected = messagesReply({
        ...(withTools ? { tools: calls } : { text: TEXT }),
        stop: withTools ? "tool_use" : "end_turn",
        input: countPromptTokens("chat", s.sent.body),
        output: withTools ? argsTokens(calls) : countTextTokens(TEXT),
      });
      expect(withoutIds(s.outcome)).toEqual(expected);
      for (const c of s.outcome.toolCalls) expect(c.id).toMatch(BETA.toolId);
      expect(s.startInput).toBe(localCount(body));
      // The JSON call of the same request (variants shape only streams) gives the same reply.
      expect(withoutIds((await callJson(h, "messages", body)).outcome)).toEqual(expected);
    });
  }

  test("no-usage: the upstream never says; message_delta carries Turnpike's local counts", async () => {
    const body = {
      model: BETA.model,
      max_tokens: 300,
      messages: [{ role: "user", content: `Go. [sim variant=no-usage text="${TEXT}"]` }],
    };
    const s = await callStream(h, "messages", body);
    // Local counts (packages/providers README "Interrupted streams": usage estimated, never 0).
    const local = localCount(body);
    expect(withoutIds(s.outcome)).toEqual(
      messagesReply({ text: TEXT, stop: "end_turn", input: local, output: countTextTokens(TEXT) }),
    );
    expect(s.startInput).toBe(local);
  });
});

describe("messages stream variant → a chat client", () => {
  test("no-input-in-delta (Bedrock style): prompt_tokens from message_start", async () => {
    const body = {
      model: ALPHA.model,
      messages: [{ role: "user", content: `Go. [sim variant=no-input-in-delta text="${TEXT}"]` }],
    };
    const s = await callStream(h, "chat", body);
    const expected: Outcome = {
      text: TEXT,
      thinking: "",
      toolCalls: [],
      stop: "stop",
      usage: { input: countPromptTokens("messages", s.sent.body), output: countTextTokens(TEXT) },
    };
    expect(s.outcome).toEqual(expected);
    expect((await callJson(h, "chat", body)).outcome).toEqual(expected);
  });
});

describe("generateContent: a prompt blocked before any candidate (promptFeedback.blockReason)", () => {
  const content = "Something forbidden. [sim refusal=prompt]";
  for (const stream of [false, true]) {
    test(`messages client, ${stream ? "stream" : "JSON"}`, async () => {
      const body = { model: GAMMA.model, max_tokens: 100, messages: [{ role: "user", content }] };
      const r = stream ? await callStream(h, "messages", body) : await callJson(h, "messages", body);
      expect(r.outcome).toEqual(
        messagesReply({ stop: "refusal", input: countPromptTokens("generate", r.sent.body), output: 0 }),
      );
    });

    test(`chat client, ${stream ? "stream" : "JSON"}`, async () => {
      const body = { model: GAMMA.model, messages: [{ role: "user", content }] };
      const r = stream ? await callStream(h, "chat", body) : await callJson(h, "chat", body);
      const expected: Outcome = {
        text: null,
        thinking: "",
        toolCalls: [],
        stop: "content_filter",
        usage: { input: countPromptTokens("generate", r.sent.body), output: 0 },
      };
      expect(r.outcome).toEqual(expected);
    });
  }
});
