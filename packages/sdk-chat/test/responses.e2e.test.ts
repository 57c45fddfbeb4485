/**
 * End to end: `client.responses` against the real gateway (spawned, simulator upstreams of every
 * protocol): JSON and stream agree, function calls and their outputs, stored responses (retrieve,
 * continue, input items, delete), the input-token count, an in-band error, and the typed errors
 * of the common mistakes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTurnpikeMock } from "@turnpike/mocks";
import { SSEDecoderStream, type SSEMessage } from "@turnpike/schema/sse";
import { getResponse } from "msw";
import ChatClient, {
  AuthenticationError,
  InternalServerError,
  ModelNotFoundError,
  NotFoundError,
  RateLimitError,
  type ResponseObject,
  type ResponsesFunctionTool,
} from "../src/index.js";
import { spawnGateway, type Gateway } from "@turnpike/gateway/spawn";

let gateway: Gateway;
let key: string;
beforeAll(async () => {
  gateway = await spawnGateway();
  key = await gateway.createKey({ name: "chat-responses-e2e" });
}, 40_000);
afterAll(async () => {
  await gateway?.stop();
});

const client = (apiKey = key) => new ChatClient({ apiKey, baseURL: gateway.url, maxRetries: 0 });
const weather: ResponsesFunctionTool = {
  type: "function",
  name: "get_weather",
  description: "Weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

/** Ids (and a call's id, which each upstream reply makes anew) and times are fresh per request. */
function normalize(r: ResponseObject): Record<string, unknown> {
  expect(r.id).toMatch(/^resp_/);
  const output = r.output.map((item) =>
    item.type === "function_call" ? { ...item, id: "#", call_id: "#" } : { ...item, id: "#" },
  );
  return { ...r, id: "#", created_at: 0, completed_at: 0, output };
}

