import { expect, test } from "bun:test";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { type Model, ModelList, explainErrors } from "./index.js";

const model: Model = {
  id: "alpha-sonnet-4-6",
  object: "model",
  type: "model",
  display_name: "Alpha Sonnet 4.6",
  created: 1759104000,
  created_at: "2025-09-29T00:00:00Z",
  owned_by: "alpha",
  pricing: { input_per_mtok: 3, output_per_mtok: 15 },
  context_window: 200_000,
};

test("one entry carries the fields of both client libraries", () => {
  const list: ModelList = { object: "list", data: [model], has_more: false, first_id: model.id, last_id: model.id };
  expect(TypeCompiler.Compile(ModelList).Check(list)).toBe(true);
  // chat client: {id, object, created (unix seconds), owned_by}; messages client: {id, type, display_name, created_at}
  expect(new Date(model.created_at).getTime() / 1000).toBe(model.created);
});

test("an empty list has null ids", () => {
  expect(
    explainErrors(ModelList, { object: "list", data: [], has_more: false, first_id: null, last_id: null }),
  ).toEqual([]);
});

test("an entry missing the messages-client fields is rejected", () => {
  const { type: _t, display_name: _d, created_at: _c, ...chatOnly } = model;
  expect(
    explainErrors(ModelList, { object: "list", data: [chatOnly], has_more: false, first_id: null, last_id: null }),
  ).toEqual([
    { path: "data[0].type", message: 'data[0].type: required "model", got nothing' },
    { path: "data[0].display_name", message: "data[0].display_name: required string, got nothing" },
    { path: "data[0].created_at", message: "data[0].created_at: required string, got nothing" },
  ]);
});
