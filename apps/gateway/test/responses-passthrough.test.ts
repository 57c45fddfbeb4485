/**
 * A Responses client to a vendor that speaks the Responses API: the request and the reply pass
 * through (docs/protocols.md §5.4). What only the Responses format has — built-in and namespace
 * tools, `include`, reasoning summaries, encrypted reasoning — reaches the vendor and comes back
 * untouched; usage is metered from the vendor's own numbers; Turnpike's own store keeps
 * passed-through replies, and a `previous_response_id` of its own is sent as the whole conversation.
 */
import { countPromptTokens } from "@turnpike/simulator";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { ADMIN_KEY, readSSE, startHarness, type Harness } from "./harness";
import { EPSILON, RESPONSES_VENDOR_ENV } from "./conformance/upstreams";
import { SpecWatch } from "./support/open-responses";

let h: Harness;
// Every reply and stream snapshot, the vendor's as relayed and Turnpike's own, is held to the Open Responses schema.
const spec = new SpecWatch();
beforeAll(async () => {
  h = await startHarness(RESPONSES_VENDOR_ENV);
});
afterEach(async () => {
  await spec.settle();
  expect(spec.problems).toEqual([]);
});
afterAll(async () => {
  await h.close();
  expect(spec.checked).toBeGreaterThan(0);
});

const call = async (path: string, init: Parameters<Harness["call"]>[1]) => spec.watch(await h.call(path, init));
const post = (body: Record<string, unknown>) =>
  call("/v1/responses", { method: "POST", body: JSON.stringify({ model: EPSILON.model, ...body }) });
const lastSent = () => h.gw.simulator!.requests.at(-1)!;
const sentBody = () => lastSent().body as Record<string, any>; // what reached the simulator, read field by field

