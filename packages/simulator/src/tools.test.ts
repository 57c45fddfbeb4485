import { describe, expect, test } from "bun:test";
import { AUTH, PATH, events, payloads, sim, tok } from "./test-support";

const WEATHER_SCHEMA = {
  type: "object",
  properties: {
    city: { type: "string" },
    unit: { type: "string", enum: ["celsius", "fahrenheit"] },
    days: { type: "integer", minimum: 2 },
    note: { type: "string" },
  },
  required: ["city", "unit", "days"],
};
const WEATHER_ARGS = { city: "sample city", unit: "celsius", days: 2 };
const TIME_SCHEMA = { type: "object", properties: {} };

const messagesTools = [
  { name: "get_weather", description: "Weather", input_schema: WEATHER_SCHEMA },
  { name: "get_time", input_schema: TIME_SCHEMA },
];
const chatTools = messagesTools.map((t) => ({
  type: "function",
  function: { name: t.name, description: t.description, parameters: t.input_schema },
}));
const generateTools = [
  {
    functionDeclarations: messagesTools.map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.input_schema,
    })),
  },
];

const mBody = (content: string, extra: Record<string, unknown> = {}) => ({
  model: "a",
  max_tokens: 500,
  tools: messagesTools,
  messages: [{ role: "user", content }],
  ...extra,
});
const cBody = (content: string, extra: Record<string, unknown> = {}) => ({
  model: "b",
  tools: chatTools,
  messages: [{ role: "user", content }],
  ...extra,
});
const gBody = (text: string, extra: Record<string, unknown> = {}) => ({
  tools: generateTools,
  contents: [{ role: "user", parts: [{ text }] }],
  ...extra,
});

describe("tool calls, messages protocol", () => {
  test("[sim tools=2] JSON: the first two tools, arguments from required properties, stop tool_use", async () => {
    const json = await (await sim().post(PATH.messages, mBody("Weather? [sim tools=2]"), AUTH.messages)).json();
    expect(json.content).toEqual([
      {
        type: "tool_use",
        id: expect.stringMatching(/^toolu_[A-Za-z0-9_-]+$/),
        name: "get_weather",
        input: WEATHER_ARGS,
      },
      { type: "tool_use", id: expect.stringMatching(/^toolu_/), name: "get_time", input: {} },
    ]);
    expect(json.content[0].id).not.toBe(json.content[1].id);
    expect(json.stop_reason).toBe("tool_use");
    expect(json.usage.output_tokens).toBe(tok(JSON.stringify(WEATHER_ARGS)) + tok("{}"));
  });

  test('stream: tool_use block opens with input:{}, input_json_delta fragments start with ""; a call without arguments sends only ""', async () => {
    const data = (
      await events(await sim().post(PATH.messages, mBody("[sim tools=2]", { stream: true }), AUTH.messages))
    ).map((e) => JSON.parse(e.data));
    const starts = data.filter((d) => d.type === "content_block_start");
    expect(starts.map((s) => [s.index, s.content_block.type, s.content_block.name, s.content_block.input])).toEqual([
      [0, "tool_use", "get_weather", {}],
      [1, "tool_use", "get_time", {}],
    ]);
    const frags = (i: number) =>
      data.filter((d) => d.type === "content_block_delta" && d.index === i).map((d) => d.delta);
    expect(frags(0)[0]).toEqual({ type: "input_json_delta", partial_json: "" });
    expect(frags(0).length).toBeGreaterThan(2);
    expect(
      JSON.parse(
        frags(0)
          .map((f) => f.partial_json)
          .join(""),
      ),
    ).toEqual(WEATHER_ARGS);
    expect(frags(1)).toEqual([{ type: "input_json_delta", partial_json: "" }]);
    expect(data.at(-2).delta.stop_reason).toBe("tool_use");
  });

  test("the first tool N times when the request has fewer tools", async () => {
    const json = await (
      await sim().post(PATH.messages, mBody("[sim tools=3]", { tools: [messagesTools[0]] }), AUTH.messages)
    ).json();
    expect(json.content.map((b: { name: string }) => b.name)).toEqual(["get_weather", "get_weather", "get_weather"]);
  });

  test("tool_choice any / tool forces a call without a directive; auto decides like a model", async () => {
    const s = sim();
    const any = await (
      await s.post(PATH.messages, mBody("Hi", { tool_choice: { type: "any" } }), AUTH.messages)
    ).json();
    expect(any.content.map((b: { name: string }) => b.name)).toEqual(["get_weather"]);
    const named = await (
      await s.post(PATH.messages, mBody("Hi", { tool_choice: { type: "tool", name: "get_time" } }), AUTH.messages)
    ).json();
    expect(named.content.map((b: { name: string }) => b.name)).toEqual(["get_time"]);
    // auto, the user's turn last: a call to the tool the turn names (else the first), with valid arguments.
    const auto = await (
      await s.post(
        PATH.messages,
        mBody("What time is it? Use get_time.", { tool_choice: { type: "auto" } }),
        AUTH.messages,
      )
    ).json();
    expect(auto.content.map((b: { name: string }) => b.name)).toEqual(["get_time"]);
    expect(auto.stop_reason).toBe("tool_use");
    const first = await (await s.post(PATH.messages, mBody("Hi"), AUTH.messages)).json();
    expect(first.content).toEqual([
      { type: "tool_use", id: first.content[0].id, name: "get_weather", input: WEATHER_ARGS },
    ]);
    // A directive in the turn steers the reply instead: text unless it asks for tools.
    const steered = await (await s.post(PATH.messages, mBody("Hi [sim chunks=2]"), AUTH.messages)).json();
    expect(steered.content[0].type).toBe("text");
    // An assistant prefill last: the reply continues it in text.
    const prefill = mBody("Hi", {
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Well" },
      ],
    });
    expect((await (await s.post(PATH.messages, prefill, AUTH.messages)).json()).content[0].type).toBe("text");
  });

  test("a path-like argument takes the file name the user mentioned", async () => {
    const read = {
      name: "Read",
      description: "Reads a file",
      input_schema: { type: "object", properties: { file_path: { type: "string" } }, required: ["file_path"] },
    };
    const body = {
      model: "a",
      max_tokens: 500,
      tools: [messagesTools[0], read],
      messages: [
        { role: "user", content: "Read notes.txt and tell me what it says" },
        { role: "system", content: "Skills: none" },
      ],
    };
    const json = await (await sim().post(PATH.messages, body, AUTH.messages)).json();
    expect(json.content.map((b: { name: string; input: unknown }) => [b.name, b.input])).toEqual([
      ["Read", { file_path: "notes.txt" }],
    ]);
  });

  test("disable_parallel_tool_use limits the reply to one call", async () => {
    const json = await (
      await sim().post(
        PATH.messages,
        mBody("[sim tools=2]", { tool_choice: { type: "auto", disable_parallel_tool_use: true } }),
        AUTH.messages,
      )
    ).json();
    expect(json.content).toHaveLength(1);
  });

  test("text before the calls shifts the tool block to index 1", async () => {
    const data = (
      await events(
        await sim().post(PATH.messages, mBody('[sim tools=1 text="Let me check."]', { stream: true }), AUTH.messages),
      )
    ).map((e) => JSON.parse(e.data));
    expect(data.filter((d) => d.type === "content_block_start").map((d) => [d.index, d.content_block.type])).toEqual([
      [0, "text"],
      [1, "tool_use"],
    ]);
  });

  test("a tool result turn gets a text reply that mentions the result", async () => {
    const body = {
      model: "a",
      max_tokens: 500,
      tools: messagesTools,
      messages: [
        { role: "user", content: "Weather? [sim tools=1]" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: WEATHER_ARGS }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "18C and sunny" }] },
      ],
    };
    const json = await (await sim().post(PATH.messages, body, AUTH.messages)).json();
    expect(json.stop_reason).toBe("end_turn");
    expect(json.content[0].text).toStartWith("Simulated reply from a after get_weather returned: 18C and sunny");
  });
});

