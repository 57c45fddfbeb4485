/**
 * What Turnpike sends upstream where the client cannot see it: usage is always asked of a chat
 * upstream (and the usage chunk reaches only clients that asked for it), and Gemini 3 thought
 * signatures go back on the next turn (docs/protocols.md §3.7, §4.1, §4.9 traps 5 and 13).
 */
import { countPromptTokens } from "@turnpike/simulator";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readSSE, startHarness, type Harness } from "../harness";
import { asRecord, parseRecord, readJson } from "./outcome";
import { readChatStream } from "./read-chat";
import { readMessagesStream } from "./read-messages";
import { WEATHER, chatTools, messagesTools } from "./tools";
import { ALPHA, BETA, DELTA, GAMMA } from "./upstreams";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const lastSent = () => asRecord(h.gw.simulator!.requests.at(-1)!.body);
const TEXT = "Usage is always counted.";

describe("chat upstreams are always asked for usage", () => {
  for (const up of [BETA, DELTA]) {
    test(`a chat client that did not ask (${up.model}): upstream asked, no usage chunk relayed`, async () => {
      const body = { model: up.model, stream: true, messages: [{ role: "user", content: `Hi [sim text="${TEXT}"]` }] };
      const res = await h.call("/v1/chat/completions", { method: "POST", body: JSON.stringify(body) });
      expect(lastSent().stream_options).toEqual({ include_usage: true });
      const frames = await readSSE(res);
      const read = readChatStream(frames, up.model);
      expect(read.outcome.text).toBe(TEXT);
      expect(read.usageChunk).toBe(false);
      // Nor is it shown on the other chunks (they may say `usage: null`, as a chat upstream does
      // once asked for usage).
      for (const f of frames.slice(0, -1)) expect(parseRecord(f.data).usage ?? null).toBeNull();
    });

    test(`a messages client (${up.model}): upstream asked, so message_delta has the upstream's count`, async () => {
      const body = {
        model: up.model,
        max_tokens: 100,
        stream: true,
        messages: [{ role: "user", content: `Hi [sim text="${TEXT}"]` }],
      };
      const res = await h.call("/v1/messages", { method: "POST", dialect: "messages", body: JSON.stringify(body) });
      const sent = lastSent();
      expect(sent.stream_options).toEqual({ include_usage: true });
      const read = readMessagesStream(await readSSE(res), up.model);
      expect(read.deltaInput).toBe(countPromptTokens("chat", sent));
    });
  }

  for (const up of [ALPHA, GAMMA]) {
    test(`a chat client that did not ask, through ${up.label} (${up.model}): no usage chunk`, async () => {
      const body = { model: up.model, stream: true, messages: [{ role: "user", content: `Hi [sim text="${TEXT}"]` }] };
      const res = await h.call("/v1/chat/completions", { method: "POST", body: JSON.stringify(body) });
      const read = readChatStream(await readSSE(res), up.model);
      expect(read.outcome.text).toBe(TEXT);
      expect(read.usageChunk).toBe(false);
    });
  }
});

/** The signature the simulator's generateContent protocol puts on a turn's first call without thinking. */
const SIM_SIGNATURE = btoa("sim-signature:0");
const PRO = "gamma-3-pro";

describe("Gemini 3 thought signatures round-trip on the next turn", () => {
  for (const stream of [false, true]) {
    test(`messages client, first turn ${stream ? "streamed" : "JSON"}`, async () => {
      const first = {
        model: PRO,
        max_tokens: 200,
        tools: messagesTools(WEATHER),
        messages: [{ role: "user", content: "Weather? [sim tools=1]" }],
      };
      const res = await h.call("/v1/messages", {
        method: "POST",
        dialect: "messages",
        body: JSON.stringify({ ...first, stream }),
      });
      expect(res.status).toBe(200);
      const call = stream
        ? readMessagesStream(await readSSE(res), PRO).outcome.toolCalls[0]!
        : (await readJson(res)).content.map((b: { id: string; input: unknown }) => ({ id: b.id, args: b.input }))[0];
      const second = {
        ...first,
        messages: [
          ...first.messages,
          { role: "assistant", content: [{ type: "tool_use", id: call.id, name: WEATHER.name, input: call.args }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "18 C" }] },
        ],
      };
      const res2 = await h.call("/v1/messages", { method: "POST", dialect: "messages", body: JSON.stringify(second) });
      // The simulator, like Gemini 3, answers 400 to a replayed call without its signature.
      expect(res2.status).toBe(200);
      expect(lastSent().contents[1].parts[0]).toEqual({
        functionCall: { name: WEATHER.name, args: WEATHER.args },
        thoughtSignature: SIM_SIGNATURE,
      });
      expect(lastSent().contents[2].parts[0].functionResponse.name).toBe(WEATHER.name);
      const reply = await readJson(res2);
      expect(reply.content[0]!.text).toStartWith(`Simulated reply from ${PRO} after ${WEATHER.name} returned: 18 C`);
    });
  }

  test("chat client, parallel calls: the first call carries the signature, as Gemini sent it", async () => {
    const first = {
      model: PRO,
      tools: chatTools(WEATHER),
      messages: [{ role: "user", content: "Weather twice? [sim tools=2]" }],
    };
    const res = await h.call("/v1/chat/completions", { method: "POST", body: JSON.stringify(first) });
    const msg = (await readJson(res)).choices[0].message;
    expect(msg.tool_calls).toHaveLength(2);
    const second = {
      ...first,
      messages: [
        ...first.messages,
        msg,
        ...msg.tool_calls.map((c: { id: string }) => ({ role: "tool", tool_call_id: c.id, content: "18 C" })),
      ],
    };
    const res2 = await h.call("/v1/chat/completions", { method: "POST", body: JSON.stringify(second) });
    expect(res2.status).toBe(200);
    const parts = lastSent().contents[1].parts;
    expect(parts).toEqual([
      { functionCall: { name: WEATHER.name, args: WEATHER.args }, thoughtSignature: SIM_SIGNATURE },
      { functionCall: { name: WEATHER.name, args: WEATHER.args } },
    ]);
    // Both results go back in one user turn, in call order, each under its function's name.
    expect(lastSent().contents[2].parts.map((p: any) => p.functionResponse.name)).toEqual([WEATHER.name, WEATHER.name]);
  });
});
