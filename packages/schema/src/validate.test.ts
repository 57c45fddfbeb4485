import { expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { MAX_ISSUES, explainErrors, formatIssues, validateChatRequest, validateMessagesRequest } from "./index.js";

test("issues stop at MAX_ISSUES for a body with many bad items", () => {
  const messages = Array.from({ length: 500 }, () => ({ role: "user", content: [{ type: "text", text: "" }] }));
  const r = validateMessagesRequest({ model: "m", max_tokens: 1, messages });
  expect(r.ok ? 0 : r.issues.length).toBe(MAX_ISSUES);
});

test("long received strings are shortened", () => {
  const r = validateChatRequest({
    model: "m",
    messages: [{ role: "user", content: "x" }],
    tool_choice: "z".repeat(500),
  });
  expect(r.ok ? "" : r.issues[0]?.message).toBe(
    `tool_choice: must be one of "none", "auto", "required", got "${"z".repeat(55)}…" (500 characters)`,
  );
});

test("keys that are not identifiers are quoted in paths", () => {
  const S = Type.Object({ headers: Type.Record(Type.String(), Type.String()) });
  expect(explainErrors(S, { headers: { "x-api-key": 1 } })).toEqual([
    { path: 'headers["x-api-key"]', message: 'headers["x-api-key"]: must be a string, got 1' },
  ]);
});

test("formatIssues joins messages for an error body", () => {
  const r = validateMessagesRequest({ model: "m", messages: [] });
  expect(r.ok ? "" : formatIssues(r.issues)).toBe(
    "max_tokens: required integer, got nothing; messages: must have at least 1 item, got 0",
  );
});

test("explainErrors reports nothing for a valid value", () => {
  const S = Type.Object({ name: Type.String({ minLength: 1 }), rpm: Type.Optional(Type.Integer({ minimum: 1 })) });
  expect(explainErrors(S, { name: "ci" })).toEqual([]);
  expect(explainErrors(S, { rpm: 0 })).toEqual([
    { path: "name", message: "name: required string, got nothing" },
    { path: "rpm", message: "rpm: must be at least 1, got 0" },
  ]);
});

test("under a runtime that refuses code generation (CSP, edge), validators still load and work", async () => {
  const original = globalThis.Function;
  let refused = 0;
  function refuse(): never {
    refused++;
    throw new EvalError("Code generation from strings disallowed for this context");
  }
  globalThis.Function = refuse as unknown as FunctionConstructor; // stands in for the runtime's refusing constructor
  try {
    // A query string gives a fresh module instance, so its load-time compile runs under the refusal.
    const freshPath = "./validate.ts?no-eval"; // a variable: tsc cannot resolve the query string
    const fresh: typeof import("./validate.js") = await import(freshPath);
    expect(refused).toBeGreaterThan(0);
    expect(fresh.validateChatRequest({ model: "m", messages: [{ role: "user", content: "hi" }] }).ok).toBe(true);
    const bad = fresh.validateChatRequest({ model: "m", messages: [{ role: "user", content: "hi" }], temperature: 3 });
    expect(bad.ok ? [] : bad.issues).toEqual([
      { path: "temperature", message: "temperature: must be between 0 and 2, got 3" },
    ]);
  } finally {
    globalThis.Function = original;
  }
});
