import { describe, expect, test } from "bun:test";
import type { MessagesRequest } from "@turnpike/schema";
import { convertMessagesRequestToChat } from "./chat/convert-messages-request-to-chat.js";
import { convertMessagesRequestToGenerate } from "./generate/convert-messages-request-to-generate.js";
import { convertMessagesRequestToMessages } from "./messages/convert-messages-request-to-messages.js";

const PDF = "JVBERi0xLjQK";
/** A page citation of an earlier reply (the schema reads only its type; the rest passes as is). */
const citation = {
  type: "page_location",
  cited_text: "hello",
  document_index: 0,
  document_title: null,
  start_page_number: 1,
  end_page_number: 2,
};

/** A document that asks for citations, and an earlier reply that carried some. */
const request: MessagesRequest = {
  model: "m",
  max_tokens: 100,
  messages: [
    {
      role: "user",
      content: [
        {
          type: "document",
          source: { type: "base64", media_type: "application/pdf", data: PDF },
          citations: { enabled: true },
        },
        { type: "text", text: "What does it say?" },
      ],
    },
    {
      role: "assistant",
      content: [
        {
          type: "text",
          text: "It says hello.",
          citations: [citation],
        },
      ],
    },
    { role: "user", content: "Thanks" },
  ],
};

describe("citations", () => {
  test("toward a chat-completions upstream: the document goes without them, and a warning says so", () => {
    const r = convertMessagesRequestToChat(request, { upstreamModel: "m" });
    expect(r.warnings.find((w) => w.param === "citations")?.message).toContain(
      "chat-completions upstreams do not cite documents",
    );
    expect(JSON.stringify(r.body)).not.toContain("citations");
    expect(JSON.stringify(r.body)).toContain(PDF);
  });

  test("toward a generateContent upstream: the same", () => {
    const r = convertMessagesRequestToGenerate(request, { upstreamModel: "m" });
    expect(r.warnings.find((w) => w.param === "citations")?.message).toContain(
      "generateContent upstreams do not cite documents",
    );
    expect(JSON.stringify(r.body)).toContain(PDF);
  });

  test("toward a messages upstream: carried, no warning", () => {
    const r = convertMessagesRequestToMessages(request, { upstreamModel: "m" });
    expect(r.warnings.some((w) => w.param === "citations")).toBe(false);
    expect(JSON.stringify(r.body)).toContain('"citations":{"enabled":true}');
  });

  test("earlier citations alone are named too", () => {
    const history: MessagesRequest = {
      ...request,
      messages: [{ role: "user", content: "Hi" }, ...request.messages.slice(1)],
    };
    const r = convertMessagesRequestToChat(history, { upstreamModel: "m" });
    expect(r.warnings.find((w) => w.param === "citations")?.message).toContain("those of earlier turns were not sent");
  });
});
