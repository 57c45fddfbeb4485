/**
 * The generateContent client format at the wire: its routes and keys, errors in its envelope,
 * model ids with spaces in the path, the JSON-array stream, passthrough to a generateContent
 * upstream (unknown fields and signatures carried), what a translation carries, warns of or
 * refuses, and the ledger's `endpoint: "generate"` for inference and count calls.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_KEY, startHarness, type Harness } from "./harness";
import { Contract } from "./ops/contract";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const HI = { contents: [{ role: "user", parts: [{ text: 'Say it. [sim text="Hello there."]' }] }] };

function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = { "x-goog-api-key": h.key },
): Promise<Response> {
  return fetch(`${h.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

/** What the last upstream call sent to the simulator. */
function sent(): Record<string, any> {
  return h.gw.simulator!.requests.at(-1)!.body as Record<string, any>; // the simulator's parsed JSON: fields read are asserted
}

async function ledgerRow(requestId: string) {
  await h.gw.deps.ledger.flush();
  return (await h.gw.deps.store.queryUsage({ key_id: h.keyId })).find((r) => r.request_id === requestId);
}

describe("routes and keys", () => {
  test("the key in x-goog-api-key, ?key= or a bearer token; both API versions", async () => {
    for (const [path, headers] of [
      ["/v1beta/models/beta-5:generateContent", { "x-goog-api-key": h.key }],
      [`/v1beta/models/beta-5:generateContent?key=${h.key}`, {}],
      ["/v1/models/beta-5:generateContent", { authorization: `Bearer ${h.key}` }],
    ] as const) {
      const res = await post(path, HI, headers);
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      expect(body.candidates[0].content.parts).toEqual([{ text: "Hello there." }]);
      expect(body.modelVersion).toBe("beta-5");
    }
  });

  test("a catalog id with spaces and parentheses, URL-encoded in the path, also as models/{id}", async () => {
    const id = "alpha-sonnet-4-6 (context-1m beta)";
    const res = await post(`/v1beta/models/${encodeURIComponent(id)}:generateContent`, HI);
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).modelVersion).toBe(id);
    const one = await fetch(`${h.url}/v1beta/models/${encodeURIComponent(id)}`, {
      headers: { "x-goog-api-key": h.key },
    });
    expect(((await one.json()) as any).name).toBe(`models/${id}`);
  });

  test("errors in the format's envelope, with its status words", async () => {
    const cases: [Promise<Response>, number, string, string][] = [
      [post("/v1beta/models/beta-5:generateContent", HI, {}), 401, "UNAUTHENTICATED", "Missing API key"],
      [post("/v1beta/models/no-such:generateContent", HI), 404, "NOT_FOUND", "no-such"],
      [
        post("/v1beta/models/beta-5:generateContent", { contents: [{ role: "user", parts: [{}] }] }),
        400,
        "INVALID_ARGUMENT",
        "contents[0].parts[0]",
      ],
      [post("/v1beta/models/beta-5:predict", HI), 404, "NOT_FOUND", ":predict"],
      [post("/v1beta/models/beta-5:generateContent", { contents: [] }), 400, "INVALID_ARGUMENT", "contents"],
    ];
    for (const [call, code, status, mentions] of cases) {
      const res = await call;
      expect(res.status).toBe(code);
      const body = (await res.json()) as any;
      expect(body.error.code).toBe(code);
      expect(body.error.status).toBe(status);
      expect(body.error.message).toContain(mentions);
    }
  });

  test("without alt=sse the stream is one JSON array, written as it comes", async () => {
    const res = await post("/v1beta/models/alpha-haiku-4-5:streamGenerateContent", HI);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("application/json");
    const chunks = JSON.parse(await res.text()) as any[];
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((c) => c.candidates[0].content.parts.map((p: any) => p.text).join("")).join("")).toBe(
      "Hello there.",
    );
    expect(chunks.at(-1).candidates[0].finishReason).toBe("STOP");
    expect(chunks.at(-1).usageMetadata.candidatesTokenCount).toBeGreaterThan(0);
  });
});

