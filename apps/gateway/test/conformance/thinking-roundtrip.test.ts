/**
 * Signed thinking with tool use, round-tripped across turns to a messages upstream (docs/protocols.md
 * §1.3, §4.2): a messages client sends the assistant turn back as it came — thinking block with its
 * signature first, then the tool call — and the upstream receives it unchanged, JSON and stream.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readSSE, startHarness, type Harness } from "../harness";
import { WEATHER, messagesTools } from "./tools";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const MODEL = "alpha-haiku-4-5";
const base = {
  model: MODEL,
  max_tokens: 4000,
  thinking: { type: "enabled", budget_tokens: 2048 },
  tools: messagesTools(WEATHER),
};

describe("signed thinking + tool use across turns, messages client → messages upstream", () => {
  for (const stream of [false, true]) {
    test(stream ? "stream" : "JSON", async () => {
      const first = [{ role: "user", content: "Weather in Paris? [sim think tools=1]" }];
      const res1 = await h.call("/v1/messages", {
        method: "POST",
        dialect: "messages",
        body: JSON.stringify({ ...base, messages: first }),
      });
      const reply = await res1.json();
      expect(reply.content.map((b: { type: string }) => b.type)).toEqual(["thinking", "tool_use"]);
      expect(reply.content[0].signature).not.toBe("");
      const toolUse = reply.content[1];

      // The next turn: the assistant turn exactly as received, then the tool's result.
      const second = [
        ...first,
        { role: "assistant", content: reply.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: toolUse.id, content: "18 C and sunny" }] },
      ];
      const res2 = await h.call("/v1/messages", {
        method: "POST",
        dialect: "messages",
        body: JSON.stringify({ ...base, stream, messages: second }),
      });
      expect(res2.status).toBe(200);
      const sent = h.gw.simulator!.requests.at(-1)!.body as { messages: { content: unknown }[] };
      expect(sent.messages[1]!.content).toEqual(reply.content);
      if (stream) {
        const frames = await readSSE(res2);
        expect(frames.at(-1)?.event).toBe("message_stop");
        const text = frames
          .map((f) => JSON.parse(f.data))
          .filter((d) => d.delta?.type === "text_delta")
          .map((d) => d.delta.text)
          .join("");
        expect(text).toContain("after get_weather returned: 18 C and sunny");
      } else {
        const answer = await res2.json();
        expect(answer.stop_reason).toBe("end_turn");
        expect(answer.content.find((b: { type: string }) => b.type === "text").text).toContain(
          "after get_weather returned: 18 C and sunny",
        );
      }
    });
  }
});

/**
 * A generateContent client has no place for signed thinking but the `thoughtSignature` of a
 * function call, which its clients send back as they got it (docs/protocols.md §6.6): the turn's
 * thinking blocks travel there by value and reach the messages upstream again, signatures and all.
 */
describe("signed thinking + tool use across turns, generateContent client → messages upstream", () => {
  for (const stream of [false, true]) {
    test(stream ? "stream" : "JSON", async () => {
      const post = (action: string, body: unknown) =>
        fetch(`${h.url}/v1beta/models/${MODEL}:${action}`, {
          method: "POST",
          headers: { "x-goog-api-key": h.key, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const config = { maxOutputTokens: 4000, thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } };
      const tools = [
        {
          functionDeclarations: [
            { name: WEATHER.name, description: WEATHER.description, parametersJsonSchema: WEATHER.schema },
          ],
        },
      ];
      const first = [{ role: "user", parts: [{ text: "Weather in Paris? [sim think tools=1]" }] }];
      const res1 = await post(stream ? "streamGenerateContent?alt=sse" : "generateContent", {
        contents: first,
        tools,
        generationConfig: config,
      });
      expect(res1.status).toBe(200);
      expect((h.gw.simulator!.requests.at(-1)!.body as { thinking: unknown }).thinking).toEqual({
        type: "enabled",
        budget_tokens: 2048,
      });
      // The model turn as the client keeps it: Gemini CLI drops the thought parts, keeps the call.
      let parts: { functionCall?: { id: string }; thought?: boolean; thoughtSignature?: string }[];
      if (stream) {
        const frames = await readSSE(res1);
        parts = frames.flatMap((f) => JSON.parse(f.data).candidates[0].content.parts);
      } else parts = (await res1.json()).candidates[0].content.parts;
      const call = parts.find((p) => p.functionCall)!;
      expect(call.thoughtSignature).toStartWith("tp1.");
      expect(parts.some((p) => p.thought)).toBe(true);
      const kept = { role: "model", parts: parts.filter((p) => !p.thought) };
      const answer = {
        role: "user",
        parts: [
          {
            functionResponse: { id: call.functionCall!.id, name: WEATHER.name, response: { output: "18 C and sunny" } },
          },
        ],
      };
      const res2 = await post("generateContent", {
        contents: [...first, kept, answer],
        tools,
        generationConfig: config,
      });
      expect(res2.status).toBe(200);
      expect(res2.headers.get("x-turnpike-warning")).toBeNull();
      const sent = h.gw.simulator!.requests.at(-1)!.body as {
        messages: { content: { type: string; signature?: string; thinking?: string }[] }[];
      };
      const replayed = sent.messages[1]!.content;
      expect(replayed.map((b) => b.type)).toEqual(["thinking", "tool_use"]);
      expect(replayed[0]!.signature).not.toBe("");
      expect(replayed[0]!.thinking).toBe(
        parts
          .filter((p) => p.thought)
          .map((p) => (p as { text?: string }).text)
          .join(""),
      );
      expect((await res2.json()).candidates[0].content.parts.at(-1).text).toContain(
        "after get_weather returned: 18 C and sunny",
      );
    });
  }
});
