import { describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { OpenEnum } from "@turnpike/schema";
import { foreignKeywords, standardSchema } from "./standard-schema";

describe("standardSchema", () => {
  test("drops the validators' annotations at every depth, keeps properties that share their names", () => {
    const schema = Type.Object(
      {
        rule: Type.String({ pattern: "^a", rule: "must start with a" }),
        items: Type.Array(
          Type.Union([Type.Literal("x"), Type.Literal("y")], { hint: "x or y", expected: "a letter" }),
          { rule: "must be a list" },
        ),
        display: OpenEnum(["summarized", "omitted"]),
      },
      { additionalProperties: false, listKnown: true, discriminatorLabel: "kind" },
    );
    const plain = JSON.parse(JSON.stringify(schema));
    expect([...foreignKeywords(plain)].sort()).toEqual([
      "discriminatorLabel",
      "expected",
      "hint",
      "known",
      "listKnown",
      "rule",
    ]);
    const clean = standardSchema(plain);
    expect(foreignKeywords(clean).size).toBe(0);
    expect(clean).toEqual({
      type: "object",
      additionalProperties: false,
      required: ["rule", "items", "display"],
      properties: {
        rule: { type: "string", pattern: "^a" },
        items: {
          type: "array",
          items: {
            anyOf: [
              { const: "x", type: "string" },
              { const: "y", type: "string" },
            ],
          },
        },
        display: { type: "string", examples: ["summarized", "omitted"] },
      },
    });
  });
});
