/**
 * The official client libraries of both formats, pointed at Turnpike with only a base URL and a
 * key: list models, create and stream through both endpoints for a model of each vendor word,
 * and raise their typed errors for 401 and model_not_found.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { LISTED_IDS, ONE_PER_VENDOR, startHarness, type Harness } from "./harness";

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

const REPLY = "Compatible clients read every byte.";
const prompt = `Repeat after me. [sim text="${REPLY}"]`;

describe("official messages-format client", () => {
  test("lists models", async () => {
    const ids: string[] = [];
    for await (const m of anthropic.models.list()) ids.push(m.id);
    expect(ids.sort()).toEqual([...LISTED_IDS].sort());
    const one = await anthropic.models.retrieve("gamma-3-pro");
    expect(one.id).toBe("gamma-3-pro");
    expect(one.display_name).toBe("Gamma 3 Pro");
  });

  for (const model of ONE_PER_VENDOR) {
    test(`create and stream with ${model}`, async () => {
      const msg = await anthropic.messages.create({
        model,
        max_tokens: 100,
        messages: [{ role: "user", content: prompt }],
      });
      expect(msg.model).toBe(model);
      expect(msg.content).toEqual([{ type: "text", text: REPLY } as never]);
      expect(msg.stop_reason).toBe("end_turn");
      expect(msg.usage.output_tokens).toBeGreaterThan(0);

      const stream = anthropic.messages.stream({
        model,
        max_tokens: 100,
        messages: [{ role: "user", content: prompt }],
      });
      let text = "";
      stream.on("text", (t) => (text += t));
      const final = await stream.finalMessage();
      expect(text).toBe(REPLY);
      expect(final.content[0]).toMatchObject({ type: "text", text: REPLY });
      expect(final.stop_reason).toBe("end_turn");
      expect(final.usage.output_tokens).toBe(msg.usage.output_tokens);
      expect(final.usage.input_tokens).toBe(msg.usage.input_tokens);
    });
  }

  test("raises AuthenticationError on a bad key and NotFoundError on an unknown model", async () => {
    const bad = new Anthropic({ apiKey: "sk-wrong", baseURL: h.url, maxRetries: 0 });
    const e1 = await bad.messages
      .create({ model: "beta-5", max_tokens: 5, messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(e1).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(e1.status).toBe(401);
    const e2 = await anthropic.messages
      .create({ model: "no-such-model", max_tokens: 5, messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(e2).toBeInstanceOf(Anthropic.NotFoundError);
    expect(String(e2.message)).toContain("model_not_found");
    expect(e2.requestID).toMatch(/^req_/);
  });
});

describe("official chat-completions client", () => {
  test("lists models", async () => {
    const ids: string[] = [];
    for await (const m of openai.models.list()) ids.push(m.id);
    expect(ids.sort()).toEqual([...LISTED_IDS].sort());
    const one = await openai.models.retrieve("delta-m3");
    expect(one.owned_by).toBe("delta");
  });

  for (const model of ONE_PER_VENDOR) {
    test(`create and stream with ${model}`, async () => {
      const res = await openai.chat.completions.create({ model, messages: [{ role: "user", content: prompt }] });
      expect(res.model).toBe(model);
      expect(res.choices[0]!.message.content).toBe(REPLY);
      expect(res.choices[0]!.finish_reason).toBe("stop");

      const stream = await openai.chat.completions.create({
        model,
        messages: [{ role: "user", content: prompt }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = "";
      let usage: OpenAI.CompletionUsage | undefined | null;
      let finish: string | null | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? "";
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage;
      }
      expect(text).toBe(REPLY);
      expect(finish).toBe("stop");
      expect(usage?.completion_tokens).toBe(res.usage?.completion_tokens);
      expect(usage?.prompt_tokens).toBe(res.usage?.prompt_tokens);

      const helper = openai.chat.completions.stream({ model, messages: [{ role: "user", content: prompt }] });
      const final = await helper.finalChatCompletion();
      expect(final.choices[0]!.message.content).toBe(REPLY);
    });
  }

  test("raises AuthenticationError on a bad key and NotFoundError on an unknown model", async () => {
    const bad = new OpenAI({ apiKey: "sk-wrong", baseURL: `${h.url}/v1`, maxRetries: 0 });
    const e1 = await bad.chat.completions
      .create({ model: "beta-5", messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(e1).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(e1.code).toBe("invalid_api_key");
    const e2 = await openai.chat.completions
      .create({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(e2).toBeInstanceOf(OpenAI.NotFoundError);
    expect(e2.code).toBe("model_not_found");
  });
});