describe("tool calls, chat protocol", () => {
  test("[sim tools=2] JSON: content null, tool_calls with JSON-string arguments, finish tool_calls", async () => {
    const json = await (await sim().post(PATH.chat, cBody("[sim tools=2]"), AUTH.chat)).json();
    const msg = json.choices[0].message;
    expect(msg.content).toBeNull();
    expect(msg.tool_calls).toEqual([
      {
        id: expect.stringMatching(/^call_/),
        type: "function",
        function: { name: "get_weather", arguments: JSON.stringify(WEATHER_ARGS) },
      },
      { id: expect.stringMatching(/^call_/), type: "function", function: { name: "get_time", arguments: "{}" } },
    ]);
    expect(json.choices[0].finish_reason).toBe("tool_calls");
    expect(json.usage.completion_tokens).toBe(tok(JSON.stringify(WEATHER_ARGS)) + tok("{}"));
  });

  test('stream: first delta carries index, id, type, name and arguments:"", then argument fragments', async () => {
    const objs = (
      await payloads(await sim().post(PATH.chat, cBody("[sim tools=2]", { stream: true }), AUTH.chat))
    ).slice(0, -1);
    expect(objs[0].choices[0].delta).toEqual({ role: "assistant", content: null, refusal: null });
    const calls = objs.flatMap((o) => o.choices[0]?.delta.tool_calls ?? []);
    const opener = calls.filter((c: { id?: string }) => c.id);
    expect(opener).toEqual([
      {
        index: 0,
        id: expect.stringMatching(/^call_/),
        type: "function",
        function: { name: "get_weather", arguments: "" },
      },
      {
        index: 1,
        id: expect.stringMatching(/^call_/),
        type: "function",
        function: { name: "get_time", arguments: "" },
      },
    ]);
    const args0 = calls
      .filter((c: { index: number }) => c.index === 0)
      .map((c: { function: { arguments: string } }) => c.function.arguments);
    expect(args0.length).toBeGreaterThan(2);
    expect(JSON.parse(args0.join(""))).toEqual(WEATHER_ARGS);
    expect(objs.at(-1).choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: "tool_calls" });
  });

  test("tool_choice required / named force a call; parallel_tool_calls:false allows one", async () => {
    const s = sim();
    const req = await (await s.post(PATH.chat, cBody("Hi", { tool_choice: "required" }), AUTH.chat)).json();
    expect(req.choices[0].message.tool_calls.map((c: { function: { name: string } }) => c.function.name)).toEqual([
      "get_weather",
    ]);
    const named = await (
      await s.post(
        PATH.chat,
        cBody("Hi", { tool_choice: { type: "function", function: { name: "get_time" } } }),
        AUTH.chat,
      )
    ).json();
    expect(named.choices[0].message.tool_calls[0].function.name).toBe("get_time");
    const one = await (
      await s.post(PATH.chat, cBody("[sim tools=2]", { parallel_tool_calls: false }), AUTH.chat)
    ).json();
    expect(one.choices[0].message.tool_calls).toHaveLength(1);
  });

  test("tool messages at the end get a text reply that mentions the result", async () => {
    const body = {
      model: "b",
      tools: chatTools,
      messages: [
        { role: "user", content: "Weather? [sim tools=1]" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "call_1", content: "18C and sunny" },
      ],
    };
    const json = await (await sim().post(PATH.chat, body, AUTH.chat)).json();
    expect(json.choices[0].finish_reason).toBe("stop");
    expect(json.choices[0].message.content).toStartWith(
      "Simulated reply from b after get_weather returned: 18C and sunny",
    );
  });
});

