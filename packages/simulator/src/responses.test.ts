import { describe, expect, test } from "bun:test";
import { AUTH, events, payloads, sim, tok } from "./test-support";

const PATH = "/v1/responses";
const post = (body: Record<string, unknown>) => sim().post(PATH, { model: "beta-5", ...body }, AUTH.chat);

describe("the Responses protocol (POST /v1/responses)", () => {
  test("JSON: a message of output_text, status completed, usage in the format's own fields", async () => {
    const res = await post({ input: '[sim text="Hello there."]', instructions: "Be brief." });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toMatch(/^req_sim\d+$/);
    const r = (await res.json()) as any;
    expect(r.object).toBe("response");
    expect(r.id).toMatch(/^resp_sim\d+$/);
    expect(r.status).toBe("completed");
    expect(r.model).toBe("beta-5");
    // The response repeats the request's settings.
    expect([r.instructions, r.store, r.tool_choice, r.reasoning]).toEqual([
      "Be brief.",
      true,
      "auto",
      { effort: null, summary: null },
    ]);
    expect(r.output).toEqual([
      {
        type: "message",
        id: expect.stringMatching(/^msg_/),
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Hello there.", annotations: [], logprobs: [] }],
      },
    ]);
    expect(r.usage.output_tokens).toBe(tok("Hello there."));
    expect(r.usage.total_tokens).toBe(r.usage.input_tokens + r.usage.output_tokens);
    expect(r.usage.input_tokens_details).toEqual({ cached_tokens: 0 });
  });

  test("the input-token count equals the usage of the same prompt", async () => {
    const body = {
      model: "beta-5",
      input: [{ role: "user", content: [{ type: "input_text", text: "Count these words please" }] }],
      instructions: "Sys",
    };
    const s = sim();
    const counted = (await (await s.post("/v1/responses/input_tokens", body, AUTH.chat)).json()) as any;
    const reply = (await (await s.post(PATH, body, AUTH.chat)).json()) as any;
    expect(counted.object).toBe("response.input_tokens");
    expect(counted.input_tokens).toBeGreaterThan(tok("Count these words please"));
    expect(counted.input_tokens).toBe(reply.usage.input_tokens);
  });

  test("tools: function calls with call_id and the arguments as JSON text, parallel when allowed", async () => {
    const tools = [
      {
        type: "function",
        name: "get_weather",
        parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
      { type: "function", name: "get_time", parameters: { type: "object", properties: {} } },
    ];
    const r = (await (await post({ input: "[sim tools=2]", tools })).json()) as any;
    expect(r.output.map((i: any) => [i.type, i.name])).toEqual([
      ["function_call", "get_weather"],
      ["function_call", "get_time"],
    ]);
    expect(JSON.parse(r.output[0].arguments)).toEqual({ city: expect.any(String) });
    expect(r.output[1].arguments).toBe("{}");
    expect(r.output[0].call_id).not.toBe(r.output[1].call_id);
    const one = (await (await post({ input: "[sim tools=2]", tools, parallel_tool_calls: false })).json()) as any;
    expect(one.output).toHaveLength(1);
  });

  test("a tool result round trip answers in text", async () => {
    const input = [
      { role: "user", content: "weather?" },
      { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' },
      { type: "function_call_output", call_id: "call_1", output: "Sunny, 21C" },
    ];
    const r = (await (
      await post({ input, tools: [{ type: "function", name: "get_weather", parameters: {} }] })
    ).json()) as any;
    expect(r.output[0].content[0].text).toContain("get_weather returned: Sunny, 21C");
  });

  test("reasoning: a summary only when asked, encrypted content only when included", async () => {
    const plain = (await (await post({ input: "[sim think]" })).json()) as any;
    expect(plain.output[0]).toEqual({ type: "reasoning", id: expect.any(String), summary: [] });
    expect(plain.usage.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    const full = (await (
      await post({
        input: "[sim think]",
        reasoning: { effort: "low", summary: "auto" },
        include: ["reasoning.encrypted_content"],
      })
    ).json()) as any;
    expect(full.output[0].summary[0].text).toContain("Thinking about the request");
    expect(typeof full.output[0].encrypted_content).toBe("string");
    expect(full.output[0].encrypted_content.length).toBeGreaterThan(0);
  });

  test("max_output_tokens: status incomplete with its reason; a refusal: incomplete for content_filter", async () => {
    const cut = (await (
      await post({ input: '[sim text="one two three four five six seven eight nine ten"]', max_output_tokens: 3 })
    ).json()) as any;
    expect(cut.status).toBe("incomplete");
    expect(cut.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(cut.usage.output_tokens).toBe(3);
    const refused = (await (await post({ input: "[sim refusal]" })).json()) as any;
    expect(refused.incomplete_details).toEqual({ reason: "content_filter" });
  });

  test("stream: the real event sequence, consecutive sequence_numbers, the whole response at the end", async () => {
    const res = await post({
      input: '[sim think chunks=3 text="Alpha beta gamma."]',
      stream: true,
      reasoning: { summary: "auto" },
      tools: [{ type: "function", name: "f", parameters: {} }],
      tool_choice: "none",
    });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const evs = await events(res);
    const data = evs.map((e) => JSON.parse(e.data));
    expect(evs.every((e, i) => e.event === data[i].type)).toBe(true);
    expect(data.map((d) => d.sequence_number)).toEqual(data.map((_, i) => i));
    const types = [...new Set(data.map((d) => d.type))];
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.reasoning_summary_part.added",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
      "response.output_item.done",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.completed",
    ]);
    const text = data
      .filter((d) => d.type === "response.output_text.delta")
      .map((d) => d.delta)
      .join("");
    const done = data.at(-1).response;
    expect(text).toBe("Alpha beta gamma.");
    expect(done.output[1].content[0].text).toBe(text);
    expect(done.usage.output_tokens).toBe(tok("Alpha beta gamma.") + done.usage.output_tokens_details.reasoning_tokens);
  });

  test("stream: a function call's arguments in delta events, then done with the whole arguments", async () => {
    const tools = [
      {
        type: "function",
        name: "lookup",
        parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
      },
    ];
    const data = await payloads(await post({ input: "[sim tools=1]", tools, stream: true }));
    const args = data
      .filter((d) => d.type === "response.function_call_arguments.delta")
      .map((d) => d.delta)
      .join("");
    expect(data.find((d) => d.type === "response.function_call_arguments.done").arguments).toBe(args);
    expect(JSON.parse(args)).toEqual({ q: expect.any(String) });
  });

  test("midstream_error: error then response.failed after half the deltas, sequence numbers unbroken", async () => {
    const data = await payloads(await post({ input: "[sim chunks=6 midstream_error]", stream: true }));
    expect(data.filter((d) => d.type === "response.output_text.delta")).toHaveLength(3);
    expect(data.at(-2)).toEqual({
      type: "error",
      code: "server_error",
      message: expect.any(String),
      param: null,
      sequence_number: data.length - 2,
    });
    expect(data.at(-1).type).toBe("response.failed");
    expect(data.at(-1).response.error.code).toBe("server_error");
    expect(data.map((d) => d.sequence_number)).toEqual(data.map((_, i) => i));
  });

  test("errors in the chat envelope: an error directive, another protocol's parameter, a missing key", async () => {
    const e = await post({ input: "[sim error=429 retry_after=2]" });
    expect(e.status).toBe(429);
    expect(e.headers.get("retry-after")).toBe("2");
    expect(((await e.json()) as any).error.type).toBe("requests");
    const foreign = await post({ input: "hi", stop: ["x"] });
    expect(foreign.status).toBe(400);
    expect(((await foreign.json()) as any).error).toMatchObject({ param: "stop", code: "unknown_parameter" });
    const unauth = await sim().post(PATH, { model: "m", input: "hi" });
    expect(unauth.status).toBe(401);
  });
});