async function ledgerRow(requestId: string): Promise<Record<string, unknown> | undefined> {
  const res = await fetch(`${h.url}/admin/usage?key_id=${h.keyId}&limit=10000`, {
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  return ((await res.json()) as { data: Record<string, unknown>[] }).data.find((r) => r.request_id === requestId);
}

/** What a coding agent sends: every Responses-only field a translation would have to drop or warn about. */
const AGENT = {
  store: false,
  include: ["reasoning.encrypted_content"],
  reasoning: { effort: "low", summary: "auto" },
  prompt_cache_key: "session-1",
  metadata: { run: "7" },
  tools: [
    {
      type: "namespace",
      name: "shell",
      description: "Shell tools",
      tools: [
        {
          type: "function",
          name: "exec",
          parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
        },
      ],
    },
    { type: "web_search" },
  ],
};

describe("a Responses client to a Responses vendor: passthrough", () => {
  test("JSON: the body goes as sent (model renamed only), no warnings; reasoning with its encrypted content comes back; metered from the vendor's usage", async () => {
    const body = {
      ...AGENT,
      instructions: "Be exact.",
      input: [
        { role: "developer", content: [{ type: "input_text", text: "Rules." }] },
        { role: "user", content: [{ type: "input_text", text: 'Go [sim think text="Done."]' }] },
      ],
    };
    const res = await post(body);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-turnpike-warning")).toBeNull();
    expect(lastSent().path).toBe("/v1/responses");
    expect(lastSent().headers.authorization).toBe("Bearer simulator-epsilon");
    expect(sentBody()).toEqual({ model: EPSILON.model, ...body });
    const r = (await res.json()) as Record<string, any>;
    expect(r.model).toBe(EPSILON.model);
    expect(r.output.map((i: any) => i.type)).toEqual(["reasoning", "message"]);
    expect(r.output[0].summary[0].text).toStartWith(`Thinking about the request to ${EPSILON.model}`);
    expect(r.output[0].encrypted_content).toBe(btoa(`sim-signature:${r.usage.output_tokens_details.reasoning_tokens}`));
    expect(r.output[1].content[0].text).toBe("Done.");
    expect(r.usage.input_tokens).toBe(countPromptTokens("responses", sentBody()));
    const row = await ledgerRow(res.headers.get("x-request-id")!);
    expect(row).toMatchObject({
      endpoint: "responses",
      model: EPSILON.model,
      status: 200,
      input_tokens: r.usage.input_tokens,
      output_tokens: r.usage.output_tokens,
    });
  });

  test("stream: the vendor's events pass through with their sequence numbers; the reply is metered from its last event", async () => {
    const res = await post({ ...AGENT, stream: true, input: 'Go [sim think text="Streamed answer." chunks=4]' });
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    const frames = await readSSE(res);
    const events = frames.map((f) => JSON.parse(f.data) as Record<string, any>);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(frames.map((f) => f.event)).toEqual(events.map((e) => e.type));
    expect(events.filter((e) => e.type === "response.reasoning_summary_text.delta").length).toBeGreaterThan(0);
    const done = events.at(-1)!;
    expect(done.type).toBe("response.completed");
    expect(done.response.output[0].encrypted_content).toStartWith(btoa("sim-signature:").slice(0, 12));
    const text = events
      .filter((e) => e.type === "response.output_text.delta")
      .map((e) => e.delta)
      .join("");
    expect(text).toBe("Streamed answer.");
    const row = await ledgerRow(res.headers.get("x-request-id")!);
    expect(row).toMatchObject({
      endpoint: "responses",
      status: 200,
      input_tokens: done.response.usage.input_tokens,
      output_tokens: done.response.usage.output_tokens,
    });
  });

  test("a vendor that answers with its own snapshot name: every frame and the JSON reply name the catalog id", async () => {
    // A catalog row whose upstream model is a dated snapshot: the simulator answers with that name.
    const config = `${tmpdir()}/turnpike-responses-snapshot-${process.pid}.json`;
    const file = await Bun.file(RESPONSES_VENDOR_ENV.TURNPIKE_CONFIG).json();
    file.models[0].upstream_model = "epsilon-5-2026-01-15";
    await Bun.write(config, JSON.stringify(file));
    const g = await startHarness({ TURNPIKE_CONFIG: config });
    try {
      const ask = (stream: boolean) =>
        g.call("/v1/responses", {
          method: "POST",
          body: JSON.stringify({ model: EPSILON.model, input: 'Hi [sim text="Hello."]', stream }),
        });
      const json = await ask(false);
      expect(((await json.json()) as Record<string, any>).model).toBe(EPSILON.model);
      expect(json.headers.get("x-turnpike-upstream-model")).toBe("epsilon-5-2026-01-15");
      const text = await (await ask(true)).text();
      expect(text).not.toContain("epsilon-5-2026-01-15");
      expect(text.match(/"model":"epsilon-5"/g)?.length).toBe(3); // created, in_progress, completed
    } finally {
      await g.close();
    }
  });

  test("an upstream error before any output: the vendor's status in the Responses envelope, billed nothing", async () => {
    const res = await post({ input: "Hi [sim error=429 retry_after=3]" });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("3");
    const body = (await res.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ type: "rate_limit_exceeded", code: "rate_limit_exceeded" });
    expect(await ledgerRow(res.headers.get("x-request-id")!)).toMatchObject({
      endpoint: "responses",
      status: 429,
      cost_usd: 0,
    });
  });

  test("a stream the vendor breaks off mid-way: its own error and response.failed reach the client; billed for what was generated", async () => {
    const res = await post({ stream: true, input: "Go [sim chunks=6 midstream_error]" });
    const events = (await readSSE(res)).map((f) => JSON.parse(f.data) as Record<string, any>);
    expect(events.slice(-2).map((e) => e.type)).toEqual(["error", "response.failed"]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const row = await ledgerRow(res.headers.get("x-request-id")!);
    expect(row).toMatchObject({ endpoint: "responses", status: 502 });
    expect(row!.output_tokens).toBeGreaterThan(0);
  });

  test("a stream cut before the vendor reported usage is still recorded, counted by Turnpike, even with tools only the vendor reads", async () => {
    const tools = [{ type: "custom", name: "apply_patch", description: "Apply a patch" }, { type: "web_search" }];
    const res = await post({ stream: true, tools, input: "Go [sim chunks=6 midstream_error=close]" });
    const frames = await readSSE(res);
    expect(frames.slice(-2).map((f) => f.event)).toEqual(["error", "response.failed"]);
    const row = await ledgerRow(res.headers.get("x-request-id")!);
    expect(row).toMatchObject({ endpoint: "responses", status: 502, estimated: true });
    expect(row!.input_tokens).toBeGreaterThan(0);
    expect(row!.output_tokens).toBeGreaterThan(0);
  });

  test("a stream that stops without its last event: Turnpike ends it with an in-band error", async () => {
    const res = await post({ stream: true, input: "Go [sim chunks=6 midstream_error=close]" });
    const frames = await readSSE(res);
    // The error, then the response it ends as failed (the reason is where agents read it).
    expect(frames.slice(-2).map((f) => f.event)).toEqual(["error", "response.failed"]);
    expect(JSON.parse(frames.at(-2)!.data).message).toContain("without finishing");
    const failed = JSON.parse(frames.at(-1)!.data).response;
    expect(failed).toMatchObject({ object: "response", status: "failed", model: "epsilon-5", output: [] });
    expect(failed.id).toStartWith("resp_");
    expect(failed.error.message).toContain("without finishing");
    expect(frames.some((f) => f.event === "response.completed")).toBe(false);
  });
});

describe("a Responses vendor's own item types in the input", () => {
  const input = [
    { role: "user", content: "Search the news" },
    { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "news" } },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "Here they are." }] },
    { role: "user", content: 'Thanks [sim text="Welcome."]' },
  ];

  test("pass through to a Responses vendor as they are", async () => {
    const res = await post({ input });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-turnpike-warning")).toBeNull();
    expect(sentBody().input).toEqual(input);
  });

  test("are left out toward another upstream, with a warning naming the item; the rest is still checked", async () => {
    const res = await call("/v1/responses", { method: "POST", body: JSON.stringify({ model: "beta-5", input }) });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-turnpike-warning")).toBe(
      `input[1]: "web_search_call" items are a Responses vendor's own; not replayed to this upstream`,
    );
    expect(sentBody().messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user"]);
    const bad = await post({
      input: [
        { type: "web_search_call", id: "ws_1" },
        { role: "wizard", content: "x" },
      ],
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain("input[1]");
  });
});