describe("passthrough to a generateContent upstream", () => {
  test("unknown fields, safety settings, cached content and thought signatures go as the client sent them", async () => {
    const body = {
      contents: [
        { role: "user", parts: [{ text: "Weather?" }] },
        {
          role: "model",
          parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "c2lnbmVk" }],
        },
        { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { output: "sunny" } } }] },
      ],
      tools: [
        {
          functionDeclarations: [
            { name: "get_weather", parametersJsonSchema: { type: "object", properties: { city: { type: "string" } } } },
          ],
        },
      ],
      safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
      cachedContent: "cachedContents/abc",
      labels: { team: "search" },
    };
    const res = await post("/v1beta/models/gamma-3-flash:generateContent", body);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-turnpike-warning")).toBeNull();
    const up = sent();
    expect(up.model).toBeUndefined();
    expect(up.contents).toEqual(body.contents);
    expect([up.safetySettings, up.cachedContent, up.labels]).toEqual([
      body.safetySettings,
      body.cachedContent,
      body.labels,
    ]);
    expect(((await res.json()) as any).modelVersion).toBe("gamma-3-flash");
  });

  test("a thinking token Turnpike wrote for a messages upstream goes as the skip value (a model switched mid-conversation)", async () => {
    const first = await post("/v1beta/models/alpha-haiku-4-5:generateContent", {
      contents: [{ role: "user", parts: [{ text: "Weather? [sim think tools=1]" }] }],
      tools: [
        {
          functionDeclarations: [
            {
              name: "get_weather",
              parametersJsonSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
            },
          ],
        },
      ],
      generationConfig: { maxOutputTokens: 4000, thinkingConfig: { thinkingBudget: 1024 } },
    });
    const call = ((await first.json()) as any).candidates[0].content.parts.find((p: any) => p.functionCall);
    expect(call.thoughtSignature).toStartWith("tp1.");
    const res = await post("/v1beta/models/gamma-3-flash:generateContent", {
      contents: [
        { role: "user", parts: [{ text: "Weather?" }] },
        { role: "model", parts: [call] },
        {
          role: "user",
          parts: [
            { functionResponse: { id: call.functionCall.id, name: "get_weather", response: { output: "sunny" } } },
          ],
        },
      ],
      tools: [{ functionDeclarations: [{ name: "get_weather" }] }],
    });
    expect(res.status).toBe(200);
    expect(sent().contents[1].parts[0]).toEqual({ ...call, thoughtSignature: "skip_thought_signature_validator" });
  });

  test("a stream passes through, its usage metered under endpoint generate", async () => {
    const res = await post("/v1beta/models/gamma-3-pro:streamGenerateContent?alt=sse", HI);
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    const text = await res.text();
    const last = JSON.parse(
      text
        .trim()
        .split(/\r?\n\r?\n/)
        .at(-1)!
        .replace(/^data: /, ""),
    );
    expect(last.modelVersion).toBe("gamma-3-pro");
    const row = await ledgerRow(res.headers.get("x-request-id")!);
    expect(row?.endpoint).toBe("generate");
    expect(row?.stream).toBe(true);
    expect(row?.output_tokens).toBe(last.usageMetadata.candidatesTokenCount);
    expect(row?.input_tokens).toBe(last.usageMetadata.promptTokenCount);
  });
});

