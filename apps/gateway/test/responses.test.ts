/**
 * `POST /v1/responses` through the official `openai` client, for every upstream protocol: JSON
 * replies, streams whose helper rebuilds the same response, function calls and their outputs,
 * instructions, incomplete replies, errors in the format's envelope, in-band stream errors, and
 * the ledger's `responses` records.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { ADMIN_KEY, startHarness, type Harness } from "./harness";
import { WEATHER } from "./conformance/tools";
import { DELTA, EPSILON, RESPONSES_VENDOR_ENV, UPSTREAMS } from "./conformance/upstreams";
import { SpecWatch } from "./support/open-responses";

let h: Harness;
let openai: OpenAI;
// Every reply and stream snapshot the client library reads is held to the Open Responses schema.
const spec = new SpecWatch();
beforeAll(async () => {
  h = await startHarness(RESPONSES_VENDOR_ENV);
  openai = new OpenAI({ apiKey: h.key, baseURL: `${h.url}/v1`, maxRetries: 0, fetch: spec.fetch });
});
afterEach(async () => {
  await spec.settle();
  expect(spec.problems).toEqual([]);
});
afterAll(async () => {
  await h.close();
  expect(spec.checked).toBeGreaterThan(0);
});

const WEATHER_TOOL = {
  type: "function" as const,
  name: WEATHER.name,
  description: WEATHER.description,
  parameters: WEATHER.schema,
  strict: false,
};

async function ledgerRow(requestId: string): Promise<Record<string, unknown> | undefined> {
  const res = await fetch(`${h.url}/admin/usage?key_id=${h.keyId}&limit=10000`, {
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  const rows = ((await res.json()) as { data: Record<string, unknown>[] }).data;
  return rows.find((r) => r.request_id === requestId);
}

/** Ids are fresh per request; everything else of a stream's final response equals the JSON reply. */
function normalize(r: OpenAI.Responses.Response): unknown {
  expect(r.id).toMatch(/^resp_/);
  const output = r.output.map((item) => {
    if (item.type === "message") {
      expect(item.id).toMatch(/^msg_/);
      return { ...item, id: "#" };
    }
    if (item.type === "function_call") return { ...item, id: "#", call_id: "#" };
    return item;
  });
  const {
    id: _id,
    created_at: _created,
    output_text: _text,
    ...rest
  } = r as OpenAI.Responses.Response & { output_text?: string };
  // The helper adds its own parse results (`parsed`, `output_parsed`), which no wire field carries.
  return JSON.parse(
    JSON.stringify({ ...rest, output }, (k, v: unknown) => (k === "parsed" || k === "output_parsed" ? undefined : v)),
  );
}

