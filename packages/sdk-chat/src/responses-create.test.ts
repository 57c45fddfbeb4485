/** `client.responses`: create (JSON), stored responses, input items and input tokens, typed errors. */
import { describe, expect, test } from "bun:test";
import { http, HttpResponse } from "msw";
import { BASE, useMockGateway } from "../test/use-mock-gateway.js";
import { AuthenticationError, BadRequestError, ModelNotFoundError, NotFoundError, RateLimitError } from "./index.js";

const { turnpike, server, client } = useMockGateway();

const weather = {
  type: "function" as const,
  name: "get_weather",
  parameters: { type: "object", properties: { city: { type: "string" } } },
};

describe("responses.create", () => {
  test("sends the request and returns the response with output_text computed from its message items", async () => {
    turnpike.reply({ text: "Paris.", usage: { input_tokens: 9, output_tokens: 2 } });
    const { data: response, requestId } = await client()
      .responses.create({
        model: "beta-5",
        instructions: "One word.",
        input: "Capital of France?",
        max_output_tokens: 20,
      })
      .withResponse();
    expect(response.output_text).toBe("Paris.");
    expect(response).toMatchObject({
      object: "response",
      status: "completed",
      model: "beta-5",
      instructions: "One word.",
      max_output_tokens: 20,
    });
    expect(response.usage).toEqual({
      input_tokens: 9,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 2,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 11,
    });
    expect(requestId).toMatch(/^req_mock_/);
    const [sent] = turnpike.bodies("responses");
    expect(sent).toEqual({
      model: "beta-5",
      instructions: "One word.",
      input: "Capital of France?",
      max_output_tokens: 20,
    });
    expect(turnpike.lastRequest()?.headers.authorization).toBe("Bearer sk-test-chat");
  });

  test("output_text joins every output_text part of every message item, in order, and skips other items", async () => {
    const wire = {
      id: "resp_1",
      object: "response",
      created_at: 1,
      status: "completed",
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      model: "beta-5",
      output: [
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "thinking " }] },
        {
          type: "message",
          id: "msg_1",
          status: "completed",
          role: "assistant",
          content: [
            { type: "output_text", text: "one ", annotations: [] },
            { type: "output_text", text: "two", annotations: [] },
          ],
        },
        { type: "function_call", id: "fc_1", call_id: "c", name: "f", arguments: "{}", status: "completed" },
        {
          type: "message",
          id: "msg_2",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: " three", annotations: [] }],
        },
      ],
      parallel_tool_calls: true,
      temperature: null,
      top_p: null,
      tool_choice: "auto",
      tools: [],
      text: { format: { type: "text" } },
      reasoning: { effort: null, summary: null },
      store: true,
      metadata: {},
      usage: null,
    };
    server.use(http.post(`${BASE}/v1/responses`, () => HttpResponse.json(wire)));
    expect((await client().responses.create({ model: "beta-5", input: "Hi" })).output_text).toBe("one two three");
  });

  test("function calls come back as function_call items; their output goes back with the same call_id", async () => {
    turnpike
      .reply({ toolCalls: [{ id: "call_42", name: "get_weather", input: { city: "Paris" } }] })
      .reply({ text: "Sunny." });
    const first = await client().responses.create({ model: "beta-5", tools: [weather], input: "Weather in Paris?" });
    expect(first.output_text).toBe("");
    expect(first.output).toEqual([
      {
        type: "function_call",
        id: expect.stringMatching(/^fc_/),
        call_id: "call_42",
        name: "get_weather",
        arguments: '{"city":"Paris"}',
        status: "completed",
      },
    ]);
    const call = first.output[0];
    if (call?.type !== "function_call") throw new Error("expected a function_call item");
    const second = await client().responses.create({
      model: "beta-5",
      tools: [weather],
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "18 C" }],
    });
    expect(second.output_text).toBe("Sunny.");
    expect(turnpike.bodies("responses")[1]?.input).toEqual([
      { type: "function_call_output", call_id: "call_42", output: "18 C" },
    ]);
  });

  test("an incomplete response says why", async () => {
    turnpike.reply({ text: "It was a dark", stopReason: "max_tokens" });
    const r = await client().responses.create({ model: "beta-5", input: "Story", max_output_tokens: 3 });
    expect(r.status).toBe("incomplete");
    expect(r.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(r.output_text).toBe("It was a dark");
  });
});

