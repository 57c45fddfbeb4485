/**
 * The tool schemas real agents send (every client tool definition in the recorded traffic of
 * `__fixtures__/agents/`, written by `scripts/record-agents.ts`), plus the JSON Schema keywords MCP
 * servers use that no recorded agent sends yet (`$ref`/`$defs`, `oneOf`, `const`), offered to every
 * catalog model through every client format. Each request must be answered 200 with no warning
 * about a tool, and each schema must reach the vendor whole, in the field that takes full JSON
 * Schema: `input_schema` (messages), `function.parameters` (chat), `parameters` (Responses),
 * `parametersJsonSchema` (generateContent; never the OpenAPI-subset `parameters`, which refuses
 * `allOf`, `oneOf`, `$ref`, `const`, … for the whole request). The same for a composed
 * structured-output schema (`responseJsonSchema` on generateContent).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { RESPONSES_VENDOR_ENV } from "./conformance/upstreams";
import { CATALOG_IDS, startHarness, type Harness } from "./harness";

type Schema = Record<string, unknown>;
const isObject = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

const DIR = join(import.meta.dir, "__fixtures__/agents");

/** Every client tool definition the recorded agents sent, one per distinct schema. */
function recordedSchemas(): { from: string; name: string; schema: Schema }[] {
  const out = new Map<string, { from: string; name: string; schema: Schema }>();
  for (const d of readdirSync(DIR, { withFileTypes: true })) {
    if (!d.isDirectory()) continue;
    const calls = JSON.parse(readFileSync(join(DIR, d.name, "calls.json"), "utf8")) as Schema[];
    for (const call of calls) {
      const bodies = call.kind === "websocket" ? (call.frames as Schema[]) : [call.body];
      for (const body of bodies) {
        if (!isObject(body) || !Array.isArray(body.tools)) continue;
        for (const t of body.tools as Schema[]) {
          const fn = isObject(t.function) ? t.function : t;
          const schema = t.input_schema ?? fn.parameters;
          if (!isObject(schema) || typeof fn.name !== "string") continue;
          out.set(JSON.stringify(schema), { from: d.name, name: fn.name, schema });
        }
      }
    }
  }
  return [...out.values()];
}

/** Keywords MCP servers' schemas carry that the recorded agents do not (yet). */
const KEYWORDS: { from: string; name: string; schema: Schema }[] = [
  {
    from: "keywords",
    name: "refs",
    schema: {
      type: "object",
      properties: { target: { $ref: "#/$defs/target" }, mode: { const: "fast" } },
      required: ["target"],
      $defs: {
        target: {
          oneOf: [
            { type: "string", pattern: "^/" },
            { type: "integer", minimum: 0 },
          ],
        },
      },
    },
  },
  {
    from: "keywords",
    name: "nullable_union",
    schema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        when: { anyOf: [{ type: "string", format: "date-time" }, { type: "null" }] },
        tags: { type: "array", items: { type: "string" }, uniqueItems: true },
      },
      additionalProperties: false,
    },
  },
];

const CORPUS = [...recordedSchemas(), ...KEYWORDS];
/** A name unique in the request and valid in every format (letters, digits, `_`, ≤ 64). */
const toolName = (i: number, name: string) => `t${i}_${name.replace(/[^A-Za-z0-9_]/g, "_")}`.slice(0, 64);
const TOOLS = CORPUS.map((c, i) => ({ name: toolName(i, c.name), schema: c.schema }));
const PROMPT = "Say hello.";

type Format = "messages" | "chat" | "responses" | "generate";
const FORMATS: Format[] = ["messages", "chat", "responses", "generate"];

