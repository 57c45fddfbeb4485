import { describe, expect, test } from "bun:test";
import { AUTH, PATH, defaultReply, events, sim, tok } from "./test-support";

const body = (extra: Record<string, unknown> = {}, content = "Hello there") => ({
  model: "alpha-sonnet-4-6",
  max_tokens: 500,
  system: "Be brief.",
  messages: [{ role: "user", content }],
  ...extra,
});
const INPUT = 3 + tok("Be brief.") + 3 + tok("Hello there");
const TEXT = defaultReply("alpha-sonnet-4-6", "Hello there");

// Section numbers (§) in the test names refer to docs/protocols.md.
describe("messages protocol, text replies", () => {
  test("JSON reply: the real envelope, the deterministic text and exact usage", async () => {
    const res = await sim().post(PATH.messages, body(), AUTH.messages);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-simulator")).toBe("turnpike");
    expect(res.headers.get("request-id")).toMatch(/^req_sim\d+$/);
    const json = await res.json();
    expect(json).toEqual({
      id: expect.stringMatching(/^msg_sim\d+$/),
      type: "message",
      role: "assistant",
      model: "alpha-sonnet-4-6",
      content: [{ type: "text", text: TEXT }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: {
        input_tokens: INPUT,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
        output_tokens: tok(TEXT),
        service_tier: "standard",
      },
    });
  });

  test("stream: event lines equal the JSON type, §1.7 order, ping after the first block start", async () => {
    const res = await sim().post(PATH.messages, body({ stream: true }), AUTH.messages);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const evs = await events(res);
    const data = evs.map((e) => JSON.parse(e.data));
    for (let i = 0; i < evs.length; i++) expect(evs[i]!.event).toBe(data[i].type);
    expect(data.map((d) => d.type)).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      ...Array(12).fill("content_block_delta"),
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(data[0].message.usage).toMatchObject({ input_tokens: INPUT, output_tokens: 1 });
    expect(data[0].message).toMatchObject({
      content: [],
      stop_reason: null,
      stop_sequence: null,
      model: "alpha-sonnet-4-6",
    });
    expect(data[1]).toEqual({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    const text = data
      .filter((d) => d.type === "content_block_delta")
      .map((d) => d.delta.text)
      .join("");
    expect(text).toBe(TEXT);
    expect(data.at(-2)).toEqual({
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: {
        input_tokens: INPUT,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: tok(TEXT),
      },
    });
  });

  test("chunks option and directive set the number of text deltas", async () => {
    const deltas = async (s: ReturnType<typeof sim>, content: string) =>
      (await events(await s.post(PATH.messages, body({ stream: true }, content), AUTH.messages))).filter(
        (e) => e.event === "content_block_delta",
      ).length;
    expect(await deltas(sim({ chunks: 3 }), "Hi")).toBe(3);
    expect(await deltas(sim(), "Hi [sim chunks=50]")).toBe(50);
  });

  test("count_tokens reports the same input tokens as the reply", async () => {
    const { max_tokens: _, ...countBody } = body();
    const res = await sim().post("/v1/messages/count_tokens", countBody, AUTH.messages);
    expect(await res.json()).toEqual({ input_tokens: INPUT });
  });

  test("max_tokens truncates the text and stops with max_tokens, in JSON and stream alike", async () => {
    const s = sim();
    const json = await (await s.post(PATH.messages, body({ max_tokens: 5 }), AUTH.messages)).json();
    expect(json.stop_reason).toBe("max_tokens");
    expect(json.usage.output_tokens).toBe(5);
    expect(TEXT.startsWith(json.content[0].text)).toBe(true);
    expect(tok(json.content[0].text)).toBe(5);
    const data = (await events(await s.post(PATH.messages, body({ max_tokens: 5, stream: true }), AUTH.messages))).map(
      (e) => JSON.parse(e.data),
    );
    expect(
      data
        .filter((d) => d.type === "content_block_delta")
        .map((d) => d.delta.text)
        .join(""),
    ).toBe(json.content[0].text);
    expect(data.at(-2).delta.stop_reason).toBe("max_tokens");
    expect(data.at(-2).usage.output_tokens).toBe(5);
  });

  test("a stop sequence cuts the text before it and is reported", async () => {
    const json = await (
      await sim().post(
        PATH.messages,
        body({ stop_sequences: ["NEVER", "STOP"] }, '[sim text="one two STOP three"]'),
        AUTH.messages,
      )
    ).json();
    expect(json.content).toEqual([{ type: "text", text: "one two " }]);
    expect(json.stop_reason).toBe("stop_sequence");
    expect(json.stop_sequence).toBe("STOP");
    expect(json.usage.output_tokens).toBe(tok("one two "));
  });

  test("the text directive and the text option set the exact reply", async () => {
    const a = await (
      await sim().post(PATH.messages, body({}, 'Say it [sim text="Exactly this."]'), AUTH.messages)
    ).json();
    expect(a.content[0].text).toBe("Exactly this.");
    const b = await (await sim({ text: "Fixed." }).post(PATH.messages, body(), AUTH.messages)).json();
    expect(b.content[0].text).toBe("Fixed.");
  });

  test("an assistant prefill at the end: directives still come from the last user turn", async () => {
    const json = await (
      await sim().post(
        PATH.messages,
        body({
          messages: [
            { role: "user", content: '[sim text="ok"]' },
            { role: "assistant", content: "Sure" },
          ],
        }),
        AUTH.messages,
      )
    ).json();
    expect(json.content[0].text).toBe("ok");
  });

  test("output_tokens is never 0, even for an empty reply", async () => {
    const json = await (await sim().post(PATH.messages, body({}, '[sim text=""]'), AUTH.messages)).json();
    expect(json.content).toEqual([]);
    expect(json.usage.output_tokens).toBe(1);
  });
});
