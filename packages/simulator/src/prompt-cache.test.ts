import { describe, expect, test } from "bun:test";
import { countPromptTokens } from "./count-prompt-tokens";
import { SIM_MAX_BODY_BYTES } from "./create-handler";
import { CAPACITY, MIN_CACHED_TOKENS, SimPromptCache } from "./prompt-cache";
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
    const short = {
      model: "a",
      max_tokens: 50,
      messages: [{ role: "user", content: [{ type: "text", text: "Hi", cache_control: EPH }] }],
    };
    const v = (await (await s.post(PATH.messages, short, AUTH.messages)).json()).usage;
    expect([v.cache_read_input_tokens, v.cache_creation_input_tokens]).toEqual([0, 0]);
  });
});

describe("automatic prompt caching (chat completions, generateContent)", () => {
  test("chat: the leading turns seen before are reported as cached_tokens, part of prompt_tokens", async () => {
    const s = sim();
    const first = [
      { role: "system", content: LONG },
      { role: "user", content: "One [sim chunks=2]" },
    ];
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
    const more = [
      ...contents,
      { role: "model", parts: [{ text: "Ok." }] },
      { role: "user", parts: [{ text: "Next [sim chunks=2]" }] },
    ];
    const meta = (await (await s.post(PATH.generate("g"), { contents: more }, AUTH.generate)).json()).usageMetadata;
    expect(meta.cachedContentTokenCount).toBe(countPromptTokens("generate", { contents }));
  });
});

// Issue 27, item 1: every prefix of a conversation was once re-serialized and re-counted, so a
// 6,000-turn chat held the process 9–17 s at 1.8 GB. Each turn is now counted and hashed once,
// and what one request leaves in the cache is bounded.
describe("a long conversation: linear work, bounded memory, limits", () => {
  const many = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `turn ${i} of a long talk` }));

  test("15,000 turns: the reply counts every turn, the cache keeps at most its capacity, and the same conversation one turn longer reads it all", () => {
    const cache = new SimPromptCache();
    const body = { model: "b", messages: many(15_000) };
    expect(cache.useAutomatic("chat", body)).toBeUndefined();
    expect(cache.size).toBeLessThanOrEqual(CAPACITY);
    expect(cache.size).toBeGreaterThan(0);
    const longer = { model: "b", messages: [...body.messages, { role: "user", content: "one more" }] };
    expect(cache.useAutomatic("chat", longer)).toEqual({ read: countPromptTokens("chat", body), write: 0, write1h: 0 });
    expect(cache.size).toBeLessThanOrEqual(CAPACITY);
  });

  test("sliced, the same answer, with a pause after each turn (the event loop's turns while the gateway shares it)", async () => {
    const body = { model: "b", messages: many(3000) };
    const longer = { model: "b", messages: [...body.messages, { role: "user", content: "one more" }] };
    const whole = new SimPromptCache();
    const sliced = new SimPromptCache();
    let pauses = 0;
    const pause = async () => {
      pauses++;
    };
    expect(await sliced.useAutomaticSliced("chat", body, pause)).toEqual(whole.useAutomatic("chat", body));
    expect(pauses).toBe(3000);
    expect(await sliced.useAutomaticSliced("chat", longer, pause)).toEqual(whole.useAutomatic("chat", longer));
    expect(sliced.size).toBe(whole.size);
  });

  test("the prefix counts summed turn by turn equal the whole count, for Responses function calls that join an assistant turn too", () => {
    const cache = new SimPromptCache();
    const input = [
      { role: "user", content: LONG },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Calling." }] },
      { type: "function_call", call_id: "c1", name: "lookup", arguments: '{"q":"a"}' },
      { type: "function_call", call_id: "c2", name: "lookup", arguments: '{"q":"b"}' },
      { type: "reasoning", summary: [] },
      { type: "function_call_output", call_id: "c1", output: "found a" },
      { type: "function_call_output", call_id: "c2", output: "found b" },
    ];
    const body = {
      model: "r",
      instructions: "Be brief.",
      tools: [{ type: "function", name: "lookup", parameters: { type: "object" } }],
      input,
    };
    cache.useAutomatic("responses", body);
    const next = { ...body, input: [...input, { role: "user", content: "and then?" }] };
    expect(cache.useAutomatic("responses", next)?.read).toBe(countPromptTokens("responses", body));
  });

  test("a large many-turn request is answered beside a small one; a body past the limit is a 400 in the protocol's format", async () => {
    const s = sim();
    const big = { model: "b", messages: [{ role: "system", content: LONG }, ...many(15_000)] };
    expect(JSON.stringify(big).length).toBeLessThan(SIM_MAX_BODY_BYTES);
    const [large, small] = await Promise.all([
      s.post(PATH.chat, big, AUTH.chat),
      s.post(PATH.chat, { model: "b", messages: [{ role: "user", content: "hi" }] }, AUTH.chat),
    ]);
    expect(small.status).toBe(200);
    expect(large.status).toBe(200);
    expect((await large.json()).usage.prompt_tokens).toBe(countPromptTokens("chat", big));
    const tooBig = { model: "b", messages: many(60_000) };
    const chat = await s.post(PATH.chat, tooBig, AUTH.chat);
    expect(chat.status).toBe(400);
    expect((await chat.json()).error).toMatchObject({
      type: "invalid_request_error",
      message: expect.stringContaining(`limit of ${SIM_MAX_BODY_BYTES} bytes`),
    });
    const messages = await s.post(PATH.messages, { ...tooBig, max_tokens: 5 }, AUTH.messages);
    expect(messages.status).toBe(400);
    expect(await messages.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
  });

  test("more than four cache breakpoints: the vendor's own 400", async () => {
    const s = sim();
    const blocks = Array.from({ length: 5 }, (_, i) => ({ type: "text", text: `part ${i}`, cache_control: EPH }));
    const res = await s.post(
      PATH.messages,
      { model: "a", max_tokens: 5, messages: [{ role: "user", content: blocks }] },
      AUTH.messages,
    );
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toBe("A maximum of 4 blocks with cache_control may be provided. Found 5.");
  });
});
