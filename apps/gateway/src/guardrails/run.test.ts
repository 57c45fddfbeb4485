import { describe, expect, test } from "bun:test";
import type { MessagesStreamEvent } from "@turnpike/schema";
import { parseGuardrails } from "./policy";
import { GuardrailRun } from "./run";
import { redactRequest, restoreMessage, StreamRestorer } from "./pivot";

function policies(raw: unknown) {
  const problems: string[] = [];
  const g = parseGuardrails(raw, problems);
  expect(problems).toEqual([]);
  return [...g.policies.values()];
}

const PII = policies({
  policies: { pii: { detect: ["email", "card", "phone"], patterns: { home: "C:\\\\Users\\\\[a-z]+" } } },
});

describe("redact and restore", () => {
  test("the same value gets the same placeholder; the reply gets the values back", () => {
    const run = new GuardrailRun(PII);
    const a = run.text("Mail dana@example.com or bo@example.org", "prompt");
    const b = run.text("again dana@example.com, card 4111 1111 1111 1111", "prompt");
    expect(a).toBe("Mail [EMAIL_1] or [EMAIL_2]");
    expect(b).toBe("again [EMAIL_1], card [CARD_1]");
    expect(run.restoreText("Wrote to [EMAIL_2] and [EMAIL_1]; [EMAIL_9] stays")).toBe(
      "Wrote to bo@example.org and dana@example.com; [EMAIL_9] stays",
    );
    expect(run.summary()).toMatchObject({ policies: ["pii"], categories: ["email", "card"], action: "redact" });
  });

  test("mask replaces for good; block refuses naming the category; log and dry runs change nothing", () => {
    const mask = new GuardrailRun(policies({ policies: { m: { detect: ["email"], action: "mask" } } }));
    expect(mask.text("to dana@example.com", "prompt")).toBe("to [EMAIL]");
    expect(mask.restore.size).toBe(0);
    const block = new GuardrailRun(policies({ policies: { s: { detect: ["secret"], action: "block" } } }));
    expect(() => block.text("key sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345", "prompt")).toThrow(
      'blocked by guardrail policy "s": the request holds a value of category "secret"',
    );
    const log = new GuardrailRun(policies({ policies: { l: { detect: ["email"], action: "log" } } }));
    expect(log.text("to dana@example.com", "prompt")).toBe("to dana@example.com");
    expect(log.summary()).toMatchObject({ action: "log", dry_run: false });
    const dry = new GuardrailRun(policies({ policies: { d: { detect: ["email"], action: "block", dry_run: true } } }));
    expect(dry.text("to dana@example.com", "prompt")).toBe("to dana@example.com");
    expect(dry.summary()).toMatchObject({ action: "block", dry_run: true, categories: ["email"] });
  });

  test("a policy looks only where it applies", () => {
    const run = new GuardrailRun(policies({ policies: { p: { detect: ["email"], apply_to: ["tools"] } } }));
    expect(run.text("to dana@example.com", "prompt")).toBe("to dana@example.com");
    expect(run.text("to dana@example.com", "tools")).toBe("to [EMAIL_1]");
  });

  test("the pivot request: system, messages, tool calls and results redacted; signed thinking and images kept", () => {
    const run = new GuardrailRun(PII);
    const thinking = { type: "thinking", thinking: "dana@example.com", signature: "sig" };
    const image = { type: "image", source: { type: "url", url: "https://x.example/dana@example.com.png" } };
    const out = redactRequest(run, {
      model: "m",
      max_tokens: 10,
      system: "Support for dana@example.com",
      tools: [{ name: "mail", description: "Mails bo@example.org", input_schema: { type: "object" } }],
      messages: [
        { role: "user", content: [{ type: "text", text: "I am dana@example.com" }, image] },
        {
          role: "assistant",
          content: [thinking, { type: "tool_use", id: "t1", name: "mail", input: { to: ["dana@example.com"], n: 1 } }],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "sent to dana@example.com" }] },
      ],
    } as never);
    expect(out).toEqual({
      model: "m",
      max_tokens: 10,
      system: "Support for [EMAIL_1]",
      tools: [{ name: "mail", description: "Mails [EMAIL_2]", input_schema: { type: "object" } }],
      messages: [
        { role: "user", content: [{ type: "text", text: "I am [EMAIL_1]" }, image] },
        {
          role: "assistant",
          content: [thinking, { type: "tool_use", id: "t1", name: "mail", input: { to: ["[EMAIL_1]"], n: 1 } }],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "sent to [EMAIL_1]" }] },
      ],
    } as never);
    expect(
      restoreMessage(run, {
        content: [
          { type: "text", text: "Done, [EMAIL_1]." },
          { type: "tool_use", id: "t2", name: "mail", input: { to: "[EMAIL_2]" } },
        ],
      }),
    ).toEqual({
      content: [
        { type: "text", text: "Done, dana@example.com." },
        { type: "tool_use", id: "t2", name: "mail", input: { to: "bo@example.org" } },
      ],
    });
  });
});

describe("restoring a stream", () => {
  const run = new GuardrailRun(PII);
  run.text("dana@example.com, C:\\Users\\dana and 4111 1111 1111 1111", "prompt");
  const reply = "Hi [EMAIL_1]! Your card [CARD_1] and [HOME_1]; [NOT_1] and [ stay.";
  const args = '{"to":"[HOME_1]","cc":["[EMAIL_1]"]}';

  /** The reply cut into deltas at the given offsets, through the restorer; what the client gets, joined. */
  function through(text: string, cuts: number[], type: "text_delta" | "input_json_delta") {
    const r = new StreamRestorer(run);
    const out: MessagesStreamEvent[] = [];
    const field = type === "text_delta" ? "text" : "partial_json";
    let at = 0;
    for (const c of [...cuts, text.length]) {
      r.push({ type: "content_block_delta", index: 0, delta: { type, [field]: text.slice(at, c) } } as never, (e) =>
        out.push(e),
      );
      at = c;
    }
    r.push({ type: "content_block_stop", index: 0 }, (e) => out.push(e));
    expect(out.at(-1)).toEqual({ type: "content_block_stop", index: 0 });
    return out
      .filter((e) => e.type === "content_block_delta")
      .map((e) => (e.delta as Record<string, string>)[field])
      .join("");
  }

  test("every cut of the text, one and two at a time, gives the restored reply", () => {
    const want = "Hi dana@example.com! Your card 4111 1111 1111 1111 and C:\\Users\\dana; [NOT_1] and [ stay.";
    for (let i = 0; i <= reply.length; i++) {
      expect(through(reply, [i], "text_delta")).toBe(want);
      for (let j = i; j <= reply.length; j += 3) expect(through(reply, [i, j], "text_delta")).toBe(want);
    }
  });

  test("tool arguments are restored with the value escaped for JSON, so they parse", () => {
    for (let i = 0; i <= args.length; i++) {
      const json = through(args, [i], "input_json_delta");
      expect(JSON.parse(json)).toEqual({ to: "C:\\Users\\dana", cc: ["dana@example.com"] });
    }
  });
});
