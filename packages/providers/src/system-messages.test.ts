import { describe, expect, test } from "bun:test";
import type { MessagesRequest } from "@turnpike/schema";
import { convertMessagesRequestToChat } from "./chat/convert-messages-request-to-chat.js";
import { convertMessagesRequestToGenerate } from "./generate/convert-messages-request-to-generate.js";
import { convertMessagesRequestToMessages } from "./messages/convert-messages-request-to-messages.js";

// The shape a coding agent sends: a user turn, then system messages listing its agents and skills.
const agentRequest: MessagesRequest = {
  model: "m",
  max_tokens: 256,
  system: "You are a coding agent.",
  messages: [
    { role: "user", content: "Read notes.txt" },
    { role: "system", content: "Agent types: explore, plan" },
    { role: "assistant", content: "Reading it." },
    { role: "user", content: "Go on" },
    {
      role: "system",
      content: [
        { type: "text", text: "Skills: review" },
        { type: "text", text: "Skills: test" },
      ],
    },
  ],
};

describe("mid-conversation system messages", () => {
  test("a chat upstream gets its own system messages, in place", () => {
    const { body, warnings } = convertMessagesRequestToChat(agentRequest, { upstreamModel: "c" });
    expect(body.messages).toEqual([
      { role: "system", content: "You are a coding agent." },
      { role: "user", content: "Read notes.txt" },
      { role: "system", content: "Agent types: explore, plan" },
      { role: "assistant", content: "Reading it." },
      { role: "user", content: "Go on" },
      { role: "system", content: "Skills: review\n\nSkills: test" },
    ]);
    expect(warnings).toEqual([]);
  });

  test("a generateContent upstream gets them folded into the user side, in order, marked as system text", () => {
    const { body, warnings } = convertMessagesRequestToGenerate(agentRequest);
    expect(body.systemInstruction).toEqual({ parts: [{ text: "You are a coding agent." }] });
    expect(body.contents).toEqual([
      {
        role: "user",
        parts: [
          { text: "Read notes.txt" },
          { text: "<system-message>\nAgent types: explore, plan\n</system-message>" },
        ],
      },
      { role: "model", parts: [{ text: "Reading it." }] },
      {
        role: "user",
        parts: [{ text: "Go on" }, { text: "<system-message>\nSkills: review\n\nSkills: test\n</system-message>" }],
      },
    ]);
    expect(warnings.map((w) => w.param)).toEqual(["messages"]);
  });

  test("a messages upstream gets them unchanged", () => {
    const { body, warnings } = convertMessagesRequestToMessages(agentRequest, { upstreamModel: "u" });
    expect(body.messages).toEqual(agentRequest.messages);
    expect(warnings).toEqual([]);
  });
});
