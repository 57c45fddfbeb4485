import { describe, expect, test } from "bun:test";
import { AUTH, PATH, sim } from "./test-support";

const SCHEMA = {
  type: "object",
  properties: {
    city: { type: "string" },
    unit: { type: "string", enum: ["celsius", "fahrenheit"] },
    days: { type: "integer", minimum: 1 },
    place: { type: "object", properties: { lat: { type: "number" } }, required: ["lat"], additionalProperties: false },
  },
  required: ["city", "unit", "days", "place"],
  additionalProperties: false,
};
const EXPECTED = { city: "sample city", unit: "celsius", days: 1, place: { lat: 1.5 } };

describe("structured output: schema-valid JSON in every protocol", () => {
  test("messages output_config.format json_schema", async () => {
    const body = {
      model: "a",
      max_tokens: 200,
      output_config: { format: { type: "json_schema", schema: SCHEMA } },
      messages: [{ role: "user", content: "Weather?" }],
    };
    const json = await (await sim().post(PATH.messages, body, AUTH.messages)).json();
    expect(JSON.parse(json.content[0].text)).toEqual(EXPECTED);
  });

  test("chat response_format json_schema and json_object", async () => {
    const s = sim();
    const schema = {
      model: "b",
      messages: [{ role: "user", content: "Weather?" }],
      response_format: { type: "json_schema", json_schema: { name: "w", schema: SCHEMA, strict: true } },
    };
    expect(JSON.parse((await (await s.post(PATH.chat, schema, AUTH.chat)).json()).choices[0].message.content)).toEqual(
      EXPECTED,
    );
    const object = {
      model: "b",
      messages: [{ role: "user", content: "Weather in JSON?" }],
      response_format: { type: "json_object" },
    };
    expect(JSON.parse((await (await s.post(PATH.chat, object, AUTH.chat)).json()).choices[0].message.content)).toEqual({
      answer: "Simulated reply to: Weather in JSON?",
    });
  });

  test("generateContent responseJsonSchema", async () => {
    const body = {
      contents: [{ role: "user", parts: [{ text: "Weather?" }] }],
      generationConfig: { responseMimeType: "application/json", responseJsonSchema: SCHEMA },
    };
    const json = await (await sim().post(PATH.generate("g"), body, AUTH.generate)).json();
    expect(JSON.parse(json.candidates[0].content.parts.map((p: { text?: string }) => p.text ?? "").join(""))).toEqual(
      EXPECTED,
    );
  });

  test("a directive still steers the reply", async () => {
    const body = {
      model: "a",
      max_tokens: 200,
      output_config: { format: { type: "json_schema", schema: SCHEMA } },
      messages: [{ role: "user", content: 'Weather? [sim text="plain"]' }],
    };
    expect((await (await sim().post(PATH.messages, body, AUTH.messages)).json()).content[0].text).toBe("plain");
  });
});