for (const up of [...UPSTREAMS, DELTA, EPSILON]) {
  describe(`Responses client ← ${up.label} upstream (${up.model})`, () => {
    test("text: a completed response naming the catalog model, with usage, recorded as a responses call", async () => {
      const { data: r, response } = await openai.responses
        .create({ model: up.model, instructions: "Answer briefly.", input: 'Hello [sim text="Hi from the gateway."]' })
        .withResponse();
      expect(r.object).toBe("response");
      expect(r.status).toBe("completed");
      expect(r.model).toBe(up.model);
      expect(r.output_text).toBe("Hi from the gateway.");
      expect(r.instructions).toBe("Answer briefly.");
      expect(r.usage!.input_tokens).toBeGreaterThan(0);
      expect(r.usage!.output_tokens).toBeGreaterThan(0);
      expect(r.usage!.total_tokens).toBe(r.usage!.input_tokens + r.usage!.output_tokens);
      const row = await ledgerRow(response.headers.get("x-request-id")!);
      expect(row).toMatchObject({
        endpoint: "responses",
        model: up.model,
        status: 200,
        input_tokens: r.usage!.input_tokens,
        output_tokens: r.usage!.output_tokens,
      });
      // The instructions reached the upstream as its system prompt.
      expect(JSON.stringify(h.gw.simulator!.requests.at(-1)!.body)).toContain("Answer briefly.");
    });

    test("stream: the helper's final response equals the JSON reply of the same request", async () => {
      const body = { model: up.model, input: '[sim text="Streams and replies agree." chunks=4]' };
      const json = await openai.responses.create(body);
      const stream = openai.responses.stream(body);
      const deltas: string[] = [];
      stream.on("response.output_text.delta", (e) => deltas.push(e.delta));
      const final = await stream.finalResponse();
      expect(deltas.join("")).toBe("Streams and replies agree.");
      expect(normalize(final)).toEqual(normalize(json));
    });

    test("the specification's whole response object: the request's settings repeated, JSON and streamed", async () => {
      const settings = {
        temperature: 0.3,
        top_p: 0.9,
        presence_penalty: 0.5,
        frequency_penalty: -0.25,
        top_logprobs: 3,
        max_tool_calls: 4,
        truncation: "auto",
        user: "user-7",
        safety_identifier: "safety-7",
        prompt_cache_key: "cache-7",
      };
      const body = { model: up.model, input: '[sim text="All of it."]', ...settings };
      const before = Math.floor(Date.now() / 1000);
      // The client's type leaves some of the specification's request fields out; the wire has them.
      const params = body as Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, "stream">;
      const json = await openai.responses.create({ ...params, stream: false });
      const final = await openai.responses.stream(params).finalResponse();
      for (const r of [json, final] as unknown as Record<string, any>[]) {
        expect(r).toMatchObject({
          ...settings,
          status: "completed",
          previous_response_id: null,
          background: false,
          service_tier: "default",
        });
        expect(r.completed_at).toBeGreaterThanOrEqual(before);
        expect(r.completed_at).toBeGreaterThanOrEqual(r.created_at);
        expect(r.output[0].content[0]).toMatchObject({
          type: "output_text",
          text: "All of it.",
          annotations: [],
          logprobs: [],
        });
      }
      // Without settings: the specification's defaults, never null where it asks for a number.
      const bare = (await openai.responses.create({ model: up.model, input: "hi" })) as unknown as Record<string, any>;
      expect(bare).toMatchObject({
        temperature: 1,
        top_p: 1,
        presence_penalty: 0,
        frequency_penalty: 0,
        top_logprobs: 0,
        max_tool_calls: null,
        truncation: "disabled",
        user: null,
        safety_identifier: null,
        prompt_cache_key: null,
        background: false,
      });
    });

    test("a function call, then its output: a function_call item, then text", async () => {
      const first = await openai.responses.create({
        model: up.model,
        tools: [WEATHER_TOOL],
        input: "Weather in Paris? [sim tools=1]",
      });
      const calls = first.output.filter((i) => i.type === "function_call");
      expect(calls).toHaveLength(1);
      const call = calls[0] as OpenAI.Responses.ResponseFunctionToolCall;
      expect(call.name).toBe(WEATHER.name);
      expect(JSON.parse(call.arguments)).toEqual(WEATHER.args);
      expect(call.call_id.length).toBeGreaterThan(0);

      const second = await openai.responses.create({
        model: up.model,
        tools: [WEATHER_TOOL],
        input: [
          { role: "user", content: "Weather in Paris?" },
          { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
          { type: "function_call_output", call_id: call.call_id, output: '18 C and sunny [sim text="It is sunny."]' },
        ],
      });
      expect(second.output_text).toBe("It is sunny.");
      // The result went upstream paired with its call.
      expect(JSON.stringify(h.gw.simulator!.requests.at(-1)!.body)).toContain("18 C and sunny");
    });

    test("streamed function call: arguments arrive as deltas and the final item holds them whole", async () => {
      const stream = openai.responses.stream({
        model: up.model,
        tools: [WEATHER_TOOL],
        input: "Weather? [sim tools=1]",
      });
      let args = "";
      stream.on("response.function_call_arguments.delta", (e) => {
        args += e.delta;
      });
      const final = await stream.finalResponse();
      const call = final.output.find((i) => i.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
      expect(JSON.parse(call.arguments)).toEqual(WEATHER.args);
      expect(args).toBe(call.arguments);
    });

    test("max_output_tokens reached: status incomplete, reason max_output_tokens", async () => {
      const r = await openai.responses.create({
        model: up.model,
        max_output_tokens: 3,
        input: "Tell me a long story [sim chunks=20]",
      });
      expect(r.status).toBe("incomplete");
      expect(r.incomplete_details?.reason).toBe("max_output_tokens");
    });

    test("an upstream 529 before any output: a 503 in this format's envelope, billed nothing", async () => {
      const err = await openai.responses
        .create({ model: up.model, input: "Hi [sim error=529]" })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      const e = err as InstanceType<typeof OpenAI.APIError>;
      expect(e.status).toBe(503);
      expect(e.type).toBe("service_unavailable_error");
      const row = await ledgerRow(e.headers?.get("x-request-id") ?? "");
      expect(row).toMatchObject({ endpoint: "responses", status: 503, cost_usd: 0 });
    });

    test("a mid-stream upstream error ends the stream with error and response.failed; the helper throws", async () => {
      const res = await fetch(`${h.url}/v1/responses`, {
        method: "POST",
        headers: { authorization: `Bearer ${h.key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: up.model, stream: true, input: "Go [sim chunks=6 midstream_error]" }),
      });
      const text = await res.text();
      const events = [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
      expect(events.slice(0, 2)).toEqual(["response.created", "response.in_progress"]);
      expect(events.slice(-2)).toEqual(["error", "response.failed"]);
      expect(events).not.toContain("response.completed");
      const seqs = [...text.matchAll(/"sequence_number":(\d+)/g)].map((m) => Number(m[1]));
      expect(seqs).toEqual(seqs.map((_, i) => i));
      await expect(
        openai.responses.stream({ model: up.model, input: "Go [sim chunks=6 midstream_error]" }).finalResponse(),
      ).rejects.toThrow();
    });
  });
}

describe("what coding agents send", () => {
  const shell = {
    type: "function" as const,
    name: "exec",
    description: "Run a command",
    parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
    strict: false,
  };
  const tools = [
    { type: "namespace", name: "shell", description: "Shell tools", tools: [shell] },
    { type: "web_search" },
  ];

  for (const up of UPSTREAMS) {
    test(`a namespace tool's functions are offered under unambiguous names and mapped back (${up.label}), JSON and stream`, async () => {
      const body = {
        model: up.model,
        store: false,
        include: ["reasoning.encrypted_content"],
        reasoning: { summary: "auto" },
        prompt_cache_key: "k1",
        tools,
        input: "List files [sim tools=1]",
      };
      // The official client's types do not know every tool type an agent sends; the wire does.
      const json = await openai.responses.create(body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming);
      const call = json.output.find((i) => i.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall & {
        namespace?: string;
      };
      expect(call).toMatchObject({
        name: "exec",
        namespace: "shell",
        arguments: JSON.stringify({ cmd: "sample cmd" }),
      });
      const sent = JSON.stringify(h.gw.simulator!.requests.at(-1)!.body);
      expect(sent).toContain("shell__exec");
      const final = await openai.responses
        .stream(body as unknown as OpenAI.Responses.ResponseCreateParamsStreaming)
        .finalResponse();
      expect(final.output.find((i) => i.type === "function_call")).toMatchObject({ name: "exec", namespace: "shell" });

      // The call replayed with its namespace, then its output: the model answers.
      const next = await openai.responses.create({
        model: up.model,
        store: false,
        tools,
        input: [
          { role: "user", content: "List files" },
          { type: "function_call", call_id: call.call_id, name: "exec", namespace: "shell", arguments: call.arguments },
          { type: "function_call_output", call_id: call.call_id, output: 'a.txt b.txt [sim text="Two files."]' },
        ],
      } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming);
      expect(next.output_text).toBe("Two files.");
    });
  }
});

describe("stored responses", () => {
  for (const up of [...UPSTREAMS, EPSILON]) {
    test(`store, retrieve, continue with previous_response_id, list input items, delete (${up.label})`, async () => {
      const first = await openai.responses.create({
        model: up.model,
        instructions: "Be brief.",
        input: 'My name is Ada. [sim text="Hello Ada."]',
      });
      // The client's type leaves `store` out of a response; the wire has it.
      expect((first as unknown as { store: boolean }).store).toBe(true);
      const got = await openai.responses.retrieve(first.id);
      expect(got).toMatchObject({ id: first.id, status: "completed", model: up.model });
      expect(got.output_text).toBe("Hello Ada.");

      // The next turn carries only the new message; the stored conversation goes before it.
      const second = await openai.responses.create({
        model: up.model,
        previous_response_id: first.id,
        input: 'What is my name? [sim text="Ada."]',
      });
      expect(second.output_text).toBe("Ada.");
      // The reply names the response it continues (a Responses vendor's own reply, relayed, does not know it).
      if (up !== EPSILON) expect(second.previous_response_id).toBe(first.id);
      const sent = JSON.stringify(h.gw.simulator!.requests.at(-1)!.body);
      expect(sent).toContain("My name is Ada.");
      expect(sent).toContain("Hello Ada.");
      expect(sent).toContain("What is my name?");

      const items = await openai.responses.inputItems.list(second.id, { order: "asc" });
      const texts = items.data.map((i) => JSON.stringify(i));
      expect(texts).toHaveLength(3);
      expect(texts[0]).toContain("My name is Ada.");
      expect(texts[1]).toContain("Hello Ada.");
      expect(texts[2]).toContain("What is my name?");

      // Pages: one item at a time, following `after`.
      const page = await fetch(
        `${h.url}/v1/responses/${second.id}/input_items?order=asc&limit=1&after=${items.data[0]!.id}`,
        { headers: { authorization: `Bearer ${h.key}` } },
      );
      const p = (await page.json()) as { data: unknown[]; has_more: boolean };
      expect(p.data).toHaveLength(1);
      expect(JSON.stringify(p.data[0])).toContain("Hello Ada.");
      expect(p.has_more).toBe(true);

      await openai.responses.delete(first.id);
      const gone = await openai.responses.retrieve(first.id).catch((e: unknown) => e);
      expect((gone as InstanceType<typeof OpenAI.APIError>).status).toBe(404);
    });
  }

  test("a streamed reply is stored too, and continues like a JSON one", async () => {
    const final = await openai.responses
      .stream({ model: "beta-5", input: 'Remember 42. [sim text="Noted."]' })
      .finalResponse();
    expect((await openai.responses.retrieve(final.id)).output_text).toBe("Noted.");
    const next = await openai.responses.create({
      model: "beta-5",
      previous_response_id: final.id,
      input: 'And? [sim text="42."]',
    });
    expect(next.output_text).toBe("42.");
    expect(JSON.stringify(h.gw.simulator!.requests.at(-1)!.body)).toContain("Remember 42.");
  });

  test("store: false keeps nothing; another key cannot see a stored response; an unknown id is a 404", async () => {
    const unstored = await openai.responses.create({ model: "beta-5", store: false, input: "Hi" });
    expect(
      ((await openai.responses.retrieve(unstored.id).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>)
        .status,
    ).toBe(404);

    const mine = await openai.responses.create({ model: "beta-5", input: "Secret" });
    const created = await fetch(`${h.url}/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "other" }),
    });
    const other = new OpenAI({
      apiKey: ((await created.json()) as { key: string }).key,
      baseURL: `${h.url}/v1`,
      maxRetries: 0,
    });
    expect(
      ((await other.responses.retrieve(mine.id).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>)
        .status,
    ).toBe(404);
    const cont = (await other.responses
      .create({ model: "beta-5", previous_response_id: mine.id, input: "Go on" })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(cont.status).toBe(404);
    expect(cont.message).toContain(`Previous response with id '${mine.id}' not found.`);
    expect(cont.code).toBe("previous_response_not_found");
  });

  test("expired responses are purged", async () => {
    const r = await openai.responses.create({ model: "beta-5", input: "Short-lived" });
    const later = new Date(Date.now() + 31 * 86_400_000).toISOString();
    expect(await h.gw.deps.responses.get(h.keyId, r.id, later)).toBeUndefined();
    expect(await h.gw.deps.responses.purgeExpired(later)).toBeGreaterThan(0);
    expect(await h.gw.deps.responses.get(h.keyId, r.id, new Date().toISOString())).toBeUndefined();
  });

  test("POST /v1/responses/input_tokens counts a prompt like count_tokens does", async () => {
    const local = await openai.responses.inputTokens.count({ model: "beta-5", input: "Hello there" });
    expect(local).toMatchObject({ object: "response.input_tokens" });
    expect(local.input_tokens).toBeGreaterThan(2);
    const upstream = await h.call("/v1/responses/input_tokens", {
      method: "POST",
      body: JSON.stringify({ model: "gamma-3-flash", input: "Hello there" }),
    });
    expect(upstream.headers.get("x-turnpike-count")).toBe("upstream");
    expect(((await upstream.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
  });
});

describe("Responses requests Turnpike cannot carry", () => {
  test("a bad body is a 400 naming the field, in this format's envelope", async () => {
    const res = await h.call("/v1/responses", { method: "POST", body: JSON.stringify({ model: "beta-5", input: 42 }) });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { type: string; param: string; message: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.param).toBe("input");
    expect(body.error.message).toContain("input:");
  });

  test("a built-in tool the upstream cannot run is dropped with a warning; the call succeeds", async () => {
    const { data: r, response } = await openai.responses
      .create({ model: "alpha-haiku-4-5", tools: [{ type: "web_search" }, WEATHER_TOOL], input: 'Hi [sim text="ok"]' })
      .withResponse();
    expect(r.output_text).toBe("ok");
    expect(response.headers.get("x-turnpike-warning")).toContain(
      'the built-in tool "web_search" cannot run on this upstream',
    );
  });

  test("an unknown model is a 404 model_not_found", async () => {
    const err = await openai.responses.create({ model: "no-such-model", input: "Hi" }).catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(404);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe("model_not_found");
  });
});