describe("a catalog row that speaks Responses on a built-in vendor", () => {
  test("`protocol: responses` on a beta row: its calls go to {base}/responses, a Responses client's pass through", async () => {
    const config = `${tmpdir()}/turnpike-responses-row-${process.pid}.json`;
    await Bun.write(
      config,
      JSON.stringify({
        models: [
          {
            id: "beta-5-r",
            owned_by: "beta",
            protocol: "responses",
            upstream_model: "beta-5",
            input_per_mtok: 1,
            output_per_mtok: 2,
            context_window: 400000,
          },
        ],
      }),
    );
    const g = await startHarness({ TURNPIKE_CONFIG: config });
    try {
      const body = { model: "beta-5-r", include: ["reasoning.encrypted_content"], input: '[sim think text="Yes."]' };
      const res = await g.call("/v1/responses", { method: "POST", body: JSON.stringify(body) });
      const r = (await res.json()) as Record<string, any>;
      const sent = g.gw.simulator!.requests.at(-1)!;
      expect(sent.path).toBe("/v1/responses");
      expect(sent.body).toEqual({ ...body, model: "beta-5" });
      expect(r.model).toBe("beta-5-r");
      expect(typeof r.output[0].encrypted_content).toBe("string");
      const chat = await g.call("/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify({ model: "beta-5-r", messages: [{ role: "user", content: '[sim text="Hi."]' }] }),
      });
      expect(((await chat.json()) as Record<string, any>).choices[0].message.content).toBe("Hi.");
      expect(g.gw.simulator!.requests.at(-1)!.path).toBe("/v1/responses");
    } finally {
      await g.close();
    }
  });
});