/** One request in a client format offering every tool of the corpus. */
const REQUEST: Record<Format, (model: string) => { path: string; body: Schema; headers: Record<string, string> }> = {
  messages: (model) => ({
    path: "/v1/messages",
    body: {
      model,
      max_tokens: 200,
      tools: TOOLS.map((t) => ({ name: t.name, description: "d", input_schema: t.schema })),
      messages: [{ role: "user", content: PROMPT }],
    },
    headers: { "anthropic-version": "2023-06-01" },
  }),
  chat: (model) => ({
    path: "/v1/chat/completions",
    body: {
      model,
      tools: TOOLS.map((t) => ({
        type: "function",
        function: { name: t.name, description: "d", parameters: t.schema },
      })),
      messages: [{ role: "user", content: PROMPT }],
    },
    headers: {},
  }),
  responses: (model) => ({
    path: "/v1/responses",
    body: {
      model,
      store: false,
      tools: TOOLS.map((t) => ({ type: "function", name: t.name, description: "d", parameters: t.schema })),
      input: PROMPT,
    },
    headers: {},
  }),
  generate: (model) => ({
    path: `/v1beta/models/${encodeURIComponent(model)}:generateContent`,
    body: {
      contents: [{ role: "user", parts: [{ text: PROMPT }] }],
      tools: [
        {
          functionDeclarations: TOOLS.map((t) => ({ name: t.name, description: "d", parametersJsonSchema: t.schema })),
        },
      ],
    },
    headers: {},
  }),
};

/** The schemas a captured upstream request carries, by tool name, read from the field that takes full JSON Schema. */
function sentSchemas(path: string, body: Schema): Map<string, unknown> {
  const tools = (
    path.includes(":generateContent") ? ((body.tools as Schema[])?.[0]?.functionDeclarations ?? []) : (body.tools ?? [])
  ) as Schema[];
  return new Map(
    tools.map((t): [string, unknown] => {
      if (path.includes(":generateContent")) {
        // The OpenAPI-subset field must not be used at all.
        expect(t.parameters).toBeUndefined();
        return [String(t.name), t.parametersJsonSchema];
      }
      if (path.endsWith("/messages")) return [String(t.name), t.input_schema];
      if (path.endsWith("/chat/completions")) {
        const fn = t.function as Schema;
        return [String(fn.name), fn.parameters];
      }
      return [String(t.name), t.parameters];
    }),
  );
}

/** Every catalog model, and a Responses-API vendor's (added by config: no built-in vendor speaks it). */
const MODELS = [...CATALOG_IDS, "epsilon-5"];

let h: Harness;
beforeAll(async () => {
  h = await startHarness(RESPONSES_VENDOR_ENV);
});
afterAll(async () => {
  await h.close();
});

async function send(format: Format, model: string, body?: Schema): Promise<{ res: Response; text: string }> {
  const r = REQUEST[format](model);
  body ??= r.body;
  const headers: Record<string, string> = { "content-type": "application/json", ...r.headers };
  if (format === "messages") headers["x-api-key"] = h.key;
  else if (format === "generate") headers["x-goog-api-key"] = h.key;
  else headers.authorization = `Bearer ${h.key}`;
  const res = await fetch(`${h.url}${r.path}`, { method: "POST", headers, body: JSON.stringify(body) });
  return { res, text: await res.text() };
}

describe("the schema corpus", () => {
  test("holds the recorded agents' composed schemas and every keyword the vendors differ on", () => {
    const text = JSON.stringify(CORPUS.map((c) => c.schema));
    for (const k of ["allOf", "anyOf", "oneOf", "$ref", "$defs", "const", "pattern", "additionalProperties"])
      expect(text).toContain(`"${k}"`);
    // Claude Code's SendMessage, sent when tool search is off.
    const send = CORPUS.find((c) => c.from.startsWith("claude-code") && c.name === "SendMessage");
    expect(JSON.stringify(send?.schema)).toContain('"allOf"');
    expect(new Set(CORPUS.map((c) => c.from.replace(/-[\d.]+$/, "")))).toEqual(
      new Set(["claude-code", "codex", "opencode", "ai-sdk", "keywords"]),
    );
  });
});

/** The upstream protocols the requests reached, by simulator path. */
const reached = new Set<string>();
const protocolOf = (path: string) =>
  path.includes(":generateContent") || path.includes(":streamGenerateContent") ? "generate" : path.split("?")[0]!;

