import { describe, expect, test } from "bun:test";
import { AUTH, PATH, sim } from "./test-support";

const user = (content: unknown) => ({ role: "user", content });

async function messages400(body: unknown): Promise<string> {
  const res = await sim().post(PATH.messages, body, AUTH.messages);
  expect(res.status).toBe(400);
  const json = await res.json();
  expect(json.type).toBe("error");
  expect(json.error.type).toBe("invalid_request_error");
  return json.error.message;
}
async function chat400(
  body: unknown,
): Promise<{ message: string; param: string | null; code: string | null; type: string }> {
  const res = await sim().post(PATH.chat, body, AUTH.chat);
  expect(res.status).toBe(400);
  return (await res.json()).error;
}
async function generate400(body: unknown, model = "gamma-3-pro"): Promise<string> {
  const res = await sim().post(PATH.generate(model), body, AUTH.generate);
  expect(res.status).toBe(400);
  const json = await res.json();
  expect(json.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
  return json.error.message;
}

const m = (extra: Record<string, unknown>) => ({ model: "a", max_tokens: 100, messages: [user("Hi")], ...extra });

// Section numbers (§) in the test names refer to docs/protocols.md.
describe("messages protocol: the real API's 400s", () => {
  test("malformed JSON and missing fields", async () => {
    expect(await messages400("{not json")).toStartWith("There was an error parsing the body");
    expect(await messages400({ max_tokens: 5, messages: [user("Hi")] })).toBe("model: Field required");
    expect(await messages400({ model: "a", messages: [user("Hi")] })).toBe("max_tokens: Field required");
    expect(await messages400({ model: "a", max_tokens: 5 })).toBe("messages: Field required");
  });

  test("temperature above 1, and temperature with top_p (§1.2, §4.9 #12)", async () => {
    expect(await messages400(m({ temperature: 1.5 }))).toBe("temperature: range: 0..1");
    expect(await messages400(m({ temperature: 0.5, top_p: 0.9 }))).toBe(
      "`temperature` and `top_p` cannot both be specified for this model. Please use only one.",
    );
    expect((await sim().post(PATH.messages, m({ temperature: 1, top_k: 5 }), AUTH.messages)).status).toBe(200);
  });

  test("empty text blocks (§1.3)", async () => {
    expect(await messages400(m({ messages: [user([{ type: "text", text: "" }])] }))).toBe(
      "messages: text content blocks must be non-empty",
    );
  });

  test("tool pairing: a result without its call, a call without its result (§4.9 #10)", async () => {
    const orphan = m({
      messages: [
        user("Hi"),
        { role: "assistant", content: "ok" },
        user([{ type: "tool_result", tool_use_id: "toolu_x", content: "r" }]),
      ],
    });
    expect(await messages400(orphan)).toBe(
      "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
    );
    const unanswered = m({
      messages: [
        user("Hi"),
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "t", input: {} }] },
        user("next"),
      ],
    });
    expect(await messages400(unanswered)).toStartWith(
      "messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1.",
    );
    const badId = m({
      messages: [
        user("Hi"),
        { role: "assistant", content: [{ type: "tool_use", id: "functions.Bash:0", name: "t", input: {} }] },
      ],
    });
    expect(await messages400(badId)).toBe(
      "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
    );
  });

  test("thinking rules (§4.2)", async () => {
    const thinking = { type: "enabled", budget_tokens: 1024 };
    expect(await messages400(m({ max_tokens: 2000, thinking: { type: "enabled", budget_tokens: 100 } }))).toBe(
      "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
    );
    expect(await messages400(m({ max_tokens: 1024, thinking }))).toStartWith(
      "`max_tokens` must be greater than `thinking.budget_tokens`.",
    );
    expect(
      await messages400(
        m({
          max_tokens: 2000,
          thinking,
          tool_choice: { type: "any" },
          tools: [{ name: "t", input_schema: { type: "object" } }],
        }),
      ),
    ).toBe("Thinking may not be enabled when tool_choice forces tool use.");
    expect(await messages400(m({ max_tokens: 2000, thinking, temperature: 0.5 }))).toStartWith(
      "`temperature` may only be set to 1 when thinking is enabled.",
    );
  });

  test("a root anyOf, oneOf or allOf in input_schema is refused; composed keywords below the root are taken", async () => {
    const union = { type: "object", anyOf: [{ required: ["a"] }, { required: ["b"] }] };
    expect(
      await messages400(
        m({
          tools: [
            { name: "t", input_schema: { type: "object" } },
            { name: "u", input_schema: union },
          ],
        }),
      ),
    ).toBe("tools.1.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level");
    const nested = { type: "object", properties: { to: { allOf: [{ pattern: "^a" }, { pattern: "z$" }] } } };
    expect(
      (await sim().post(PATH.messages, m({ tools: [{ name: "t", input_schema: nested }] }), AUTH.messages)).status,
    ).toBe(200);
  });

  test("fields of the chat format or the gateway's own extension are refused", async () => {
    expect(await messages400(m({ turnpike: { chat: {} } }))).toBe("turnpike: Extra inputs are not permitted");
    expect(await messages400(m({ stop: ["x"] }))).toBe("stop: Extra inputs are not permitted");
  });
});

