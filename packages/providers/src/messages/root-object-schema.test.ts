import { describe, expect, test } from "bun:test";
import { convertMessagesRequestToMessages } from "./convert-messages-request-to-messages.js";
import { rootObjectSchema } from "./root-object-schema.js";

describe("a root union in input_schema, for a messages upstream", () => {
  test("an object without a root union is the same object", () => {
    const s = { type: "object", properties: { a: { allOf: [{ pattern: "^a" }, { pattern: "z$" }] } } };
    expect(rootObjectSchema(s).schema).toBe(s);
  });

  test("an allOf of plain object schemas merges exactly: nothing lost", () => {
    const s = {
      type: "object",
      allOf: [
        { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
        { properties: { b: { type: "integer" } }, required: ["b"] },
      ],
    };
    expect(rootObjectSchema(s)).toEqual({
      schema: { type: "object", properties: { a: { type: "string" }, b: { type: "integer" } }, required: ["a", "b"] },
    });
  });

  test("anyOf / oneOf alternatives: every property offered, only the common ones required, the loss named", () => {
    const s = {
      type: "object",
      properties: { v: { type: "boolean" } },
      anyOf: [
        { properties: { id: { type: "string" } }, required: ["id", "v"] },
        { properties: { path: { type: "string" } }, required: ["path", "v"] },
      ],
    };
    const r = rootObjectSchema(s);
    expect(r.schema).toEqual({
      type: "object",
      properties: { v: { type: "boolean" }, id: { type: "string" }, path: { type: "string" } },
      required: ["v"],
    });
    expect(r.lost).toStartWith("its root anyOf was merged into one object");
  });

  test("the converter rewrites only such tools and warns under the tool's path", () => {
    const union = { type: "object" as const, oneOf: [{ required: ["a"] }, { required: ["b"] }] };
    const plain = { type: "object" as const, properties: { q: { type: "string" } } };
    const { body, warnings } = convertMessagesRequestToMessages({
      model: "m",
      max_tokens: 10,
      messages: [{ role: "user", content: "Hi" }],
      tools: [
        { name: "plain", input_schema: plain },
        { name: "union", input_schema: union },
      ],
    });
    expect(body.tools).toEqual([
      { name: "plain", input_schema: plain },
      { name: "union", input_schema: { type: "object", properties: {} } },
    ]);
    expect(warnings.map((w) => w.param)).toEqual(["tools[1].input_schema"]);
  });
});
