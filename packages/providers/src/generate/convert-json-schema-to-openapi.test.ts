import { describe, expect, test } from "bun:test";
import { convertJsonSchemaToOpenApi } from "./convert-json-schema-to-openapi.js";

// Section numbers (§) in the test names refer to docs/protocols.md.
describe("JSON Schema → OpenAPI subset (§4.1 schema conversion, §4.9 trap 15)", () => {
  test("drops $schema, additionalProperties and default; keeps type, description, enum, required, items", () => {
    expect(
      convertJsonSchemaToOpenApi({
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        additionalProperties: false,
        properties: {
          city: { type: "string", description: "City name", default: "Paris" },
          unit: { type: "string", enum: ["c", "f"] },
          days: { type: "array", items: { type: "integer", minimum: 1 } },
        },
        required: ["city"],
      }),
    ).toEqual({
      type: "object",
      properties: {
        city: { type: "string", description: "City name" },
        unit: { type: "string", enum: ["c", "f"] },
        days: { type: "array", items: { type: "integer", minimum: 1 } },
      },
      required: ["city"],
    });
  });

  test('type [T, "null"] → nullable; anyOf with null → nullable; const → enum', () => {
    expect(
      convertJsonSchemaToOpenApi({
        type: "object",
        properties: {
          a: { type: ["string", "null"] },
          b: { anyOf: [{ type: "number" }, { type: "null" }] },
          c: { const: "fixed" },
        },
      }),
    ).toEqual({
      type: "object",
      properties: {
        a: { type: "string", nullable: true },
        b: { type: "number", nullable: true },
        c: { type: "string", enum: ["fixed"] },
      },
    });
  });

  test("local $refs are resolved", () => {
    expect(
      convertJsonSchemaToOpenApi({
        type: "object",
        properties: { home: { $ref: "#/$defs/address" }, work: { $ref: "#/definitions/address" } },
        $defs: { address: { type: "object", properties: { street: { type: "string" } }, additionalProperties: false } },
        definitions: { address: { type: "object", properties: { street: { type: "string" } } } },
      }),
    ).toEqual({
      type: "object",
      properties: {
        home: { type: "object", properties: { street: { type: "string" } } },
        work: { type: "object", properties: { street: { type: "string" } } },
      },
    });
  });

  test("a recursive $ref stops at a depth limit instead of looping", () => {
    const out = convertJsonSchemaToOpenApi({
      type: "object",
      properties: { node: { $ref: "#/$defs/node" } },
      $defs: { node: { type: "object", properties: { child: { $ref: "#/$defs/node" } } } },
    });
    expect(JSON.stringify(out).length).toBeLessThan(2000);
  });

  test("an empty root schema means no parameters", () => {
    expect(convertJsonSchemaToOpenApi({ type: "object", properties: {} })).toBeUndefined();
    expect(convertJsonSchemaToOpenApi({ type: "object", additionalProperties: false })).toBeUndefined();
  });
});