const c = (extra: Record<string, unknown>) => ({ model: "b", messages: [user("Hi")], ...extra });

describe("chat protocol: the real API's 400s", () => {
  test("malformed JSON, missing model, empty messages", async () => {
    expect((await chat400("nope")).message).toStartWith("We could not parse the JSON body of your request.");
    expect((await chat400({ messages: [user("Hi")] })).message).toBe("you must provide a model parameter");
    expect(await chat400({ model: "b", messages: [] })).toMatchObject({
      param: "messages",
      code: "empty_array",
      type: "invalid_request_error",
    });
  });

  test("temperature above 2", async () => {
    expect(await chat400(c({ temperature: 2.5 }))).toEqual({
      message: "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 2.5 instead.",
      type: "invalid_request_error",
      param: "temperature",
      code: "decimal_above_max_value",
    });
    expect((await sim().post(PATH.chat, c({ temperature: 1.5, top_p: 0.5 }), AUTH.chat)).status).toBe(200);
  });

  test("stream_options without stream (the gateway must only set include_usage on streams)", async () => {
    expect(await chat400(c({ stream_options: { include_usage: true } }))).toMatchObject({ param: "stream_options" });
  });

  test("a top-level system field or the gateway's extension field is an unrecognized argument", async () => {
    expect((await chat400(c({ system: "x" }))).message).toBe("Unrecognized request argument supplied: system");
    expect((await chat400(c({ turnpike: {} }))).message).toBe("Unrecognized request argument supplied: turnpike");
  });

  test("tool messages must answer a preceding tool call, and every call needs its answer", async () => {
    const orphan = await chat400(c({ messages: [user("Hi"), { role: "tool", tool_call_id: "call_1", content: "r" }] }));
    expect(orphan).toMatchObject({
      message:
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
      param: "messages.[1].role",
    });
    const call = { id: "call_1", type: "function", function: { name: "t", arguments: "{}" } };
    const unanswered = await chat400(
      c({ messages: [user("Hi"), { role: "assistant", content: null, tool_calls: [call] }, user("next")] }),
    );
    expect(unanswered.message).toStartWith("An assistant message with 'tool_calls' must be followed by tool messages");
  });

  test("tool names outside ^[a-zA-Z0-9_-]{1,64}$", async () => {
    const res = await chat400(c({ tools: [{ type: "function", function: { name: "bad.name", parameters: {} } }] }));
    expect(res).toMatchObject({ param: "tools[0].function.name", code: "invalid_value" });
  });
});

const g = (extra: Record<string, unknown>) => ({ contents: [{ role: "user", parts: [{ text: "Hi" }] }], ...extra });