describe("translation to other upstreams", () => {
  test("knobs it cannot carry are warnings; a real thought signature is dropped with one", async () => {
    const res = await post("/v1beta/models/alpha-haiku-4-5:generateContent", {
      contents: [
        { role: "user", parts: [{ text: "Hi" }] },
        { role: "model", parts: [{ text: "Hello", thoughtSignature: "c2lnbmVk" }] },
        { role: "user", parts: [{ text: "Again" }] },
      ],
      safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
      generationConfig: { responseModalities: ["TEXT"], maxOutputTokens: 100 },
    });
    expect(res.status).toBe(200);
    const warned = res.headers.get("x-turnpike-warning")!;
    expect(warned).toContain("safetySettings: ");
    expect(warned).toContain("thoughtSignature: ");
    expect(warned).toContain("generationConfig.responseModalities: ");
    expect(sent().max_tokens).toBe(100);
    expect(sent().messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user"]);
  });

  test("cachedContent toward another protocol is a 400 that says why", async () => {
    const res = await post("/v1beta/models/beta-5:generateContent", { ...HI, cachedContent: "cachedContents/abc" });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.status).toBe("INVALID_ARGUMENT");
    expect(body.error.message).toContain("cachedContent");
  });

  test("thinking budget and level, tool modes and structured output reach each upstream in its terms", async () => {
    const tools = [
      {
        functionDeclarations: [
          {
            name: "get_time",
            parameters: { type: "OBJECT", properties: { zone: { type: "STRING", nullable: true } } },
          },
        ],
      },
    ];
    let res = await post("/v1beta/models/alpha-haiku-4-5:generateContent", {
      ...HI,
      tools,
      toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_time"] } },
    });
    expect(res.status).toBe(200);
    expect(sent().tool_choice).toEqual({ type: "tool", name: "get_time" });
    expect(sent().tools[0].input_schema).toEqual({
      type: "object",
      properties: { zone: { type: ["string", "null"] } },
    });

    res = await post("/v1beta/models/alpha-haiku-4-5:generateContent", {
      ...HI,
      generationConfig: { maxOutputTokens: 4096, thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } },
    });
    expect(res.status).toBe(200);
    expect(sent().thinking).toEqual({ type: "enabled", budget_tokens: 2048 });

    res = await post("/v1beta/models/beta-5:generateContent", {
      ...HI,
      generationConfig: { thinkingConfig: { thinkingLevel: "HIGH" } },
    });
    expect(res.status).toBe(200);
    expect(sent().reasoning_effort).toBe("high");

    res = await post("/v1beta/models/beta-5:generateContent", {
      contents: [{ role: "user", parts: [{ text: "A person." }] }],
      generationConfig: {
        responseMimeType: "application/json",
        responseJsonSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      },
    });
    expect(sent().response_format.type).toBe("json_schema");
    const person = JSON.parse(((await res.json()) as any).candidates[0].content.parts[0].text);
    expect(person).toEqual({ name: "sample name" });
  });

  test("function calls keep their ids; a response without one answers the call of its name", async () => {
    const res = await post("/v1beta/models/beta-5:generateContent", {
      contents: [
        { role: "user", parts: [{ text: "Time?" }] },
        {
          role: "model",
          parts: [
            { functionCall: { id: "toolu_a1", name: "get_time", args: {} } },
            { functionCall: { name: "get_date", args: {} } },
          ],
        },
        {
          role: "user",
          parts: [
            { functionResponse: { id: "toolu_a1", name: "get_time", response: { output: "noon" } } },
            { functionResponse: { name: "get_date", response: { date: "today" } } },
          ],
        },
      ],
      tools: [{ functionDeclarations: [{ name: "get_time" }, { name: "get_date" }] }],
    });
    expect(res.status).toBe(200);
    const up = sent();
    const ids = up.messages[1].tool_calls.map((c: any) => c.id);
    expect(ids[0]).toBe("toolu_a1");
    expect(up.messages.slice(2).map((m: any) => [m.tool_call_id, m.content])).toEqual([
      ["toolu_a1", "noon"],
      [ids[1], '{"date":"today"}'],
    ]);
  });
});

describe("countTokens", () => {
  test("the upstream's count for generateContent and messages upstreams, the local one for chat; the wrapped request form too", async () => {
    for (const [model, how] of [
      ["gamma-3-pro", "upstream"],
      ["alpha-opus-4-8", "upstream"],
      ["delta-m3", "local"],
    ] as const) {
      const res = await post(`/v1beta/models/${model}:countTokens`, { contents: HI.contents });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-turnpike-count")).toBe(how);
      expect(((await res.json()) as any).totalTokens).toBeGreaterThan(0);
    }
    const wrapped = await post("/v1/models/gamma-3-pro:countTokens", {
      generateContentRequest: { model: "models/gamma-3-pro", ...HI },
    });
    expect(((await wrapped.json()) as any).totalTokens).toBeGreaterThan(0);
  });
});

