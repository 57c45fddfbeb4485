/**
 * `POST /v1/messages/count_tokens` for every catalog model (issue item 8): the upstream's own
 * count where the vendor offers one (messages, generateContent), else Turnpike's local tokenizer
 * (chat completions has no count endpoint). An upstream count must agree with the input tokens
 * the same vendor then bills for the same prompt.
 */
import { countPromptTokens, countTextTokens } from "@turnpike/simulator";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CATALOG_IDS, startHarness, type Harness } from "../harness";
import { localCount, readJson } from "./outcome";
import { PNG_BASE64, WEATHER, messagesTools } from "./tools";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** A prompt with every kind of input: system, tools, an image, a tool round trip, several turns. */
const PROMPT = {
  system: "You are a weather assistant.",
  tools: messagesTools(WEATHER),
  messages: [
    {
      role: "user",
      content: [
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } },
        { type: "text", text: "Where was this taken?" },
      ],
    },
    { role: "assistant", content: "Probably Paris." },
    { role: "user", content: "What is the weather there?" },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_prev_1", name: WEATHER.name, input: WEATHER.args }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_prev_1", content: "18 C and sunny" }] },
  ],
};

const PROTOCOL: Record<string, "messages" | "chat" | "generate"> = {
  alpha: "messages",
  beta: "chat",
  gamma: "generate",
  delta: "chat",
};
const protocolOf = (model: string) => PROTOCOL[model.split("-")[0]!]!;

async function count(body: Record<string, unknown>): Promise<Response> {
  return h.call("/v1/messages/count_tokens", { method: "POST", dialect: "messages", body: JSON.stringify(body) });
}

describe("count_tokens for every catalog model", () => {
  for (const model of CATALOG_IDS) {
    const protocol = protocolOf(model);
    test(`${model}: ${protocol === "chat" ? "local tokenizer" : "the upstream's count, equal to the billed input"}`, async () => {
      const before = h.gw.simulator!.requests.length ? h.gw.simulator!.requests.at(-1) : undefined;
      const res = await count({ model, ...PROMPT });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toStartWith("application/json");
      expect(res.headers.get("request-id")).toMatch(/^req_/);
      const { input_tokens } = await readJson(res);

      if (protocol === "chat") {
        expect(res.headers.get("x-turnpike-count")).toBe("local");
        // No upstream call: chat completions has no count endpoint.
        expect(h.gw.simulator!.requests.at(-1)).toBe(before!);
        expect(input_tokens).toBe(localCount({ model, ...PROMPT }));
        return;
      }
      expect(res.headers.get("x-turnpike-count")).toBe("upstream");
      const sent = h.gw.simulator!.requests.at(-1)!;
      const upstreamModel = model.replace(" (context-1m beta)", "");
      expect(sent.path).toBe(
        protocol === "messages" ? "/v1/messages/count_tokens" : `/v1beta/models/${upstreamModel}:countTokens`,
      );
      // The simulator's own count of what it received…
      expect(input_tokens).toBe(countPromptTokens(protocol, sent.body));
      // …and the input the same upstream bills for the same prompt.
      const call = await h.call("/v1/messages", {
        method: "POST",
        dialect: "messages",
        body: JSON.stringify({ model, max_tokens: 50, ...PROMPT }),
      });
      expect(call.status).toBe(200);
      expect((await readJson(call)).usage.input_tokens).toBe(input_tokens);
    });
  }

  test("the local count follows the documented formula: 3 + (3 + text) per message", async () => {
    const res = await count({ model: "beta-5", messages: [{ role: "user", content: "Hello there" }] });
    expect((await readJson(res)).input_tokens).toBe(3 + 3 + countTextTokens("Hello there"));
  });

  test("an unknown model is a 404 in the messages format; a bad body a 400 naming the field", async () => {
    const missing = await count({ model: "no-such-model", messages: [{ role: "user", content: "Hi" }] });
    expect(missing.status).toBe(404);
    expect((await readJson(missing)).type).toBe("error");
    const bad = await count({ model: "beta-5" });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain("messages");
  });
});
