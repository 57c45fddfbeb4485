/**
 * The mock's Responses routes (docs/protocols.md §5): the response object, the event sequence the
 * gateway writes (numbered from 0, items whole in `output_item.done`), in-band errors, stored
 * responses per key, input items, input tokens — and the official client of the format reading
 * all of it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { SSEDecoderStream, type SSEMessage } from "@turnpike/schema/sse";
import { setupServer } from "msw/node";
import { createTurnpikeMock } from "./index.js";

const BASE = "http://gw.test";
const turnpike = createTurnpikeMock({ baseURL: BASE, apiKey: ["sk-r", "sk-other"] });
const server = setupServer(...turnpike.handlers);
beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => turnpike.reset());
afterAll(() => server.close());

let openai: OpenAI;
beforeAll(() => {
  openai = new OpenAI({ apiKey: "sk-r", baseURL: `${BASE}/v1`, maxRetries: 0 });
});

const call = (method: string, path: string, body?: unknown, key = "sk-r") =>
  fetch(`${BASE}${path}`, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

async function events(res: Response): Promise<Array<{ event: string | undefined; data: Record<string, unknown> }>> {
  const out: SSEMessage[] = [];
  const reader = (res.body as ReadableStream<Uint8Array>).pipeThrough(new SSEDecoderStream()).getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) out.push(r.value);
  return out.map((m) => ({ event: m.event, data: JSON.parse(m.data) as Record<string, unknown> }));
}

const weather = { name: "get_weather", input: { city: "Paris" }, id: "call_w" };

describe("POST /v1/responses", () => {
  test("JSON: the response object echoing the request, items in the gateway's order", async () => {
    turnpike.reply({
      thinking: "Hmm.",
      text: "Let me look.",
      toolCalls: [weather],
      usage: { input_tokens: 7, output_tokens: 5 },
    });
    const res = await call("POST", "/v1/responses", {
      model: "beta-5",
      instructions: "Be brief.",
      input: "Weather?",
      temperature: 0.5,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toMatch(/^req_mock_/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      object: "response",
      status: "completed",
      model: "beta-5",
      instructions: "Be brief.",
      temperature: 0.5,
      store: true,
      error: null,
      incomplete_details: null,
      usage: { input_tokens: 7, output_tokens: 5, total_tokens: 12, input_tokens_details: { cached_tokens: 0 } },
    });
    expect(body.output).toEqual([
      { type: "reasoning", id: expect.stringMatching(/^rs_/), summary: [{ type: "summary_text", text: "Hmm." }] },
      {
        type: "message",
        id: expect.stringMatching(/^msg_/),
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Let me look.", annotations: [], logprobs: [] }],
      },
      {
        type: "function_call",
        id: expect.stringMatching(/^fc_/),
        call_id: "call_w",
        name: "get_weather",
        arguments: '{"city":"Paris"}',
        status: "completed",
      },
    ]);
  });

  test("stream: the gateway's event order, sequence numbers from 0, the closing event carrying the JSON reply", async () => {
    turnpike.reply({ text: "Hello there", toolCalls: [weather] });
    const seen = await events(await call("POST", "/v1/responses", { model: "beta-5", input: "Hi", stream: true }));
    expect(seen.map((e) => e.event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(seen.map((e) => e.data.type)).toEqual(seen.map((e) => e.event));
    expect(seen.map((e) => e.data.sequence_number)).toEqual(seen.map((_, i) => i));
    expect(seen[0]?.data.response).toMatchObject({ status: "in_progress", output: [], usage: null });
    expect(seen[2]?.data.item).toMatchObject({ type: "message", status: "in_progress", content: [] });
    expect(seen[9]?.data.item).toMatchObject({ type: "function_call", arguments: "", status: "in_progress" });
    const final = seen.at(-1)?.data.response as { output: unknown[]; status: string };
    expect(final.status).toBe("completed");
    expect(final.output).toEqual([seen[8]?.data.item, seen[13]?.data.item]);
  });

  test("an in-band error: `error` then `response.failed` with the output so far; nothing is stored", async () => {
    turnpike.reply({ text: "one two three", streamError: { status: 529, message: "overloaded", afterEvents: 5 } });
    const seen = await events(await call("POST", "/v1/responses", { model: "beta-5", input: "Hi", stream: true }));
    expect(seen.map((e) => e.event).slice(-3)).toEqual(["response.output_text.delta", "error", "response.failed"]);
    expect(seen.at(-2)?.data).toEqual({
      type: "error",
      code: "overloaded_error",
      message: "overloaded",
      param: null,
      sequence_number: 5,
    });
    const failed = seen.at(-1)?.data.response as {
      status: string;
      error: unknown;
      output: Array<{ content: Array<{ text: string }> }>;
    };
    expect(failed.status).toBe("failed");
    expect(failed.error).toEqual({ code: "overloaded_error", message: "overloaded" });
    expect(failed.output[0]?.content[0]?.text).toBe("one ");
    expect(turnpike.storedResponses.size).toBe(0);
  });

  test("max_tokens: status incomplete with the reason, closed by response.incomplete", async () => {
    turnpike.reply({ text: "cut", stopReason: "max_tokens" }, { times: 2 });
    const json = (await (await call("POST", "/v1/responses", { model: "beta-5", input: "Hi" })).json()) as Record<
      string,
      unknown
    >;
    expect(json).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
    const seen = await events(await call("POST", "/v1/responses", { model: "beta-5", input: "Hi", stream: true }));
    expect(seen.at(-1)?.event).toBe("response.incomplete");
  });

  test("a bad body is a 400 in the chat envelope naming the field, even with a messages-format key header", async () => {
    const res = await fetch(`${BASE}/v1/responses`, {
      method: "POST",
      headers: { "x-api-key": "sk-r" },
      body: JSON.stringify({ model: "beta-5", input: 42 }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain("input");
    expect(turnpike.lastRequest()?.endpoint).toBe("responses");
  });
});

describe("stored responses", () => {
  test("retrieve, continue, list input items, delete — only for the key that created it", async () => {
    turnpike.reply({ text: "Hello Ada." }).reply({ text: "Ada." });
    const first = (await (await call("POST", "/v1/responses", { model: "beta-5", input: "I am Ada." })).json()) as {
      id: string;
    };
    expect(turnpike.storedResponses.get(first.id)?.output).toHaveLength(1);
    expect(await (await call("GET", `/v1/responses/${first.id}`)).json()).toMatchObject({
      id: first.id,
      status: "completed",
    });
    expect((await call("GET", `/v1/responses/${first.id}`, undefined, "sk-other")).status).toBe(404);

    const second = (await (
      await call("POST", "/v1/responses", { model: "beta-5", previous_response_id: first.id, input: "Name?" })
    ).json()) as { id: string };
    const list = (await (await call("GET", `/v1/responses/${second.id}/input_items?order=asc`)).json()) as {
      data: Array<Record<string, unknown>>;
      first_id: string;
    };
    expect(list.data).toEqual([
      { id: "item_0000", type: "message", role: "user", content: "I am Ada." },
      { id: "item_0001", type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello Ada." }] },
      { id: "item_0002", type: "message", role: "user", content: "Name?" },
    ]);
    const newestFirst = (await (await call("GET", `/v1/responses/${second.id}/input_items`)).json()) as {
      data: Array<{ id: string }>;
    };
    expect(newestFirst.data.map((i) => i.id)).toEqual(["item_0002", "item_0001", "item_0000"]);

    expect(await (await call("DELETE", `/v1/responses/${first.id}`)).json()).toEqual({
      id: first.id,
      object: "response",
      deleted: true,
    });
    const gone = await call("GET", `/v1/responses/${first.id}`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({
      error: {
        message: `Response with id '${first.id}' not found.`,
        type: "invalid_request_error",
        param: "response_id",
        code: "not_found",
      },
    });
    const orphan = await call("POST", "/v1/responses", {
      model: "beta-5",
      previous_response_id: first.id,
      input: "Again?",
    });
    expect(orphan.status).toBe(404);
    expect(((await orphan.json()) as { error: { message: string } }).error.message).toBe(
      `Previous response with id '${first.id}' not found.`,
    );
  });

  test("store: false keeps nothing", async () => {
    const r = (await (await call("POST", "/v1/responses", { model: "beta-5", input: "Hi", store: false })).json()) as {
      id: string;
      store: boolean;
    };
    expect(r.store).toBe(false);
    expect((await call("GET", `/v1/responses/${r.id}`)).status).toBe(404);
  });

  test("input_tokens counts the request; a scripted usage wins", async () => {
    const counted = (await (
      await call("POST", "/v1/responses/input_tokens", { model: "beta-5", input: "Hello there, how are you?" })
    ).json()) as { object: string; input_tokens: number };
    expect(counted.object).toBe("response.input_tokens");
    expect(counted.input_tokens).toBeGreaterThan(3);
    turnpike.reply({ usage: { input_tokens: 99 } }, { endpoint: "input_tokens" });
    expect(await (await call("POST", "/v1/responses/input_tokens", { model: "beta-5", input: "x" })).json()).toEqual({
      object: "response.input_tokens",
      input_tokens: 99,
    });
    expect(turnpike.bodies("input_tokens").map((b) => b.input)).toEqual(["Hello there, how are you?", "x"]);
  });
});

describe("official client of the format", () => {
  const script = { text: "Grüße 🚀 aus Köln", toolCalls: [weather], chunkSize: 7 };

  test("create, stream with finalResponse (equal apart from ids), retrieve, input items, delete", async () => {
    turnpike.reply(script).reply(script);
    const json = await openai.responses.create({ model: "beta-5", input: "Hi" });
    expect(json.output_text).toBe("Grüße 🚀 aus Köln");
    const stream = openai.responses.stream({ model: "beta-5", input: "Hi" });
    let text = "";
    stream.on("response.output_text.delta", (e) => {
      text += e.delta;
    });
    const final = await stream.finalResponse();
    expect(text).toBe("Grüße 🚀 aus Köln");
    // Ids and times are fresh per request; the helper adds parse results (`parsed`, `parsed_arguments`, `output_parsed`) no wire field carries.
    const strip = (r: OpenAI.Responses.Response): unknown =>
      JSON.parse(
        JSON.stringify(
          // Times are the clock's at each request (two requests may straddle a second).
          { ...r, id: "#", created_at: 0, completed_at: 0, output: r.output.map((i) => ({ ...i, id: "#" })) },
          (k, v: unknown) => (k.startsWith("parsed") || k === "output_parsed" ? undefined : v),
        ),
      );
    expect(strip(final)).toEqual(strip(json));

    expect((await openai.responses.retrieve(json.id)).output_text).toBe("Grüße 🚀 aus Köln");
    const items = await openai.responses.inputItems.list(json.id, { order: "asc" });
    expect(items.data).toHaveLength(1);
    await openai.responses.delete(json.id);
    expect(await openai.responses.retrieve(json.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
  });

  test("an in-band error makes the official helper throw", async () => {
    turnpike.reply({ text: "a b c", streamError: { status: 500, message: "upstream died", afterEvents: 4 } });
    await expect(openai.responses.stream({ model: "beta-5", input: "Hi" }).finalResponse()).rejects.toThrow(
      "upstream died",
    );
  });
});
