/** `client.responses` streaming: raw events, the ResponseStream helper, in-band errors, aborts. */
import { describe, expect, test } from "bun:test";
import { http, HttpResponse } from "msw";
import { BASE, useMockGateway } from "../test/use-mock-gateway.js";
import {
  APIError,
  APIUserAbortError,
  InternalServerError,
  RateLimitError,
  TurnpikeError,
  type ResponseObject,
  type ResponseStreamEvent,
  type ResponsesResponse,
} from "./index.js";

const { turnpike, server, client } = useMockGateway();

const tricky = "naïve café — 日本語 🚀 done";
const params = { model: "beta-5", input: "Hello" };
const call = { id: "call_7", name: "get_weather", input: { city: "Köln", days: 3 } };

/** Ids and times are fresh per request; everything else must match. */
function normalize(r: ResponseObject): unknown {
  return { ...r, id: "#", created_at: 0, completed_at: 0, output: r.output.map((item) => ({ ...item, id: "#" })) };
}

function rawSSE(frames: Array<{ event: string; data: unknown }>): Response {
  const text = frames.map((f) => `event: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`).join("");
  return new HttpResponse(text, { headers: { "content-type": "text/event-stream", "x-request-id": "req_raw" } });
}

describe("responses.create({ stream: true })", () => {
  test("yields every event, typed, numbered from 0, closing with response.completed", async () => {
    turnpike.reply({ text: "one two" });
    const stream = await client().responses.create({ ...params, stream: true });
    const events: ResponseStreamEvent[] = [];
    for await (const e of stream) events.push(e);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[0]?.type).toBe("response.created");
    const deltas = events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : []));
    expect(deltas).toEqual(["one ", "two"]);
    const last = events.at(-1);
    expect(last?.type).toBe("response.completed");
    if (last?.type === "response.completed")
      expect(last.response.output[0]).toMatchObject({ type: "message", content: [{ text: "one two" }] });
  });

  test("an in-band error event is thrown as the class its code stands for, after the events before it", async () => {
    turnpike.reply({ text: "a b c d", streamError: { status: 429, message: "slow down", afterEvents: 5 } });
    const stream = await client().responses.create({ ...params, stream: true });
    const seen: string[] = [];
    const err = await (async () => {
      for await (const e of stream) seen.push(e.type);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).code).toBe("rate_limit_error");
    expect((err as RateLimitError).message).toBe("429 slow down");
    expect(seen).toHaveLength(5);
    expect(seen).not.toContain("error");
  });
});