describe("the description document", () => {
  test("replies, stream chunks, counts, model lists and errors conform to /openapi.json", async () => {
    const contract = new Contract((await (await fetch(`${h.url}/openapi.json`)).json()) as Record<string, any>);
    const path = "/v1beta/models/{id}";
    const reply = await post("/v1beta/models/alpha-haiku-4-5:generateContent", HI);
    expect(contract.check(path, "post", 200, "application/json", await reply.json())).toEqual([]);
    const stream = await post("/v1beta/models/beta-5:streamGenerateContent?alt=sse", HI);
    const frames = (await stream.text()).trim().split(/\r?\n\r?\n/);
    for (const f of frames)
      expect(contract.check(path, "post", 200, "text/event-stream", JSON.parse(f.replace(/^data: /, "")))).toEqual([]);
    const counted = await post("/v1/models/gamma-3-pro:countTokens", { contents: HI.contents });
    expect(contract.check("/v1/models/{id}", "post", 200, "application/json", await counted.json())).toEqual([]);
    const refused = await post("/v1beta/models/no-such:generateContent", HI);
    expect(contract.check(path, "post", 404, "application/json", await refused.json())).toEqual([]);
    const list = await fetch(`${h.url}/v1beta/models`, { headers: { "x-goog-api-key": h.key } });
    expect(contract.check("/v1beta/models", "get", 200, "application/json", await list.json())).toEqual([]);
  });
});

describe("a generateContent client drops the stream", () => {
  for (const model of ["alpha-haiku-4-5", "beta-5", "gamma-3-flash"]) {
    test(`billed for what was generated so far, from ${model}`, async () => {
      const ac = new AbortController();
      const res = await fetch(`${h.url}/v1beta/models/${model}:streamGenerateContent?alt=sse`, {
        method: "POST",
        headers: { "x-goog-api-key": h.key, "content-type": "application/json" },
        body: JSON.stringify({
          contents: [{ role: "user", parts: [{ text: "tell me everything [sim chunks=60 latency=40]" }] }],
        }),
        signal: ac.signal,
      });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      // Take a few chunks, then leave.
      while ((text.match(/"text":/g) ?? []).length < 4)
        text += decoder.decode((await reader.read()).value, { stream: true });
      ac.abort();
      await reader.cancel().catch(() => {});
      const id = res.headers.get("x-request-id")!;
      let row: Awaited<ReturnType<typeof ledgerRow>>;
      for (let i = 0; i < 100 && !row; i++) {
        row = await ledgerRow(id);
        if (!row) await Bun.sleep(50);
      }
      // A passed-through stream's every chunk says how many tokens were generated so far: the
      // vendor's own count bills it; a translated one is billed by Turnpike's count of its text.
      expect(row).toMatchObject({
        endpoint: "generate",
        aborted: true,
        estimated: model !== "gamma-3-flash",
        stream: true,
        status: 200,
      });
      expect(row!.input_tokens).toBeGreaterThan(5);
      expect(row!.output_tokens).toBeGreaterThanOrEqual(4);
      expect(row!.output_tokens).toBeLessThan(60);
    }, 15_000);
  }
});

describe("limits and budgets", () => {
  test("a key over its rpm gets RESOURCE_EXHAUSTED with a retry hint; a spent budget is a 429 too (the format has no 402)", async () => {
    const made = await fetch(`${h.url}/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "gen-limited", rpm: 1 }),
    });
    const { key } = (await made.json()) as { key: string };
    const first = await post("/v1beta/models/beta-5:generateContent", HI, { "x-goog-api-key": key });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-limit-requests")).toBe("1");
    const second = await post(
      "/v1beta/models/beta-5:countTokens",
      { contents: HI.contents },
      { "x-goog-api-key": key },
    );
    expect(second.status).toBe(429);
    expect(((await second.json()) as any).error.status).toBe("RESOURCE_EXHAUSTED");
    expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(0);

    const broke = await fetch(`${h.url}/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "gen-broke", budget_usd: 0.000001 }),
    });
    const poor = ((await broke.json()) as { key: string; id: string }).key;
    // Its worst case (beta-5's 128,000 output tokens) does not fit $0.000001: refused before any spend.
    const spent = await post("/v1beta/models/beta-5:generateContent", HI, { "x-goog-api-key": poor });
    expect(spent.status).toBe(429);
    expect(((await spent.json()) as any).error.status).toBe("RESOURCE_EXHAUSTED");
  });
});