describe("tool calls, generateContent protocol", () => {
  test("JSON: complete functionCall parts, no id, thoughtSignature on the first, finishReason STOP", async () => {
    const json = await (await sim().post(PATH.generate("g"), gBody("[sim tools=2]"), AUTH.generate)).json();
    const parts = json.candidates[0].content.parts;
    expect(parts).toEqual([
      { functionCall: { name: "get_weather", args: WEATHER_ARGS }, thoughtSignature: expect.any(String) },
      { functionCall: { name: "get_time", args: {} } },
    ]);
    expect(json.candidates[0].finishReason).toBe("STOP");
    expect(json.usageMetadata.candidatesTokenCount).toBe(tok(JSON.stringify(WEATHER_ARGS)) + tok("{}"));
  });

  test("stream: the calls arrive whole in one event, then the finish event", async () => {
    const chunks = await payloads(
      await sim().post(`${PATH.generate("g", "streamGenerateContent")}?alt=sse`, gBody("[sim tools=1]"), AUTH.generate),
    );
    expect(chunks).toHaveLength(2);
    expect(chunks[0].candidates[0].content.parts).toEqual([
      { functionCall: { name: "get_weather", args: WEATHER_ARGS }, thoughtSignature: expect.any(String) },
    ]);
    expect(chunks[1].candidates[0]).toEqual({
      content: { parts: [{ text: "" }], role: "model" },
      finishReason: "STOP",
      index: 0,
    });
  });

  test("mode ANY forces a call; allowedFunctionNames picks the tool", async () => {
    const s = sim();
    const any = await (
      await s.post(
        PATH.generate("g"),
        gBody("Hi", { toolConfig: { functionCallingConfig: { mode: "ANY" } } }),
        AUTH.generate,
      )
    ).json();
    expect(any.candidates[0].content.parts[0].functionCall.name).toBe("get_weather");
    const named = await (
      await s.post(
        PATH.generate("g"),
        gBody("Hi", { toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_time"] } } }),
        AUTH.generate,
      )
    ).json();
    expect(named.candidates[0].content.parts[0].functionCall.name).toBe("get_time");
  });

  test("a functionResponse turn gets a text reply that mentions the result", async () => {
    const body = {
      tools: generateTools,
      contents: [
        { role: "user", parts: [{ text: "Weather?" }] },
        { role: "model", parts: [{ functionCall: { name: "get_weather", args: {} }, thoughtSignature: "sig" }] },
        { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { output: "18C and sunny" } } }] },
      ],
    };
    const json = await (await sim().post(PATH.generate("gamma-3-pro"), body, AUTH.generate)).json();
    // 10 words of head, padded to the 20-word minimum.
    expect(json.candidates[0].content.parts[0].text).toBe(
      "Simulated reply from gamma-3-pro after get_weather returned: 18C and sunny and the simulator keeps talking in plain deterministic words so.",
    );
  });

  test("no tools in the request: [sim tools=N] is ignored and the reply is text", async () => {
    const json = await (
      await sim().post(PATH.generate("g"), { contents: [{ parts: [{ text: "[sim tools=1]" }] }] }, AUTH.generate)
    ).json();
    expect(json.candidates[0].content.parts[0].text).toStartWith("Simulated reply from g");
  });
});
