import { describe, expect, test } from "bun:test";
import { countPromptTokens } from "./count-prompt-tokens";
import { MIN_CACHED_TOKENS } from "./prompt-cache";
import { AUTH, PATH, sim } from "./test-support";

const LONG = Array.from({ length: 400 }, (_, i) => `rule ${i}: answer briefly and exactly.`).join("\n");
const EPH = { type: "ephemeral" };
const turn = (text: string) => ({
  model: "a",
  max_tokens: 50,
  system: [{ type: "text", text: LONG, cache_control: EPH }],
  messages: [{ role: "user", content: [{ type: "text", text, cache_control: EPH }] }],
});

describe("prompt cache (messages protocol)", () => {
  test("a prefix seen before is read; the rest up to the last breakpoint is written; input is what remains", async () => {
    const s = sim();
    const systemOnly = countPromptTokens("messages", { model: "a", max_tokens: 0, system: LONG, messages: [] });
    expect(systemOnly).toBeGreaterThan(MIN_CACHED_TOKENS);
    const first = (await (await s.post(PATH.messages, turn("Hello [sim chunks=2]"), AUTH.messages)).json()).usage;
    const total1 = countPromptTokens("messages", turn("Hello [sim chunks=2]"));
    expect(first).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: total1, input_tokens: 0 });
    // Same system prompt, another question: the system prefix is read, the new turn written.
    const second = (await (await s.post(PATH.messages, turn("Goodbye [sim chunks=2]"), AUTH.messages)).json()).usage;
    const total2 = countPromptTokens("messages", turn("Goodbye [sim chunks=2]"));
    expect(second.cache_read_input_tokens).toBe(systemOnly);
    expect(second.cache_creation_input_tokens).toBe(total2 - systemOnly);
    expect(second.input_tokens + second.cache_read_input_tokens + second.cache_creation_input_tokens).toBe(total2);
    // The same request again: all read, nothing written.
    const third = (await (await s.post(PATH.messages, turn("Goodbye [sim chunks=2]"), AUTH.messages)).json()).usage;
    expect(third).toMatchObject({ cache_read_input_tokens: total2, cache_creation_input_tokens: 0, input_tokens: 0 });
  });

  test("a one-hour breakpoint reports its writes as one-hour writes; a short prefix is not cached", async () => {
    const s = sim();
    const hour = turn("Hi");
    hour.messages[0]!.content[0]!.cache_control = { type: "ephemeral", ttl: "1h" } as typeof EPH;
    const u = (await (await s.post(PATH.messages, hour, AUTH.messages)).json()).usage;
    expect(u.cache_creation.ephemeral_1h_input_tokens).toBe(u.cache_creation_input_tokens);
    const short = { model: "a", max_tokens: 50, messages: [{ role: "user", content: [{ type: "text", text: "Hi", cache_control: EPH }] }] };
    const v = (await (await s.post(PATH.messages, short, AUTH.messages)).json()).usage;
    expect([v.cache_read_input_tokens, v.cache_creation_input_tokens]).toEqual([0, 0]);
  });
});

describe("automatic prompt caching (chat completions, generateContent)", () => {
  test("chat: the leading turns seen before are reported as cached_tokens, part of prompt_tokens", async () => {
    const s = sim();
    const first = [{ role: "system", content: LONG }, { role: "user", content: "One [sim chunks=2]" }];
    const u1 = (await (await s.post(PATH.chat, { model: "b", messages: first }, AUTH.chat)).json()).usage;
    expect(u1.prompt_tokens_details.cached_tokens).toBe(0);
    const second = [...first, { role: "assistant", content: "Ok." }, { role: "user", content: "Two [sim chunks=2]" }];
    const u2 = (await (await s.post(PATH.chat, { model: "b", messages: second }, AUTH.chat)).json()).usage;
    expect(u2.prompt_tokens_details.cached_tokens).toBe(countPromptTokens("chat", { model: "b", messages: first }));
    expect(u2.prompt_tokens).toBe(countPromptTokens("chat", { model: "b", messages: second }));
  });

  test("generateContent: cachedContentTokenCount for the repeated leading contents", async () => {
    const s = sim();
    const contents = [{ role: "user", parts: [{ text: LONG }] }];
    await s.post(PATH.generate("g"), { contents }, AUTH.generate);
    const more = [...contents, { role: "model", parts: [{ text: "Ok." }] }, { role: "user", parts: [{ text: "Next [sim chunks=2]" }] }];
    const meta = (await (await s.post(PATH.generate("g"), { contents: more }, AUTH.generate)).json()).usageMetadata;
    expect(meta.cachedContentTokenCount).toBe(countPromptTokens("generate", { contents }));
  });
});
