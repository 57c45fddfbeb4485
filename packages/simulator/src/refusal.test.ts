import { describe, expect, test } from "bun:test";
import { AUTH, PATH, events, payloads, sim, tok } from "./test-support";

describe("[sim refusal]", () => {
  test("messages JSON: no content, stop_reason refusal with stop_details", async () => {
    const json = await (
      await sim().post(
        PATH.messages,
        { model: "a", max_tokens: 50, messages: [{ role: "user", content: "[sim refusal]" }] },
        AUTH.messages,
      )
    ).json();
    expect(json.content).toEqual([]);
    expect(json.stop_reason).toBe("refusal");
    expect(json.stop_details).toMatchObject({ type: "refusal" });
    expect(json.usage.output_tokens).toBe(1);
  });

  test("messages stream: a zero-content stream, message_start, ping, message_delta refusal, message_stop", async () => {
    const evs = await events(
      await sim().post(
        PATH.messages,
        { model: "a", max_tokens: 50, stream: true, messages: [{ role: "user", content: "[sim refusal]" }] },
        AUTH.messages,
      ),
    );
    expect(evs.map((e) => e.event)).toEqual(["message_start", "ping", "message_delta", "message_stop"]);
    expect(JSON.parse(evs[2]!.data).delta).toMatchObject({
      stop_reason: "refusal",
      stop_sequence: null,
      stop_details: { type: "refusal" },
    });
  });

  test("chat: finish_reason content_filter and no content, JSON and stream", async () => {
    const s = sim();
    const body = { model: "b", messages: [{ role: "user", content: "[sim refusal]" }] };
    const json = await (await s.post(PATH.chat, body, AUTH.chat)).json();
    expect(json.choices[0]).toMatchObject({ finish_reason: "content_filter", message: { content: null } });
    expect(json.usage.completion_tokens).toBe(0);
    const objs = (await payloads(await s.post(PATH.chat, { ...body, stream: true }, AUTH.chat))).slice(0, -1);
    expect(objs.map((o) => o.choices[0].finish_reason)).toEqual([null, "content_filter"]);
  });

  test("generateContent: a SAFETY candidate without content", async () => {
    const json = await (
      await sim().post(PATH.generate("g"), { contents: [{ parts: [{ text: "[sim refusal]" }] }] }, AUTH.generate)
    ).json();
    expect(json.candidates[0]).toMatchObject({ finishReason: "SAFETY", index: 0 });
    expect(json.candidates[0].content).toBeUndefined();
  });

  test("generateContent refusal=prompt: promptFeedback.blockReason and no candidates, in the first (only) chunk", async () => {
    const prompt = "[sim refusal=prompt]";
    const chunks = await payloads(
      await sim().post(
        `${PATH.generate("g", "streamGenerateContent")}?alt=sse`,
        { contents: [{ parts: [{ text: prompt }] }] },
        AUTH.generate,
      ),
    );
    expect(chunks).toHaveLength(1);
    expect(chunks[0].candidates).toBeUndefined();
    expect(chunks[0].promptFeedback.blockReason).toBe("SAFETY");
    expect(chunks[0].usageMetadata.promptTokenCount).toBe(3 + tok(prompt));
  });
});