// One model per upstream protocol: messages (alpha), chat (beta), generateContent (gamma).
for (const model of ["alpha-haiku-4-5", "beta-5", "gamma-3-flash"]) {
  describe(`responses on ${model}`, () => {
    test("create returns the text as output_text; stream's finalResponse equals that JSON reply", async () => {
      const params = {
        model,
        instructions: "Be brief.",
        input: '[sim text="Streams and replies agree on Grüße 🚀." chunks=5]',
      };
      const json = await client().responses.create(params);
      expect(json).toMatchObject({
        object: "response",
        status: "completed",
        model,
        instructions: "Be brief.",
        store: true,
      });
      expect(json.output_text).toBe("Streams and replies agree on Grüße 🚀.");
      expect(json.usage?.total_tokens).toBe((json.usage?.input_tokens ?? 0) + (json.usage?.output_tokens ?? 0));

      const stream = client().responses.stream(params);
      let text = "";
      for await (const piece of stream.textStream) text += piece;
      const final = await stream.finalResponse();
      expect(text).toBe("Streams and replies agree on Grüße 🚀.");
      expect(normalize(final)).toEqual(normalize(json));
      expect(stream.requestId).toMatch(/^req_/);
    });

    test("a function call, JSON and streamed, then its output answered", async () => {
      const params = { model, tools: [weather], input: "Weather in Paris? [sim tools=1]" };
      const json = await client().responses.create(params);
      const call = json.output.find((i) => i.type === "function_call");
      if (call?.type !== "function_call") throw new Error(`no function_call item in ${JSON.stringify(json.output)}`);
      expect(call.name).toBe("get_weather");
      expect(JSON.parse(call.arguments)).toEqual({ city: "sample city" });

      const stream = client().responses.stream(params);
      const deltas: string[] = [];
      stream.on("response.function_call_arguments.delta", (e) => deltas.push(e.delta));
      const final = await stream.finalResponse();
      expect(normalize(final)).toEqual(normalize(json));
      const streamedCall = final.output.find((i) => i.type === "function_call");
      expect(deltas.join("")).toBe(streamedCall?.type === "function_call" ? streamedCall.arguments : "none");

      const answer = await client().responses.create({
        model,
        tools: [weather],
        input: [
          { role: "user", content: "Weather in Paris?" },
          { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
          { type: "function_call_output", call_id: call.call_id, output: '18 C and sunny [sim text="It is sunny."]' },
        ],
      });
      expect(answer.output_text).toBe("It is sunny.");
    });
  });
}

test("reasoning: the summary streams as its own events and the final reasoning item equals the JSON one", async () => {
  const params = {
    model: "alpha-sonnet-4-6",
    reasoning: { effort: "low" as const, summary: "auto" },
    input: 'Why? [sim think text="Because." chunks=4]',
  };
  const json = await client().responses.create(params);
  expect(json.output.map((i) => i.type)).toEqual(["reasoning", "message"]);
  const reasoning = json.output[0];
  if (reasoning?.type !== "reasoning") throw new Error("expected a reasoning item first");
  expect(reasoning.summary[0]?.text).toContain("Thinking about the request to alpha-sonnet-4-6");
  const stream = client().responses.stream(params);
  let summary = "";
  stream.on("response.reasoning_summary_text.delta", (e) => {
    summary += e.delta;
  });
  const final = await stream.finalResponse();
  expect(summary).toBe(reasoning.summary[0]?.text ?? "none");
  expect(normalize(final)).toEqual(normalize(json));
  expect(final.output_text).toBe("Because.");
});

describe("stored responses", () => {
  test("retrieve, continue with previous_response_id, list input items, delete", async () => {
    const c = client();
    const first = await c.responses.create({ model: "beta-5", input: 'My name is Ada. [sim text="Hello Ada."]' });
    const got = await c.responses.retrieve(first.id);
    expect(got).toEqual(first);
    expect(got.output_text).toBe("Hello Ada.");

    const second = await c.responses.create({
      model: "beta-5",
      previous_response_id: first.id,
      input: 'What is my name? [sim text="Ada."]',
    });
    expect(second.output_text).toBe("Ada.");
    const { data } = await c.responses.inputItems.list(second.id, { order: "asc" });
    expect(data.map((i) => ("content" in i ? JSON.stringify(i.content) : i.type))).toEqual([
      JSON.stringify('My name is Ada. [sim text="Hello Ada."]'),
      JSON.stringify([{ type: "output_text", text: "Hello Ada." }]),
      JSON.stringify('What is my name? [sim text="Ada."]'),
    ]);
    const newestFirst: string[] = [];
    for await (const item of c.responses.inputItems.list(second.id)) newestFirst.push(item.id);
    expect(newestFirst).toEqual(data.map((i) => i.id).reverse());

    expect(await c.responses.delete(first.id)).toEqual({ id: first.id, object: "response", deleted: true });
    const gone = await c.responses.retrieve(first.id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(NotFoundError);
    expect((gone as NotFoundError).status).toBe(404);
  });

  test("a streamed response is stored too; store: false keeps nothing; another key sees nothing", async () => {
    const final = await client()
      .responses.stream({ model: "alpha-haiku-4-5", input: 'Remember 42. [sim text="Noted."]' })
      .finalResponse();
    expect((await client().responses.retrieve(final.id)).output_text).toBe("Noted.");
    const other = await gateway.createKey({ name: "chat-responses-e2e-other" });
    expect(
      await client(other)
        .responses.retrieve(final.id)
        .catch((e: unknown) => e),
    ).toBeInstanceOf(NotFoundError);
    const unstored = await client().responses.create({ model: "beta-5", store: false, input: "Hi" });
    expect(unstored.store).toBe(false);
    expect(
      await client()
        .responses.retrieve(unstored.id)
        .catch((e: unknown) => e),
    ).toBeInstanceOf(NotFoundError);
  });
});

test("inputTokens.count counts more for a longer prompt", async () => {
  const short = await client().responses.inputTokens.count({ model: "beta-5", input: "Hello there" });
  const long = await client().responses.inputTokens.count({
    model: "beta-5",
    instructions: "Answer in French, briefly and politely.",
    input: "Hello there, how is the weather in Paris today?",
  });
  expect(short.object).toBe("response.input_tokens");
  expect(short.input_tokens).toBeGreaterThan(0);
  expect(long.input_tokens).toBeGreaterThan(short.input_tokens);
});

describe("errors", () => {
  test("an upstream error mid-stream ends the stream with a typed error", async () => {
    const stream = client().responses.stream({ model: "alpha-haiku-4-5", input: "Go [sim chunks=6 midstream_error]" });
    const deltas: string[] = [];
    stream.on("response.output_text.delta", (e) => deltas.push(e.delta));
    const err = await stream.finalResponse().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect((err as InternalServerError).code).toBe("overloaded_error");
    expect(deltas.length).toBeGreaterThan(0);
  });

  test("a bad key, an unknown model, an upstream 429", async () => {
    const bad = await client("sk-not-a-key")
      .responses.create({ model: "beta-5", input: "x" })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(AuthenticationError);
    expect((bad as AuthenticationError).requestId).toMatch(/^req_/);
    const unknown = await client()
      .responses.create({ model: "beta-nope", input: "x", stream: true })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(ModelNotFoundError);
    expect((unknown as ModelNotFoundError).model).toBe("beta-nope");
    const limited = await client()
      .responses.create({ model: "beta-5", input: "Hi [sim error=429 retry_after=3]" })
      .catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(RateLimitError);
    expect((limited as RateLimitError).retryAfterMs).toBe(3000);
  });
});

describe("@turnpike/mocks against the gateway", () => {
  /** The event names of a stream, a run of the same name (deltas, whose count depends on chunking) as one. */
  async function eventRuns(res: Response): Promise<{ names: string[]; closing: ResponseObject }> {
    const messages: SSEMessage[] = [];
    const reader = (res.body as ReadableStream<Uint8Array>).pipeThrough(new SSEDecoderStream()).getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) messages.push(r.value);
    const names = messages.map((m) => m.event ?? "").filter((name, i, all) => name !== all[i - 1]);
    const last = JSON.parse(messages.at(-1)?.data ?? "{}") as { response: ResponseObject };
    return { names, closing: { ...last.response, output_text: "" } };
  }

  test("the mock writes the gateway's event sequence and items for the same reply", async () => {
    const body = {
      model: "beta-5",
      stream: true,
      tools: [weather],
      input: 'Weather? [sim text="Hello there" tools=1 chunks=2]',
    };
    const init = (url: string, apiKey: string) =>
      new Request(url, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const real = await eventRuns(await fetch(init(`${gateway.url}/v1/responses`, key)));

    // The mock answered in-process (msw's getResponse), so no request of this file is intercepted.
    const turnpike = createTurnpikeMock({ baseURL: "http://mock.test" });
    turnpike.reply({ text: "Hello there", toolCalls: [{ name: "get_weather", input: { city: "sample city" } }] });
    const mocked = await getResponse(turnpike.handlers, init("http://mock.test/v1/responses", "sk-mock"));
    if (!mocked) throw new Error("the mock did not answer");
    const fake = await eventRuns(mocked);

    expect(fake.names).toEqual(real.names);
    expect(real.names.slice(0, 3)).toEqual(["response.created", "response.in_progress", "response.output_item.added"]);
    // Token counts are estimates of two different counters.
    const strip = (r: ResponseObject) => ({ ...normalize(r), usage: "#" });
    expect(strip(fake.closing)).toEqual(strip(real.closing));
  });
});
