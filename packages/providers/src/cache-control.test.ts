import { describe, expect, test } from "bun:test";
import type { MessagesRequest } from "@turnpike/schema";
import { convertMessagesRequestToChat } from "./chat/convert-messages-request-to-chat.js";
import { convertMessagesRequestToGenerate } from "./generate/convert-messages-request-to-generate.js";

const EPHEMERAL = { type: "ephemeral" as const };
const base: MessagesRequest = { model: "m", max_tokens: 10, messages: [{ role: "user", content: "Hi" }] };

/** Breakpoints wherever the messages format allows them. */
const PLACES: Record<string, MessagesRequest> = {
  "top level": { ...base, cache_control: EPHEMERAL },
  "a system block": { ...base, system: [{ type: "text", text: "Be brief.", cache_control: EPHEMERAL }] },
  "a message block": {
    ...base,
    messages: [{ role: "user", content: [{ type: "text", text: "Hi", cache_control: EPHEMERAL }] }],
  },
  "a tool definition": { ...base, tools: [{ name: "f", input_schema: { type: "object" }, cache_control: EPHEMERAL }] },
};

describe("a prompt-cache breakpoint anywhere is a warning toward chat and generateContent upstreams", () => {
  for (const [where, req] of Object.entries(PLACES)) {
    test(where, () => {
      const chat = convertMessagesRequestToChat(req, { upstreamModel: "up" });
      expect(chat.warnings.map((w) => w.param)).toEqual(["cache_control"]);
      const generate = convertMessagesRequestToGenerate(req);
      expect(generate.warnings.map((w) => w.param)).toEqual(["cache_control"]);
    });
  }

  test("none: no warning", () => {
    expect(convertMessagesRequestToChat(base, { upstreamModel: "up" }).warnings).toEqual([]);
    expect(convertMessagesRequestToGenerate(base).warnings).toEqual([]);
  });
});
