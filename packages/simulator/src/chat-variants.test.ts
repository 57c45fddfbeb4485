import { describe, expect, test } from "bun:test";
import { AUTH, PATH, payloads, sim, tok } from "./test-support";

const tools = [
  {
    type: "function",
    function: {
      name: "get_weather",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
  {
    type: "function",
    function: {
      name: "get_time",
      parameters: { type: "object", properties: { zone: { type: "string" } }, required: ["zone"] },
    },
  },
];
const ARGS = [JSON.stringify({ city: "sample city" }), JSON.stringify({ zone: "sample zone" })];

async function stream(directive: string, extra: Record<string, unknown> = {}): Promise<any[]> {
  const body = { model: "b", stream: true, tools, messages: [{ role: "user", content: `Go ${directive}` }], ...extra };
  const all = await payloads(await sim().post(PATH.chat, body, AUTH.chat));
  expect(all.at(-1)).toBe("[DONE]");
  return all.slice(0, -1);
}
const calls = (objs: any[]) => objs.flatMap((o) => o.choices[0]?.delta.tool_calls ?? []);

describe("chat stream variants of real upstreams (docs/protocols.md §2.6, §4.9)", () => {
  test("whole-tool-call: id, name and the complete arguments in one chunk (xAI)", async () => {
    const c = calls(await stream("[sim tools=2 variant=whole-tool-call]"));
    expect(c).toEqual([
      { index: 0, id: expect.any(String), type: "function", function: { name: "get_weather", arguments: ARGS[0] } },
      { index: 1, id: expect.any(String), type: "function", function: { name: "get_time", arguments: ARGS[1] } },
    ]);
  });

  test("usage-every-chunk: every chunk has usage; the finish chunk has the final totals (vLLM)", async () => {
    const objs = await stream("[sim variant=usage-every-chunk chunks=4]", { tools: undefined });
    expect(objs).toHaveLength(6);
    expect(objs.every((o) => o.usage && typeof o.usage.completion_tokens === "number")).toBe(true);
    const text = objs.map((o) => o.choices[0].delta.content ?? "").join("");
    expect(objs.at(-1).choices[0].finish_reason).toBe("stop");
    expect(objs.at(-1).usage.completion_tokens).toBe(tok(text));
    expect(objs[1].usage.completion_tokens).toBe(tok(objs[1].choices[0].delta.content));
  });

  test("usage-every-chunk with include_usage still ends with the choices:[] usage chunk", async () => {
    const objs = await stream("[sim variant=usage-every-chunk chunks=2]", {
      tools: undefined,
      stream_options: { include_usage: true },
    });
    expect(objs.at(-1).choices).toEqual([]);
  });

  test("finish-with-content: the last content and finish_reason share one chunk", async () => {
    const objs = await stream('[sim variant=finish-with-content text="a b c" chunks=3]', { tools: undefined });
    expect(objs.map((o) => [o.choices[0].delta.content, o.choices[0].finish_reason])).toEqual([
      ["", null],
      ["a", null],
      [" b", null],
      [" c", "stop"],
    ]);
  });

  test('prompt-filter-first: an Azure chunk with choices:[] and id:"" comes first', async () => {
    const objs = await stream("[sim variant=prompt-filter-first chunks=2]", { tools: undefined });
    expect(objs[0]).toMatchObject({ id: "", choices: [], prompt_filter_results: [{ prompt_index: 0 }] });
    expect(objs[1].choices[0].delta.role).toBe("assistant");
  });

  test("no-usage: include_usage is ignored (no usage chunk, no usage:null)", async () => {
    const objs = await stream("[sim variant=no-usage chunks=2]", {
      tools: undefined,
      stream_options: { include_usage: true },
    });
    expect(objs).toHaveLength(4);
    expect(objs.some((o) => "usage" in o)).toBe(false);
  });

  test("tool-index-1: tool call indexes start at 1", async () => {
    expect([...new Set(calls(await stream("[sim tools=2 variant=tool-index-1]")).map((c) => c.index))]).toEqual([1, 2]);
  });

  test("interleaved-tools: fragments of two parallel calls interleave; each call's arguments still join to valid JSON", async () => {
    const c = calls(await stream("[sim variant=interleaved-tools]"));
    const order = c.map((x) => x.index);
    expect(order.slice(0, 4)).toEqual([0, 1, 0, 1]);
    for (const i of [0, 1])
      expect(
        c
          .filter((x) => x.index === i)
          .map((x) => x.function.arguments)
          .join(""),
      ).toBe(ARGS[i]!);
  });

  test("empty-tool-calls: content chunks carry tool_calls: [] (vLLM)", async () => {
    const objs = await stream('[sim variant=empty-tool-calls text="a b" chunks=2]', { tools: undefined });
    const content = objs.filter((o) => o.choices[0].delta.content);
    expect(content.map((o) => o.choices[0].delta)).toEqual([
      { content: "a", tool_calls: [] },
      { content: " b", tool_calls: [] },
    ]);
  });

  test("usage-in-finish: usage rides on the finish chunk without include_usage; no choices:[] chunk (DeepSeek)", async () => {
    const objs = await stream('[sim variant=usage-in-finish text="a b" chunks=2]', { tools: undefined });
    expect(objs.at(-1).choices[0].finish_reason).toBe("stop");
    expect(objs.at(-1).usage.completion_tokens).toBe(tok("a b"));
    expect(objs.slice(0, -1).every((o) => o.usage === null)).toBe(true);
    expect(objs.some((o) => o.choices.length === 0)).toBe(false);
  });
});

describe("messages stream variant", () => {
  test("no-input-in-delta: message_delta.usage has only output_tokens (Bedrock)", async () => {
    const body = {
      model: "a",
      max_tokens: 100,
      stream: true,
      messages: [{ role: "user", content: '[sim variant=no-input-in-delta text="ok"]' }],
    };
    const data = await payloads(await sim().post(PATH.messages, body, AUTH.messages));
    expect(data.at(-2)).toEqual({
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: tok("ok") },
    });
  });
});