describe("errors of responses.create", () => {
  test("a bad key is an AuthenticationError; an unknown model a ModelNotFoundError naming it", async () => {
    const bad = await client({ apiKey: "sk-wrong" })
      .responses.create({ model: "beta-5", input: "x" })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(AuthenticationError);
    expect((bad as AuthenticationError).code).toBe("invalid_api_key");
    const missing = await client()
      .responses.create({ model: "beta-404", input: "x" })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ModelNotFoundError);
    expect((missing as ModelNotFoundError).model).toBe("beta-404");
  });

  test("a body the format forbids is a BadRequestError naming the field", async () => {
    // `system` is the messages format's field; the format's system prompt is `instructions`.
    const body = { model: "beta-5", input: "x", system: "Be brief." } as unknown as Parameters<
      ReturnType<typeof client>["responses"]["create"]
    >[0];
    const err = await client()
      .responses.create(body)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).message).toContain('send the system prompt as "instructions"');
  });

  test("a 429 is retried after its hint, and a lasting one is a RateLimitError", async () => {
    turnpike
      .fail(429, { retryAfter: 0.01 }, { endpoint: "responses" })
      .reply({ text: "ok" }, { endpoint: "responses" });
    expect((await client().responses.create({ model: "beta-5", input: "x" })).output_text).toBe("ok");
    expect(turnpike.requests).toHaveLength(2);
    turnpike.fail(429, { message: "slow down", retryAfter: 0.01 }, { endpoint: "responses", times: 3 });
    const err = await client()
      .responses.create({ model: "beta-5", input: "x" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).retryAfterMs).toBe(10);
    expect((err as RateLimitError).message).toBe("429 slow down");
  });
});

describe("stored responses", () => {
  test("retrieve (with output_text), input items in both orders and page by page, delete, then NotFoundError", async () => {
    turnpike.reply({ text: "Hello Ada." }).reply({ text: "Ada." });
    const c = client();
    const first = await c.responses.create({ model: "beta-5", input: "I am Ada." });
    const again = await c.responses.retrieve(first.id);
    expect(again).toEqual(first);
    expect(again.output_text).toBe("Hello Ada.");

    const second = await c.responses.create({ model: "beta-5", previous_response_id: first.id, input: "Name?" });
    const asc = await c.responses.inputItems.list(second.id, { order: "asc" });
    expect(asc.data.map((i) => ("role" in i ? `${i.role}: ${JSON.stringify(i.content)}` : i.type))).toEqual([
      'user: "I am Ada."',
      'assistant: [{"type":"output_text","text":"Hello Ada."}]',
      'user: "Name?"',
    ]);
    expect(new URL(turnpike.lastRequest()?.url ?? "").searchParams.get("order")).toBe("asc");
    const ids: string[] = [];
    for await (const item of c.responses.inputItems.list(second.id)) ids.push(item.id);
    expect(ids).toEqual(["item_0002", "item_0001", "item_0000"]);

    expect(await c.responses.delete(first.id)).toEqual({ id: first.id, object: "response", deleted: true });
    const gone = await c.responses.retrieve(first.id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(NotFoundError);
    expect(gone).not.toBeInstanceOf(ModelNotFoundError);
    expect((gone as NotFoundError).message).toBe(`404 Response with id '${first.id}' not found.`);
    expect((gone as NotFoundError).param).toBe("response_id");
  });

  test("ids are sent path-escaped", async () => {
    const err = await client()
      .responses.retrieve("resp/../x y")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(turnpike.lastRequest()?.url).toBe(`${BASE}/v1/responses/resp%2F..%2Fx%20y`);
  });
});

describe("responses.inputTokens.count", () => {
  test("posts the request to the count route and returns the count", async () => {
    turnpike.reply({ usage: { input_tokens: 17 } }, { endpoint: "input_tokens" });
    const counted = await client().responses.inputTokens.count({
      model: "beta-5",
      instructions: "Be brief.",
      input: "Hello there",
    });
    expect(counted).toEqual({ object: "response.input_tokens", input_tokens: 17 });
    expect(turnpike.bodies("input_tokens")).toEqual([
      { model: "beta-5", instructions: "Be brief.", input: "Hello there" },
    ]);
  });
});