describe("generateContent protocol: the real API's 400s", () => {
  test("malformed JSON, no contents, unknown fields", async () => {
    expect(await generate400("{")).toBe("Invalid JSON payload received. Unexpected token.");
    expect(await generate400({})).toBe("* GenerateContentRequest.contents: contents is not specified\n");
    expect(await generate400(g({ messages: [] }))).toBe(
      'Invalid JSON payload received. Unknown name "messages": Cannot find field.',
    );
    expect(await generate400(g({ generationConfig: { maxTokens: 5 } }))).toBe(
      "Invalid JSON payload received. Unknown name \"maxTokens\" at 'generation_config': Cannot find field.",
    );
  });

  test("snake_case field names are accepted, as the proto JSON mapping allows", async () => {
    const res = await sim().post(
      PATH.generate("g"),
      g({ generation_config: { max_output_tokens: 3 }, system_instruction: { parts: [{ text: "x" }] } }),
      AUTH.generate,
    );
    expect(res.status).toBe(200);
    expect((await res.json()).candidates[0].finishReason).toBe("MAX_TOKENS");
  });

  test("JSON Schema keys outside the OpenAPI subset in parameters (§4.9 #15)", async () => {
    const tools = [
      {
        functionDeclarations: [
          {
            name: "t",
            parameters: { type: "object", properties: { a: { type: "string", additionalProperties: false } } },
          },
        ],
      },
    ];
    expect(await generate400(g({ tools }))).toBe(
      "Invalid JSON payload received. Unknown name \"additionalProperties\" at 'tools[0].function_declarations[0].parameters.properties[a].value': Cannot find field.",
    );
    const schemaTools = [
      { functionDeclarations: [{ name: "t", parametersJsonSchema: { $schema: "x", type: "object" } }] },
    ];
    expect((await sim().post(PATH.generate("g"), g({ tools: schemaTools }), AUTH.generate)).status).toBe(200);
  });

  test("composed and referenced schemas: refused in parameters and responseSchema, taken in the JSON Schema fields", async () => {
    // Claude Code's SendMessage: an allOf of two patterns on one property.
    const composed = {
      type: "object",
      properties: { to: { type: "string", allOf: [{ pattern: "^[a-z]" }, { pattern: "[0-9]$" }] } },
      $defs: { x: { const: "a" } },
    };
    const decl = (d: Record<string, unknown>) => g({ tools: [{ functionDeclarations: [{ name: "t", ...d }] }] });
    expect(await generate400(decl({ parameters: composed }))).toBe(
      "Invalid JSON payload received. Unknown name \"$defs\" at 'tools[0].function_declarations[0].parameters': Cannot find field.",
    );
    expect(await generate400(decl({ parameters: { type: "object", properties: composed.properties } }))).toBe(
      "Invalid JSON payload received. Unknown name \"allOf\" at 'tools[0].function_declarations[0].parameters.properties[to].value': Cannot find field.",
    );
    expect(
      await generate400(decl({ parameters: { type: "object", properties: { k: { oneOf: [{ type: "string" }] } } } })),
    ).toStartWith('Invalid JSON payload received. Unknown name "oneOf"');
    expect(await generate400(decl({ parameters: { type: "object" }, parametersJsonSchema: composed }))).toBe(
      "* GenerateContentRequest.tools[0].function_declarations[0]: parameters and parameters_json_schema cannot both be set.\n",
    );
    expect((await sim().post(PATH.generate("g"), decl({ parametersJsonSchema: composed }), AUTH.generate)).status).toBe(
      200,
    );
    const output = (cfg: Record<string, unknown>) =>
      g({ generationConfig: { responseMimeType: "application/json", ...cfg } });
    expect(await generate400(output({ responseSchema: composed }))).toBe(
      "Invalid JSON payload received. Unknown name \"$defs\" at 'generation_config.response_schema': Cannot find field.",
    );
    expect((await sim().post(PATH.generate("g"), output({ responseJsonSchema: composed }), AUTH.generate)).status).toBe(
      200,
    );
  });

  test("a Gemini 3 model refuses a replayed function call without its thought signature (§3.7)", async () => {
    const history = (part: Record<string, unknown>) => ({
      contents: [
        { role: "user", parts: [{ text: "Weather?" }] },
        { role: "model", parts: [{ functionCall: { name: "get_weather", args: {} }, ...part }] },
        { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { output: "18C" } } }] },
      ],
    });
    expect(await generate400(history({}))).toStartWith(
      "Function call is missing a thought_signature in functionCall parts.",
    );
    expect(
      (
        await sim().post(
          PATH.generate("gamma-3-pro"),
          history({ thoughtSignature: "skip_thought_signature_validator" }),
          AUTH.generate,
        )
      ).status,
    ).toBe(200);
    expect((await sim().post(PATH.generate("gamma-2.5-flash"), history({}), AUTH.generate)).status).toBe(200);
  });

  test("a functionResponse needs a name; a part needs data", async () => {
    expect(await generate400({ contents: [{ role: "user", parts: [{ functionResponse: { response: {} } }] }] })).toBe(
      "* GenerateContentRequest.contents[0].parts[0].function_response.name: Name cannot be empty.\n",
    );
    expect(await generate400({ contents: [{ role: "user", parts: [{ thought: true }] }] })).toStartWith(
      "* GenerateContentRequest.contents[0].parts[0].data",
    );
  });
});
