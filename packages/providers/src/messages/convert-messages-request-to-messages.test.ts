import { describe, expect, test } from "bun:test";
import type { MessagesRequest } from "@turnpike/schema";
import { convertMessagesRequestToMessages } from "./convert-messages-request-to-messages.js";

const base = (extra: Partial<MessagesRequest> = {}): MessagesRequest => ({
  model: "client",
  max_tokens: 100,
  messages: [{ role: "user", content: "Hi" }],
  ...extra,
});
const params = (r: { warnings: { param: string }[] }) => r.warnings.map((w) => w.param);

describe("pivot → messages upstream", () => {
  test("strips turnpike and renames the model", () => {
    const r = convertMessagesRequestToMessages(base({ turnpike: { chat: { seed: 1 } } }), { upstreamModel: "up" });
    expect(r.body).toEqual({ model: "up", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] });
  });

  test("temperature + top_p: top_p dropped; enabled thinking + forced tool: thinking dropped", () => {
    const r = convertMessagesRequestToMessages(
      base({
        temperature: 0.5,
        top_p: 0.9,
        thinking: { type: "enabled", budget_tokens: 1024 },
        max_tokens: 4000,
        tools: [{ name: "f", input_schema: { type: "object" } }],
        tool_choice: { type: "any" },
      }),
    );
    expect(r.body.top_p).toBeUndefined();
    expect(r.body.thinking).toBeUndefined();
    expect(params(r)).toEqual(["top_p", "thinking"]);
  });

  test("unsigned thinking blocks are removed even with thinking on; signed ones stay", () => {
    const r = convertMessagesRequestToMessages(
      base({
        thinking: { type: "enabled", budget_tokens: 1024 },
        max_tokens: 4000,
        messages: [
          { role: "user", content: "q" },
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "from a chat vendor", signature: "" },
              { type: "text", text: "a" },
            ],
          },
          { role: "user", content: "q2" },
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "signed", signature: "EqQB" },
              { type: "text", text: "b" },
            ],
          },
          { role: "user", content: "q3" },
        ],
      }),
    );
    expect(r.body.messages[1]).toEqual({ role: "assistant", content: [{ type: "text", text: "a" }] });
    expect(r.body.messages[3]).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "signed", signature: "EqQB" },
        { type: "text", text: "b" },
      ],
    });
    expect(params(r)).toEqual(["thinking"]);
  });

  test("with thinking off, all thinking blocks go; a thinking-only turn is dropped and its neighbours merged", () => {
    const r = convertMessagesRequestToMessages(
      base({
        messages: [
          { role: "user", content: "q" },
          { role: "assistant", content: [{ type: "redacted_thinking", data: "xx" }] },
          { role: "user", content: "again" },
        ],
      }),
    );
    expect(r.body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "q" },
          { type: "text", text: "again" },
        ],
      },
    ]);
  });
});
