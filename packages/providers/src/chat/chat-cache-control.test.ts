import { describe, expect, test } from "bun:test";
import type { ChatRequest } from "@turnpike/schema";
import { convertChatRequestToMessages } from "./convert-chat-request-to-messages.js";

const EPH = { type: "ephemeral" as const };

describe("cache_control on chat content parts (the common extension) reaches a messages upstream", () => {
  test("on user text and image parts, and on system parts (the system prompt then becomes blocks)", () => {
    const req: ChatRequest = {
      model: "m",
      messages: [
        { role: "system", content: [{ type: "text", text: "Long rules", cache_control: EPH }] },
        { role: "system", content: "More rules" },
        {
          role: "user",
          content: [
            {
              type: "image_url",
              image_url: { url: "https://x.example/a.png" },
              cache_control: { type: "ephemeral", ttl: "1h" },
            },
            { type: "text", text: "What is this?", cache_control: EPH },
          ],
        },
      ],
    };
    const { request, warnings } = convertChatRequestToMessages(req, { defaultMaxTokens: 1024 });
    expect(request.system).toEqual([
      { type: "text", text: "Long rules", cache_control: EPH },
      { type: "text", text: "More rules" },
    ]);
    expect(request.messages).toEqual([
      {
        role: "user",
        content: [
          {
            type: "image",
            source: { type: "url", url: "https://x.example/a.png" },
            cache_control: { type: "ephemeral", ttl: "1h" },
          },
          { type: "text", text: "What is this?", cache_control: EPH },
        ],
      },
    ]);
    expect(warnings).toEqual([]);
  });

  test("without any breakpoint the system prompt stays one string", () => {
    const { request } = convertChatRequestToMessages(
      {
        model: "m",
        messages: [
          { role: "system", content: "A" },
          { role: "system", content: "B" },
          { role: "user", content: "Hi" },
        ],
      },
      { defaultMaxTokens: 1024 },
    );
    expect(request.system).toBe("A\n\nB");
  });
});
