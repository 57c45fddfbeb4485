/** Recorded vendor replies and streams (src/__fixtures__, sources in docs/recorded-fixtures.md) against our schemas. */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import {
  ChatChunk,
  ChatErrorBody,
  ChatResponse,
  MessagesErrorBody,
  MessagesResponse,
  MessagesStreamEvent,
  explainErrors,
} from "./index.js";

const fixture = (name: string): string => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), "utf8");
const json = (name: string): unknown => JSON.parse(fixture(name));
/** `.chunks.txt` files hold one JSON payload per line (the `data:` prefix stripped). */
const chunks = (name: string): unknown[] =>
  fixture(name)
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));

function expectValid(schema: TSchema, value: unknown): void {
  // explainErrors first, so a failure shows which field broke.
  expect(explainErrors(schema, value)).toEqual([]);
  expect(TypeCompiler.Compile(schema).Check(value)).toBe(true);
}

describe("messages format", () => {
  test.each(["anthropic-text.json", "anthropic-tool.json"])("%s is a MessagesResponse", (name) => {
    expectValid(MessagesResponse, json(name));
  });

  test("a response without stop_sequence (anthropic-tool.json omits it) still parses", () => {
    const body = json("anthropic-tool.json");
    expect(body).not.toHaveProperty("stop_sequence");
    expectValid(MessagesResponse, body);
  });

  test.each(["anthropic-text.chunks.txt", "anthropic-tool.chunks.txt"])(
    "every event of %s is a MessagesStreamEvent",
    (name) => {
      const events = chunks(name);
      expect(events.length).toBeGreaterThan(5);
      for (const ev of events) expectValid(MessagesStreamEvent, ev);
    },
  );

  // Payloads quoted in docs/protocols.md §1.7 (vercel/ai recordings): thinking, redacted thinking,
  // refusal with stop_details, mid-stream error.
  test.each([
    { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "I am thinking..." } },
    { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "EqQB" } },
    { type: "content_block_start", index: 1, content_block: { type: "redacted_thinking", data: "EmwKAhgB" } },
    {
      type: "content_block_delta",
      index: 1,
      delta: { type: "citations_delta", citation: { type: "char_location", cited_text: "x" } },
    },
    {
      type: "content_block_start",
      index: 2,
      content_block: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} },
    },
    {
      type: "message_delta",
      delta: {
        stop_reason: "refusal",
        stop_sequence: null,
        stop_details: { type: "refusal", category: "cyber", explanation: null },
      },
      usage: { output_tokens: 3 },
    },
    { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 47 } },
    { type: "error", error: { details: null, type: "overloaded_error", message: "Overloaded" } },
  ])("documented event %#: %o", (ev) => {
    expectValid(MessagesStreamEvent, ev);
  });

  test("an unknown event type is reported by name", () => {
    expect(explainErrors(MessagesStreamEvent, { type: "message_end" })).toEqual([
      {
        path: "",
        message:
          'request body: unknown event type "message_end", expected one of "message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop", "ping", "error"',
      },
    ]);
  });

  test("a delta with the wrong payload field fails", () => {
    const bad = { type: "content_block_delta", index: 0, delta: { type: "text_delta", partial_json: "{" } };
    expect(explainErrors(MessagesStreamEvent, bad)).toEqual([
      { path: "delta.text", message: "delta.text: required string, got nothing" },
    ]);
  });

  test("anthropic-400.error.json is a MessagesErrorBody", () => {
    expectValid(MessagesErrorBody, json("anthropic-400.error.json"));
  });
});

describe("chat completions format", () => {
  test.each(["openai-text.json", "openai-tool.json"])("%s is a ChatResponse", (name) => {
    expectValid(ChatResponse, json(name));
  });

  test.each(["openai-text.chunks.txt", "openai-tool.chunks.txt"])("every chunk of %s is a ChatChunk", (name) => {
    const all = chunks(name);
    expect(all.length).toBeGreaterThan(4);
    for (const c of all) expectValid(ChatChunk, c);
  });

  test("the usage chunk has empty choices and full usage", () => {
    const last = chunks("openai-text.chunks.txt").at(-1);
    expectValid(ChatChunk, last);
    expect(last).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 16, completion_tokens: 300, total_tokens: 316 },
    });
  });

  // Variants from docs/protocols.md §2.6: reasoning_content (DeepSeek), type omitted (Mistral),
  // a whole call in one chunk (xAI), usage on the finish chunk.
  test.each([
    { choices: [{ index: 0, delta: { reasoning_content: "Let me think" }, finish_reason: null }] },
    {
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, id: "call_1", function: { name: "f", arguments: "{}" } }] },
          finish_reason: null,
        },
      ],
    },
    {
      choices: [
        { index: 0, delta: { tool_calls: [{ index: 1, function: { arguments: "}" } }] }, finish_reason: "tool_calls" },
      ],
      usage: { prompt_tokens: 53, completion_tokens: 17, total_tokens: 70 },
    },
  ])("vendor chunk variant %#", (partial) => {
    expectValid(ChatChunk, { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m", ...partial });
  });

  test("a reply with reasoning_content parses", () => {
    const reply = json("openai-text.json");
    const withReasoning = JSON.parse(JSON.stringify(reply));
    withReasoning.choices[0].message.reasoning_content = "First, ...";
    expectValid(ChatResponse, withReasoning);
  });

  test("a chunk is not a response", () => {
    const first = chunks("openai-text.chunks.txt")[0];
    expect(TypeCompiler.Compile(ChatResponse).Check(first)).toBe(false);
    expect(explainErrors(ChatResponse, first)[0]).toEqual({
      path: "object",
      message: 'object: must be "chat.completion", got "chat.completion.chunk"',
    });
  });

  test("openai-400.error.json is a ChatErrorBody", () => {
    expectValid(ChatErrorBody, json("openai-400.error.json"));
  });
});
