/**
 * Coding agents end to end: the request shapes Claude Code 2.1 sends (recorded through Turnpike,
 * `agents/*.json`: a tool-rich first call with a mid-conversation system message, the call after
 * a tool ran, and a count_tokens call) replayed against every catalog model, JSON and stream,
 * through the official messages-format client. Each reply names the catalog model; the first
 * call gets a tool call (the simulator decides like a model), the second an answer in text; the
 * stream helper rebuilds the JSON reply; and the system message reaches every upstream in the
 * form it can take.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CATALOG_IDS, startHarness, type Harness } from "../harness";
import countCall from "./agents/claude-code-count-tokens.json";
import firstCall from "./agents/claude-code-first-call.json";
import toolResultCall from "./agents/claude-code-tool-result.json";

let h: Harness;
let client: Anthropic;
beforeAll(async () => {
  h = await startHarness();
  client = new Anthropic({ apiKey: h.key, baseURL: h.url, maxRetries: 0 });
});
afterAll(async () => {
  await h.close();
});

type Recorded = { path: string; headers: Record<string, string>; body: Record<string, unknown> };

/** The recorded body for another model, with the agent's own headers and `?beta=true` query. */
function replay(call: Recorded, model: string, stream: boolean) {
  // The recorded JSON is the wire shape the client library sends; its static type is not needed here.
  const body = { ...call.body, model, stream } as unknown as Anthropic.MessageCreateParamsNonStreaming;
  const { "content-type": _ct, "user-agent": _ua, ...headers } = call.headers;
  // An explicit timeout: the client refuses a JSON call with the agent's 32k output cap otherwise.
  return { body, options: { headers, query: { beta: "true" }, timeout: 60_000 } };
}

/**
 * A reply without the ids that differ between two calls, and without the stream helper's own
 * parse results (`parsed_output`, keys set to `undefined`), which no wire field carries.
 */
function withoutIds(m: Anthropic.Message): unknown {
  // The second of two calls with the same prefix reads what the first wrote: the prompt's
  // total is compared, not its split between the cache and the rest.
  const u = m.usage;
  const usage = {
    prompt: u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0),
    output_tokens: u.output_tokens,
  };
  const plain = {
    ...m,
    id: undefined,
    usage,
    content: m.content.map((b) => (b.type === "tool_use" ? { ...b, id: undefined } : b)),
  };
  return JSON.parse(JSON.stringify(plain, (k, v: unknown) => (k === "parsed_output" ? undefined : v)));
}

const AGENT_SYSTEM = (firstCall.body.messages[1] as { content: string }).content;
const PROTOCOL: Record<string, "messages" | "chat" | "generate"> = {
  alpha: "messages",
  beta: "chat",
  gamma: "generate",
  delta: "chat",
};

describe("Claude Code's calls against every catalog model", () => {
  for (const model of CATALOG_IDS) {
    test(`${model}: first call with its default tools → a tool call; JSON and stream agree`, async () => {
      const { body, options } = replay(firstCall, model, false);
      const reply = await client.messages.create(body, options);
      expect(reply.model).toBe(model);
      expect(reply.stop_reason).toBe("tool_use");
      expect(reply.content.map((b) => (b.type === "tool_use" ? [b.name, b.input] : b.type))).toEqual([
        ["Read", { file_path: "notes.txt" }],
      ]);

      // What reached the upstream: the system message, in the form its protocol takes.
      const upstream = h.gw.simulator!.requests.at(-1)!;
      const sent = JSON.stringify(upstream.body);
      switch (PROTOCOL[model.split("-")[0]!]) {
        case "messages":
          expect((upstream.body as { messages: { role: string }[] }).messages.map((m) => m.role)).toEqual([
            "user",
            "system",
          ]);
          expect(upstream.headers["anthropic-beta"]).toContain("mid-conversation-system-2026-04-07");
          break;
        case "chat":
          expect((upstream.body as { messages: { role: string; content: unknown }[] }).messages.slice(-1)).toEqual([
            { role: "system", content: AGENT_SYSTEM },
          ]);
          break;
        case "generate":
          expect(sent).toContain(JSON.stringify(`<system-message>\n${AGENT_SYSTEM}\n</system-message>`));
          break;
        default:
          throw new Error(`no protocol for ${model}`);
      }

      const streamed = replay(firstCall, model, true);
      const final = await client.messages.stream(streamed.body, streamed.options).finalMessage();
      expect(withoutIds(final)).toEqual(withoutIds(reply));
    });

    test(`${model}: the call after the tool ran → an answer in text; JSON and stream agree`, async () => {
      const { body, options } = replay(toolResultCall, model, false);
      const reply = await client.messages.create(body, options);
      expect(reply.model).toBe(model);
      expect(reply.stop_reason).toBe("end_turn");
      expect(reply.content).toHaveLength(1);
      expect(reply.content[0]!.type).toBe("text");
      expect((reply.content[0] as Anthropic.TextBlock).text).toContain("after Read returned: 1 hello world");
      // The agent's own breakpoints pay on a messages upstream: its tools and system prompt come from the cache.
      if (PROTOCOL[model.split("-")[0]!] === "messages")
        expect(reply.usage.cache_read_input_tokens).toBeGreaterThan(1000);
      const streamed = replay(toolResultCall, model, true);
      const final = await client.messages.stream(streamed.body, streamed.options).finalMessage();
      expect(withoutIds(final)).toEqual(withoutIds(reply));
    });

    test(`${model}: count_tokens of the agent's prompt`, async () => {
      const { body, options } = replay(countCall, model, false);
      const { stream: _s, ...countBody } = body;
      const counted = await client.messages.countTokens(
        countBody as unknown as Anthropic.MessageCountTokensParams,
        options,
      ); // the recorded wire shape
      expect(counted.input_tokens).toBeGreaterThan(1000);
    });
  }
});

describe("what a coding agent sends besides its messages", () => {
  test("HEAD / answers 200 without a key (the agent's connectivity check)", async () => {
    const res = await fetch(`${h.url}/`, { method: "HEAD" });
    expect(res.status).toBe(200);
  });

  test("HEAD /api/hello answers 200 without a key (the messages-format agent's start-up check)", async () => {
    const res = await fetch(`${h.url}/api/hello`, { method: "HEAD" });
    expect(res.status).toBe(200);
  });
});