describe("responses.stream()", () => {
  test("finalResponse equals the JSON reply of the same request, text split across network reads included", async () => {
    const script = {
      thinking: "Let me think.",
      text: tricky,
      toolCalls: [call],
      chunkSize: 5,
      usage: { input_tokens: 11, output_tokens: 22 },
    };
    turnpike.reply(script).reply(script);
    const body = { ...params, instructions: "Be brief.", temperature: 0.3, metadata: { run: "7" } };
    const json = await client().responses.create(body);
    const stream = client().responses.stream(body);
    let text = "";
    for await (const piece of stream.textStream) text += piece;
    const final = await stream.finalResponse();
    expect(text).toBe(tricky);
    expect(final.output_text).toBe(tricky);
    expect(await stream.finalText()).toBe(tricky);
    expect(normalize(final)).toEqual(normalize(json));
    expect(final.output.map((i) => i.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(stream.requestId).toMatch(/^req_mock_/);
  });

  test("listeners by event name get the typed event and the response rebuilt so far", async () => {
    turnpike.reply({ text: "Hi there", toolCalls: [call] });
    const stream = client().responses.stream(params);
    const textSoFar: string[] = [];
    const args: string[] = [];
    const names: string[] = [];
    let finalSeen: ResponseObject | undefined;
    stream.on("response.output_text.delta", (event, snapshot) => {
      const message = snapshot.output[event.output_index];
      if (message?.type === "message") textSoFar.push(message.content[event.content_index]?.text ?? "");
    });
    stream.on("response.function_call_arguments.delta", (event) => args.push(event.delta));
    stream.on("event", (event) => names.push(event.type));
    stream.on("finalResponse", (r) => {
      finalSeen = r;
    });
    const final = await stream.finalResponse();
    expect(textSoFar).toEqual(["Hi ", "Hi there"]);
    const fc = final.output.find((i) => i.type === "function_call");
    expect(args.join("")).toBe(fc?.type === "function_call" ? fc.arguments : "missing");
    expect(JSON.parse(args.join(""))).toEqual({ city: "Köln", days: 3 });
    expect(names[0]).toBe("response.created");
    expect(names.at(-1)).toBe("response.completed");
    expect(finalSeen).toBe(final);
    expect(stream.currentResponse?.status).toBe("completed");
  });

  test("an in-band error rejects finalResponse with the typed error and emits `error`", async () => {
    turnpike.reply({ text: "a b c", streamError: { status: 529, message: "Overloaded", afterEvents: 4 } });
    const stream = client().responses.stream(params);
    const errors: Error[] = [];
    stream.on("error", (e) => errors.push(e));
    const err = await stream.finalResponse().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect((err as InternalServerError).status).toBe(529);
    expect((err as InternalServerError).code).toBe("overloaded_error");
    expect((err as InternalServerError).message).toBe("529 Overloaded");
    expect(errors).toEqual([err as Error]);
  });

  test("a response.failed without an error event still rejects, with the response's error", async () => {
    const failed: Partial<ResponsesResponse> = {
      id: "resp_f",
      status: "failed",
      error: { code: "server_error", message: "upstream went away" },
      output: [],
    };
    server.use(
      http.post(`${BASE}/v1/responses`, () =>
        rawSSE([{ event: "response.failed", data: { type: "response.failed", response: failed, sequence_number: 0 } }]),
      ),
    );
    const err = await client()
      .responses.stream(params)
      .finalResponse()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect((err as InternalServerError).status).toBe(500);
    expect((err as InternalServerError).message).toBe("500 upstream went away");
    expect((err as InternalServerError).requestId).toBe("req_raw");
  });

  test("an error code no table knows is still an APIError carrying the message", async () => {
    server.use(
      http.post(`${BASE}/v1/responses`, () =>
        rawSSE([
          {
            event: "error",
            data: { type: "error", code: "weird_code", message: "strange", param: null, sequence_number: 0 },
          },
        ]),
      ),
    );
    const err = await client()
      .responses.stream(params)
      .finalResponse()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBeUndefined();
    expect((err as APIError).code).toBe("weird_code");
    expect((err as APIError).message).toBe("strange");
  });

  test("an error event nesting its fields in `error`, as the other formats do, is read too", async () => {
    server.use(
      http.post(`${BASE}/v1/responses`, () =>
        rawSSE([
          { event: "error", data: { type: "error", error: { type: "rate_limit_exceeded", message: "too fast" } } },
        ]),
      ),
    );
    const err = await client()
      .responses.stream(params)
      .finalResponse()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).message).toBe("429 too fast");
  });

  test("a stream that ends before its closing event rejects; so does one whose events disagree with its final response", async () => {
    const created = {
      type: "response.created",
      response: { id: "r", status: "in_progress", output: [] },
      sequence_number: 0,
    };
    server.use(http.post(`${BASE}/v1/responses`, () => rawSSE([{ event: "response.created", data: created }])));
    await expect(client().responses.stream(params).finalResponse()).rejects.toThrow(
      "The stream ended before its response.completed",
    );

    const item = {
      type: "function_call",
      id: "fc_1",
      call_id: "c",
      name: "f",
      arguments: '{"a":1}',
      status: "completed",
    };
    const frames = [
      { event: "response.created", data: created },
      {
        event: "response.output_item.added",
        data: { type: "response.output_item.added", output_index: 0, item, sequence_number: 1 },
      },
      {
        event: "response.output_item.done",
        data: { type: "response.output_item.done", output_index: 0, item, sequence_number: 2 },
      },
      {
        event: "response.completed",
        data: {
          type: "response.completed",
          response: { id: "r", status: "completed", output: [{ ...item, arguments: '{"a":2}' }] },
          sequence_number: 3,
        },
      },
    ];
    server.use(http.post(`${BASE}/v1/responses`, () => rawSSE(frames)));
    const err = await client()
      .responses.stream(params)
      .finalResponse()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TurnpikeError);
    expect((err as Error).message).toBe(
      "The stream's events built output item 0 differently from the item its closing event carries.",
    );
  });

  test("abort() stops the stream: finalResponse rejects with APIUserAbortError", async () => {
    turnpike.reply({ text: "a b c d e f g h", chunkDelayMs: 5 });
    const stream = client().responses.stream(params);
    stream.once("response.output_text.delta", () => stream.abort());
    await expect(stream.finalResponse()).rejects.toBeInstanceOf(APIUserAbortError);
  });

  test("the caller's signal aborts it too", async () => {
    turnpike.reply({ text: "a b c d e f g h", chunkDelayMs: 5 });
    const controller = new AbortController();
    const stream = client().responses.stream(params, { signal: controller.signal });
    stream.once("response.created", () => controller.abort());
    await expect(stream.finalResponse()).rejects.toBeInstanceOf(APIUserAbortError);
  });
});

describe("responses.inputItems.list paging", () => {
  test("iterating follows has_more and last_id with `after`", async () => {
    const pages: Record<string, Record<string, unknown>> = {
      first: {
        object: "list",
        data: [{ id: "item_b", type: "message", role: "user", content: "b" }],
        first_id: "item_b",
        last_id: "item_b",
        has_more: true,
      },
      item_b: {
        object: "list",
        data: [{ id: "item_a", type: "message", role: "user", content: "a" }],
        first_id: "item_a",
        last_id: "item_a",
        has_more: false,
      },
    };
    const afters: Array<string | null> = [];
    server.use(
      http.get(`${BASE}/v1/responses/:id/input_items`, ({ request }) => {
        const after = new URL(request.url).searchParams.get("after");
        afters.push(after);
        return HttpResponse.json(pages[after ?? "first"] ?? {});
      }),
    );
    const ids: string[] = [];
    for await (const item of client().responses.inputItems.list("resp_1", { limit: 1 })) ids.push(item.id);
    expect(ids).toEqual(["item_b", "item_a"]);
    expect(afters).toEqual([null, "item_b"]);
  });
});
