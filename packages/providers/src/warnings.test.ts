import { describe, expect, test } from "bun:test";
import { convertChatRequestToMessages } from "./chat/convert-chat-request-to-messages.js";
import { headerSafe, Warnings } from "./warnings.js";

describe("warnings are valid header values", () => {
  test("typographic characters become ASCII; anything else outside printable ASCII is spelled out", () => {
    expect(headerSafe("accepts 0–1, top_p ≥ 0.95")).toBe("accepts 0-1, top_p >= 0.95");
    expect(headerSafe('tool "東京"\n')).toBe('tool "\\u{6771}\\u{4eac}"\\u{a}');
  });

  test("a warning can always be sent with Headers.append", () => {
    const w = new Warnings();
    w.add("messages[0].name", "the name “Zoë → 東京” is not carried");
    const h = new Headers();
    for (const x of w.list) h.append("x-turnpike-warning", `${x.param}: ${x.message}`);
    expect(h.get("x-turnpike-warning")).toBe(
      'messages[0].name: the name "Zo\\u{eb} -> \\u{6771}\\u{4eac}" is not carried',
    );
  });

  test("the temperature clamp (chat → messages upstream) is one of them", () => {
    const r = convertChatRequestToMessages(
      { model: "m", temperature: 1.5, messages: [{ role: "user", content: "hi" }] },
      { defaultMaxTokens: 100 },
    );
    expect(r.request.temperature).toBe(1);
    const h = new Headers();
    for (const x of r.warnings) h.append("x-turnpike-warning", `${x.param}: ${x.message}`);
    expect(h.get("x-turnpike-warning")).toBe("temperature: clamped from 1.5 to 1 (this upstream accepts 0-1)");
  });
});