for (const format of FORMATS) {
  describe(`every tool schema through the ${format} format`, () => {
    for (const model of MODELS) {
      test(`→ ${model}: 200, no tool warning, every schema sent whole`, async () => {
        const { res, text } = await send(format, model);
        expect({ status: res.status, text: res.status === 200 ? "" : text }).toEqual({ status: 200, text: "" });
        expect(res.headers.get("x-turnpike-warning") ?? "").not.toMatch(/tool|schema|parameters/i);
        const up = h.gw.simulator!.requests.at(-1)!;
        reached.add(protocolOf(up.path));
        const sent = sentSchemas(up.path.split("?")[0]!, up.body as Schema);
        expect(sent.size).toBe(TOOLS.length);
        for (const t of TOOLS)
          expect({ tool: t.name, schema: sent.get(t.name) }).toEqual({ tool: t.name, schema: t.schema });
      });
    }
  });
}

test("the tool requests reached every upstream protocol", () => {
  expect(reached).toEqual(new Set(["/v1/messages", "/v1/chat/completions", "/v1/responses", "generate"]));
});

/** A structured-output schema with the keywords the OpenAPI-subset `responseSchema` refuses. */
const OUTPUT: Schema = {
  type: "object",
  properties: {
    city: { allOf: [{ type: "string" }, { pattern: "^[A-Z]" }] },
    unit: { $ref: "#/$defs/unit" },
  },
  required: ["city", "unit"],
  additionalProperties: false,
  $defs: { unit: { oneOf: [{ const: "c" }, { const: "f" }] } },
};

/** A client format's request for JSON output under {@link OUTPUT}. */
const WITH_OUTPUT: Record<Format, (body: Schema) => Schema> = {
  messages: (b) => ({ ...b, tools: undefined, output_config: { format: { type: "json_schema", schema: OUTPUT } } }),
  chat: (b) => ({
    ...b,
    tools: undefined,
    response_format: { type: "json_schema", json_schema: { name: "out", schema: OUTPUT } },
  }),
  responses: (b) => ({
    ...b,
    tools: undefined,
    text: { format: { type: "json_schema", name: "out", schema: OUTPUT } },
  }),
  generate: (b) => ({
    ...b,
    tools: undefined,
    generationConfig: { responseMimeType: "application/json", responseJsonSchema: OUTPUT },
  }),
};

/** Where each upstream protocol's request carries the output schema (its full-JSON-Schema field). */
function sentOutput(path: string, body: Schema): unknown {
  const b = body as Record<string, any>;
  switch (protocolOf(path)) {
    case "generate":
      expect(b.generationConfig?.responseSchema).toBeUndefined();
      return b.generationConfig?.responseJsonSchema;
    case "/v1/messages":
      return b.output_config?.format?.schema;
    case "/v1/chat/completions":
      return b.response_format?.json_schema?.schema;
    default:
      return b.text?.format?.schema;
  }
}

for (const format of FORMATS) {
  describe(`a composed structured-output schema through the ${format} format`, () => {
    for (const model of MODELS) {
      test(`→ ${model}: 200, sent whole`, async () => {
        const { res, text } = await send(format, model, WITH_OUTPUT[format](REQUEST[format](model).body));
        expect({ status: res.status, text: res.status === 200 ? "" : text }).toEqual({ status: 200, text: "" });
        expect(res.headers.get("x-turnpike-warning") ?? "").not.toMatch(/schema|format/i);
        const up = h.gw.simulator!.requests.at(-1)!;
        expect(sentOutput(up.path, up.body as Schema)).toEqual(OUTPUT);
      });
    }
  });
}

/**
 * An MCP server's "one of these argument sets": a `oneOf` at the root. A messages-format vendor
 * refuses a root union for the whole request; the others take it. Translated toward a messages
 * upstream the root becomes one object (what is lost is named, at the tool's path in the
 * client's request); passed through (a messages client) it reaches the vendor as sent, which
 * answers as it would have answered the client directly.
 */
