import { describe, expect, test } from "bun:test";
import { AUTH, PATH, events, payloads, sim, tok } from "./test-support";

const THINKING = { type: "enabled", budget_tokens: 1024 };
const THOUGHT = (model: string, quote: string) =>
  `Thinking about the request to ${model}: ${quote}. A deterministic answer follows.`;

describe("[sim think]", () => {
  test("messages JSON: a signed thinking block before the text when thinking is enabled; output counts both", async () => {
    const json = await (
      await sim().post(
        PATH.messages,
        { model: "a", max_tokens: 2000, thinking: THINKING, messages: [{ role: "user", content: "Why? [sim think]" }] },
        AUTH.messages,
      )
    ).json();
    expect(json.content.map((b: { type: string }) => b.type)).toEqual(["thinking", "text"]);
    expect(json.content[0]).toEqual({
      type: "thinking",
      thinking: THOUGHT("a", "Why?"),
      signature: expect.any(String),
    });
    expect(json.content[0].signature.length).toBeGreaterThan(0);
    expect(json.usage.output_tokens).toBe(tok(THOUGHT("a", "Why?")) + tok(json.content[1].text));
  });

  test("messages stream: thinking_delta pieces, then signature_delta just before the block stops, then the text block", async () => {
    const data = (
      await events(
        await sim().post(
          PATH.messages,
          {
            model: "a",
            max_tokens: 2000,
            stream: true,
            thinking: THINKING,
            messages: [{ role: "user", content: "Why? [sim think]" }],
          },
          AUTH.messages,
        ),
      )
    ).map((e) => JSON.parse(e.data));
    const block0 = data.filter((d) => d.index === 0);
    expect(block0[0].content_block).toEqual({ type: "thinking", thinking: "" });
    const deltas = block0.filter((d) => d.type === "content_block_delta").map((d) => d.delta);
    expect(deltas.slice(0, -1).every((d) => d.type === "thinking_delta")).toBe(true);
    expect(
      deltas
        .slice(0, -1)
        .map((d) => d.thinking)
        .join(""),
    ).toBe(THOUGHT("a", "Why?"));
    expect(deltas.at(-1).type).toBe("signature_delta");
    expect(block0.at(-1).type).toBe("content_block_stop");
    expect(data.find((d) => d.type === "content_block_start" && d.index === 1).content_block.type).toBe("text");
  });

  test("messages without thinking enabled: no thinking block", async () => {
    const json = await (
      await sim().post(
        PATH.messages,
        { model: "a", max_tokens: 200, messages: [{ role: "user", content: "Why? [sim think]" }] },
        AUTH.messages,
      )
    ).json();
    expect(json.content.map((b: { type: string }) => b.type)).toEqual(["text"]);
  });

  test("chat: reasoning_content in JSON and as deltas, reasoning_tokens inside completion_tokens", async () => {
    const s = sim();
    const body = { model: "b", messages: [{ role: "user", content: "Why? [sim think]" }] };
    const json = await (await s.post(PATH.chat, body, AUTH.chat)).json();
    const msg = json.choices[0].message;
    expect(msg.reasoning_content).toBe(THOUGHT("b", "Why?"));
    expect(json.usage.completion_tokens_details.reasoning_tokens).toBe(tok(msg.reasoning_content));
    expect(json.usage.completion_tokens).toBe(tok(msg.reasoning_content) + tok(msg.content));
    const objs = (
      await payloads(
        await s.post(PATH.chat, { ...body, stream: true, stream_options: { include_usage: true } }, AUTH.chat),
      )
    ).slice(0, -1);
    const reasoning = objs.map((o) => o.choices[0]?.delta.reasoning_content ?? "").join("");
    expect(reasoning).toBe(msg.reasoning_content);
    const firstContent = objs.findIndex((o) => o.choices[0]?.delta.content);
    const lastReasoning = objs.findLastIndex((o) => o.choices[0]?.delta.reasoning_content);
    expect(lastReasoning).toBeLessThan(firstContent);
    expect(objs.at(-1).usage).toEqual(json.usage);
  });

  test("generateContent with includeThoughts: a thought:true part first and thoughtsTokenCount outside candidates", async () => {
    const body = {
      contents: [{ parts: [{ text: "Why? [sim think]" }] }],
      generationConfig: { thinkingConfig: { includeThoughts: true } },
    };
    const json = await (await sim().post(PATH.generate("g"), body, AUTH.generate)).json();
    const [thought, text] = json.candidates[0].content.parts;
    expect(thought).toEqual({ text: THOUGHT("g", "Why?"), thought: true });
    const u = json.usageMetadata;
    expect(u.thoughtsTokenCount).toBe(tok(thought.text));
    expect(u.candidatesTokenCount).toBe(tok(text.text));
    expect(u.totalTokenCount).toBe(u.promptTokenCount + u.candidatesTokenCount + u.thoughtsTokenCount);
  });

  test("generateContent without includeThoughts: thoughts are counted but not shown", async () => {
    const body = { contents: [{ parts: [{ text: "Why? [sim think]" }] }] };
    const chunks = await payloads(
      await sim().post(`${PATH.generate("g", "streamGenerateContent")}?alt=sse`, body, AUTH.generate),
    );
    expect(chunks.some((c) => c.candidates[0].content.parts.some((p: { thought?: boolean }) => p.thought))).toBe(false);
    for (const c of chunks) expect(c.usageMetadata.thoughtsTokenCount).toBe(tok(THOUGHT("g", "Why?")));
  });

  test("thinking counts toward max_tokens", async () => {
    const json = await (
      await sim().post(
        PATH.chat,
        { model: "b", max_tokens: 20, messages: [{ role: "user", content: "Why? [sim think]" }] },
        AUTH.chat,
      )
    ).json();
    expect(json.choices[0].finish_reason).toBe("length");
    expect(json.usage.completion_tokens).toBe(20);
  });
});

describe("[sim think] edge cases", () => {
  test("a cap reached while thinking: thinking truncated, no text, stop max_tokens", async () => {
    const json = await (
      await sim().post(
        PATH.chat,
        { model: "b", max_tokens: 5, messages: [{ role: "user", content: "Why? [sim think]" }] },
        AUTH.chat,
      )
    ).json();
    expect(json.choices[0].finish_reason).toBe("length");
    expect(json.choices[0].message.content).toBeNull();
    expect(tok(json.choices[0].message.reasoning_content)).toBe(5);
    expect(json.usage.completion_tokens).toBe(5);
  });

  test("non-Latin model names are fine in signatures", async () => {
    const res = await sim().post(
      PATH.generate(encodeURIComponent("модель-3")),
      { contents: [{ parts: [{ text: "[sim think]" }] }] },
      AUTH.generate,
    );
    expect(res.status).toBe(200);
  });
});