describe("stored state through a passthrough", () => {
  test("a stored reply continues as the whole conversation: no previous_response_id upstream, reasoning replayed with its encrypted content", async () => {
    const first = await post({
      include: ["reasoning.encrypted_content"],
      reasoning: { summary: "auto" },
      input: 'My name is Ada. [sim think text="Hello Ada."]',
    });
    const r1 = (await first.json()) as Record<string, any>;
    expect(r1.store).toBe(true);
    const encrypted = r1.output[0].encrypted_content;
    expect(typeof encrypted).toBe("string");

    const second = await post({ previous_response_id: r1.id, input: 'Name? [sim text="Ada."]' });
    expect(second.status).toBe(200);
    const sent = sentBody();
    expect(sent.previous_response_id).toBeUndefined();
    expect(sent.input).toEqual([
      { role: "user", content: 'My name is Ada. [sim think text="Hello Ada."]' },
      ...r1.output,
      { role: "user", content: 'Name? [sim text="Ada."]' },
    ]);
    expect(sent.input[1]).toMatchObject({ type: "reasoning", encrypted_content: encrypted });
    const r2 = (await second.json()) as Record<string, any>;
    expect(r2.output[0].content[0].text).toBe("Ada.");

    // Both replies are Turnpike's to retrieve, as the vendor wrote them, under the catalog id.
    const got = await call(`/v1/responses/${r2.id}`, { method: "GET" });
    expect(((await got.json()) as Record<string, any>).output).toEqual(r2.output);
    const items = (await (await call(`/v1/responses/${r2.id}/input_items?order=asc`, { method: "GET" })).json()) as {
      data: Record<string, any>[];
    };
    expect(items.data.map((i) => i.type ?? "message")).toEqual(["message", "reasoning", "message", "message"]);
  });

  test("reasoning without encrypted content is left out of the replay (the vendor could not open it)", async () => {
    const first = (await (
      await post({ reasoning: { summary: "auto" }, input: '[sim think text="Thought through."]' })
    ).json()) as Record<string, any>;
    expect(first.output[0].type).toBe("reasoning");
    expect(first.output[0].encrypted_content).toBeUndefined();
    await post({ previous_response_id: first.id, input: "Next" });
    expect(sentBody().input.map((i: any) => i.type ?? i.role)).toEqual(["user", "message", "user"]);
  });

  test("a streamed passthrough reply is stored from its last event, under the catalog id", async () => {
    const res = await post({ stream: true, input: 'Remember 42. [sim text="Noted."]' });
    const events = (await readSSE(res)).map((f) => JSON.parse(f.data) as Record<string, any>);
    const id = events.at(-1)!.response.id;
    const got = (await (await call(`/v1/responses/${id}`, { method: "GET" })).json()) as Record<string, any>;
    expect(got).toMatchObject({ id, model: EPSILON.model, status: "completed" });
    expect(got.output[0].content[0].text).toBe("Noted.");
  });

  test("store: false: nothing is kept, and the vendor is told the same", async () => {
    const r = (await (await post({ store: false, input: "Hi" })).json()) as Record<string, any>;
    expect(sentBody().store).toBe(false);
    expect((await call(`/v1/responses/${r.id}`, { method: "GET" })).status).toBe(404);
  });
});

describe("messages and chat clients to a Responses vendor", () => {
  test("a messages request goes as a Responses request: instructions, input items, flat function tools, store false, the cap", async () => {
    const res = await call("/v1/messages", {
      method: "POST",
      dialect: "messages",
      body: JSON.stringify({
        model: EPSILON.model,
        max_tokens: 100,
        system: "Be brief.",
        tools: [{ name: "get_time", input_schema: { type: "object", properties: {} } }],
        messages: [{ role: "user", content: 'Hi [sim text="Hello."]' }],
      }),
    });
    expect(res.status).toBe(200);
    expect(sentBody()).toEqual({
      model: EPSILON.model,
      instructions: "Be brief.",
      input: [{ role: "user", content: 'Hi [sim text="Hello."]' }],
      store: false,
      max_output_tokens: 100,
      tools: [{ type: "function", name: "get_time", parameters: { type: "object", properties: {} }, strict: false }],
    });
    expect(((await res.json()) as Record<string, any>).content).toEqual([{ type: "text", text: "Hello." }]);
  });

  test("a chat client's stop and seed: dropped with a warning each (the Responses API has neither)", async () => {
    const res = await call("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({ model: EPSILON.model, stop: ["X"], seed: 7, messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(res.status).toBe(200);
    const warnings = res.headers.get("x-turnpike-warning") ?? "";
    expect(warnings).toContain("stop_sequences: the Responses API has no stop sequences; not sent");
    expect(warnings).toContain("seed: the Responses API has no such parameter; not sent");
    expect(sentBody().stop).toBeUndefined();
    expect(sentBody().seed).toBeUndefined();
  });

  test("a messages stream reads its input count from the vendor's input_tokens endpoint, asked alongside the call", async () => {
    const res = await call("/v1/messages", {
      method: "POST",
      dialect: "messages",
      body: JSON.stringify({
        model: EPSILON.model,
        max_tokens: 50,
        stream: true,
        messages: [{ role: "user", content: "Count me" }],
      }),
    });
    const frames = await readSSE(res);
    const start = JSON.parse(frames.find((f) => f.event === "message_start")!.data) as Record<string, any>;
    const counted = h.gw.simulator!.requests.filter((r) => r.path === "/v1/responses/input_tokens").at(-1)!;
    expect(counted.body).toEqual({ model: EPSILON.model, input: [{ role: "user", content: "Count me" }] });
    expect(start.message.usage.input_tokens).toBe(countPromptTokens("responses", counted.body));
  });
});