const ROOT_UNION: Schema = {
  type: "object",
  properties: { id: { type: "string" }, path: { type: "string" }, verbose: { type: "boolean" } },
  required: ["verbose"],
  oneOf: [{ required: ["id"] }, { required: ["path"] }],
};
const MERGED: Schema = {
  type: "object",
  properties: { id: { type: "string" }, path: { type: "string" }, verbose: { type: "boolean" } },
  required: ["verbose"],
};
/** Where each client format names its first tool's schema. */
const TOOL_PATH: Record<Format, string> = {
  messages: "tools[0].input_schema",
  chat: "tools[0].function.parameters",
  responses: "tools[0].parameters",
  generate: "tools[0].functionDeclarations[0].parametersJsonSchema",
};
const UNION_TOOLS: Record<Format, (body: Schema) => Schema> = {
  messages: (b) => ({ ...b, tools: [{ name: "open", input_schema: ROOT_UNION }] }),
  chat: (b) => ({ ...b, tools: [{ type: "function", function: { name: "open", parameters: ROOT_UNION } }] }),
  responses: (b) => ({ ...b, tools: [{ type: "function", name: "open", parameters: ROOT_UNION }] }),
  generate: (b) => ({ ...b, tools: [{ functionDeclarations: [{ name: "open", parametersJsonSchema: ROOT_UNION }] }] }),
};

for (const format of FORMATS) {
  describe(`a root oneOf through the ${format} format`, () => {
    for (const model of MODELS) {
      test(`→ ${model}`, async () => {
        h.gw.simulator!.requests.length = 0; // one upstream call is looked at: this one
        const { res, text } = await send(format, model, UNION_TOOLS[format](REQUEST[format](model).body));
        expect(h.gw.simulator!.requests.length).toBe(1);
        const up = h.gw.simulator!.requests[0]!;
        const protocol = protocolOf(up.path);
        const [sent] = sentSchemas(up.path.split("?")[0]!, up.body as Schema).values();
        const warning = res.headers.get("x-turnpike-warning") ?? "";
        if (protocol !== "/v1/messages") {
          expect({ status: res.status, sent }).toEqual({ status: 200, sent: ROOT_UNION });
          expect(warning).not.toMatch(/tool|schema|parameters/i);
        } else if (format === "messages") {
          // Passed through as sent: the vendor's own answer.
          expect(res.status).toBe(400);
          expect(text).toContain("input_schema does not support oneOf, allOf, or anyOf at the top level");
          expect(sent).toEqual(ROOT_UNION);
        } else {
          expect({ status: res.status, sent }).toEqual({ status: 200, sent: MERGED });
          expect(warning).toContain(`${TOOL_PATH[format]}: its root oneOf was merged into one object`);
        }
      });
    }
  });
}

describe("every tool schema counted (count_tokens, input_tokens) on every model", () => {
  for (const model of MODELS) {
    test(`→ ${model}`, async () => {
      const m = REQUEST.messages(model).body;
      const messages = await fetch(`${h.url}/v1/messages/count_tokens`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": h.key, "anthropic-version": "2023-06-01" },
        body: JSON.stringify({ model, tools: m.tools, messages: m.messages }),
      });
      const r = REQUEST.responses(model).body;
      const responses = await fetch(`${h.url}/v1/responses/input_tokens`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${h.key}` },
        body: JSON.stringify({ model, tools: r.tools, input: r.input }),
      });
      const [a, b] = [(await messages.json()) as Schema, (await responses.json()) as Schema];
      expect({ messages: messages.status, responses: responses.status }).toEqual({ messages: 200, responses: 200 });
      expect(a.input_tokens).toBeGreaterThan(100);
      expect(b.input_tokens).toBeGreaterThan(100);
      // A generateContent vendor counts them itself: the schemas reached it in a field it takes
      // (a refused count would fall back to Turnpike's own, "local").
      if (model.startsWith("gamma-"))
        expect([messages.headers.get("x-turnpike-count"), responses.headers.get("x-turnpike-count")]).toEqual([
          "upstream",
          "upstream",
        ]);
    });
  }
});
