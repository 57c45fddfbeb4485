import { describe, expect, test } from "bun:test";
import { AUTH, PATH, defaultReply, payloads, sim, tok } from "./test-support";

const body = (extra: Record<string, unknown> = {}, content = "Hello there") => ({
  model: "beta-5",
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content },
  ],
  ...extra,
});
const INPUT = 3 + tok("Be brief.") + 3 + tok("Hello there");
const TEXT = defaultReply("beta-5", "Hello there");
const USAGE = (completion: number, reasoning = 0) => ({
  prompt_tokens: INPUT,
  completion_tokens: completion,
  total_tokens: INPUT + completion,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: {
    reasoning_tokens: reasoning,
    audio_tokens: 0,
    accepted_prediction_tokens: 0,
    rejected_prediction_tokens: 0,
  },
});

describe("chat completions protocol, text replies", () => {
  test("JSON reply: the real envelope, the deterministic text and exact usage", async () => {
    const res = await sim().post(PATH.chat, body(), AUTH.chat);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-simulator")).toBe("turnpike");
    expect(await res.json()).toEqual({
      id: expect.stringMatching(/^chatcmpl-sim\d+$/),
      object: "chat.completion",
      created: expect.any(Number),
      model: "beta-5",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: TEXT, refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
      usage: USAGE(tok(TEXT)),
      service_tier: "default",
      system_fingerprint: "fp_sim",
    });
  });

  test("stream with include_usage: role chunk, content, finish, choices:[] usage chunk, [DONE]; usage:null before", async () => {
    const res = await sim().post(PATH.chat, body({ stream: true, stream_options: { include_usage: true } }), AUTH.chat);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const chunks = await payloads(res);
    expect(chunks.at(-1)).toBe("[DONE]");
    const objs = chunks.slice(0, -1);
    expect(objs).toHaveLength(1 + 12 + 1 + 1);
    expect(new Set(objs.map((c) => c.id)).size).toBe(1);
    expect(new Set(objs.map((c) => c.created)).size).toBe(1);
    expect(objs.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    // As recorded (openai-text.chunks.txt): the JSON reply's service tier and fingerprint on every chunk.
    expect(objs.every((c) => c.service_tier === "default" && c.system_fingerprint === "fp_sim")).toBe(true);
    expect(objs[0].choices).toEqual([
      { index: 0, delta: { role: "assistant", content: "", refusal: null }, logprobs: null, finish_reason: null },
    ]);
    expect(
      objs
        .slice(1, 13)
        .map((c) => c.choices[0].delta.content)
        .join(""),
    ).toBe(TEXT);
    expect(objs[13].choices).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }]);
    for (const c of objs.slice(0, 14)) expect(c.usage).toBeNull();
    expect(objs[14].choices).toEqual([]);
    expect(objs[14].usage).toEqual(USAGE(tok(TEXT)));
  });

  test("stream without include_usage: no usage chunk and no usage key at all", async () => {
    const chunks = await payloads(await sim().post(PATH.chat, body({ stream: true }), AUTH.chat));
    expect(chunks.at(-1)).toBe("[DONE]");
    const objs = chunks.slice(0, -1);
    expect(objs).toHaveLength(14);
    expect(objs.every((c) => !("usage" in c))).toBe(true);
    expect(objs.at(-1).choices[0].finish_reason).toBe("stop");
  });

  test("max_completion_tokens and max_tokens cap the text and finish with length", async () => {
    for (const cap of [{ max_completion_tokens: 4 }, { max_tokens: 4 }]) {
      const json = await (await sim().post(PATH.chat, body(cap), AUTH.chat)).json();
      expect(json.choices[0].finish_reason).toBe("length");
      expect(tok(json.choices[0].message.content)).toBe(4);
      expect(json.usage.completion_tokens).toBe(4);
    }
  });

  test("stop as a string or a list cuts the text; finish_reason stop", async () => {
    for (const stop of ["beta", ["zzz", "beta"]]) {
      const json = await (
        await sim().post(PATH.chat, body({ stop }, '[sim text="alpha beta gamma"]'), AUTH.chat)
      ).json();
      expect(json.choices[0].message.content).toBe("alpha ");
      expect(json.choices[0].finish_reason).toBe("stop");
      expect(json.usage.completion_tokens).toBe(tok("alpha "));
    }
  });

  test("JSON and stream report the same text and usage", async () => {
    const s = sim();
    const json = await (await s.post(PATH.chat, body({}, "Tell me [sim chunks=7]"), AUTH.chat)).json();
    const objs = (
      await payloads(
        await s.post(
          PATH.chat,
          body({ stream: true, stream_options: { include_usage: true } }, "Tell me [sim chunks=7]"),
          AUTH.chat,
        ),
      )
    ).slice(0, -1);
    expect(objs.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe(json.choices[0].message.content);
    expect(objs.at(-1).usage).toEqual(json.usage);
  });
});

describe("per-request values of identical requests", () => {
  test("each reply gets its own id; created is the current time; the rest is identical", async () => {
    const s = sim();
    const before = Math.floor(Date.now() / 1000);
    const a = await (await s.post(PATH.chat, body({ stream: true }), AUTH.chat)).text();
    const b = await (await s.post(PATH.chat, body({ stream: true }), AUTH.chat)).text();
    const ida = /"id":"(chatcmpl-sim\d+)"/.exec(a)![1];
    const idb = /"id":"(chatcmpl-sim\d+)"/.exec(b)![1];
    expect(ida).not.toBe(idb);
    expect(b.replaceAll(idb!, ida!)).toBe(a);
    const created = Number(/"created":(\d+)/.exec(a)![1]);
    expect(created).toBeGreaterThanOrEqual(before);
    expect(created).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  });
});
