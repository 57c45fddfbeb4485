import { describe, expect, test } from "bun:test";
import type { MessagesStreamEvent } from "@turnpike/schema";
import { parseGuardrails } from "./policy";
import { GuardrailRun } from "./run";
import { REPLY_LOOKBACK, restoreMessage, StreamRestorer } from "./pivot";

// The `reply` surface: what the model writes is read by the policies that apply to replies, in a
// JSON reply and in a stream cut anywhere; this request's own values restored are never flagged.

function run(raw: Record<string, unknown>): GuardrailRun {
  const problems: string[] = [];
  const g = parseGuardrails({ policies: raw }, problems);
  expect(problems).toEqual([]);
  return new GuardrailRun([...g.policies.values()]);
}

const KEY = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----";

/** `text` cut into text deltas at `cuts`, through a restorer; the deltas' text joined, and the events. */
function stream(r: GuardrailRun, text: string, cuts: number[]) {
  const s = new StreamRestorer(r);
  const out: MessagesStreamEvent[] = [];
  let at = 0;
  for (const c of [...cuts, text.length]) {
    s.push({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: text.slice(at, c) } }, (e) =>
      out.push(e),
    );
    at = c;
  }
  s.push({ type: "content_block_stop", index: 0 }, (e) => out.push(e));
  s.push({ type: "message_stop" }, (e) => out.push(e));
  const joined = out
    .filter((e) => e.type === "content_block_delta")
    .map((e) => (e.delta as { text: string }).text)
    .join("");
  return { joined, out };
}

describe("what the model writes", () => {
  const reply = `Sure, [EMAIL_1]. I also wrote to bo@example.org, charged 5555 5555 5555 4444 and kept ${KEY} for you.`;
  const masked = "Sure, dana@example.com. I also wrote to [EMAIL], charged [CARD] and kept [SECRET] for you.";
  const fresh = () => {
    const r = run({ pii: { detect: ["email", "card", "secret"], action: "redact" } });
    expect(r.text("I am dana@example.com", "prompt")).toBe("I am [EMAIL_1]");
    return r;
  };

  test("a JSON reply: new values masked (redact acts as mask), the request's own value restored and not flagged", () => {
    const r = fresh();
    const out = restoreMessage(r, { content: [{ type: "text", text: reply }] });
    expect(out.content).toEqual([{ type: "text", text: masked }]);
    // The prompt's email once, the reply's email, card and key once each.
    expect(
      r
        .summary()!
        .counts.map((c) => `${c.category} ${c.n}`)
        .sort(),
    ).toEqual(["card 1", "email 2", "secret 1"]);
  });

  test("a stream cut anywhere, once or twice: every value read whole, the same text as the JSON reply", () => {
    for (let i = 0; i <= reply.length; i++) {
      expect(stream(fresh(), reply, [i]).joined).toBe(masked);
      for (let j = i; j <= reply.length; j += 11) expect(stream(fresh(), reply, [i, j]).joined).toBe(masked);
    }
    // Cut into single characters: counted once each, as in the JSON reply.
    const r = fresh();
    expect(
      stream(
        r,
        reply,
        [...reply].map((_, i) => i),
      ).joined,
    ).toBe(masked);
    expect(r.summary()!.counts.reduce((a, c) => a + c.n, 0)).toBe(4);
  });

  test("text is held back a bounded way: a long reply is sent before it ends", () => {
    const r = fresh();
    const s = new StreamRestorer(r);
    const sent: string[] = [];
    const words = "word ".repeat(40);
    s.push({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: words } }, (e) =>
      sent.push((e as { delta: { text: string } }).delta.text),
    );
    expect(sent.join("").length).toBeGreaterThanOrEqual(words.length - REPLY_LOOKBACK - 5);
  });

  test("block: a JSON reply throws naming the reply; a stream ends its text with the notice, nothing after", () => {
    const block = () => run({ s: { detect: ["secret"], action: "block", apply_to: ["reply"] } });
    const text = "Here it is: sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345 and more text that must not follow.";
    expect(() => restoreMessage(block(), { content: [{ type: "text", text }] })).toThrow(
      'blocked by guardrail policy "s": the reply holds a value of category "secret"',
    );
    for (const cut of [5, 20, 40, 70]) {
      const { joined, out } = stream(block(), text, [cut]);
      expect(joined).not.toContain("sk-ant");
      expect(joined).not.toContain("must not follow");
      expect(joined).toEndWith('[blocked by guardrail policy "s": the reply holds a value of category "secret"]');
      expect(out.slice(-2)).toEqual([{ type: "content_block_stop", index: 0 }, { type: "message_stop" }]);
    }
  });

  test("log counts and changes nothing; a policy on prompts only does not read the reply", () => {
    const log = run({ l: { detect: ["email"], action: "log" } });
    expect(stream(log, "to bo@example.org", [4]).joined).toBe("to bo@example.org");
    expect(log.summary()!.counts).toEqual([{ policy: "l", category: "email", action: "log", dry_run: false, n: 1 }]);
    const promptOnly = run({ p: { detect: ["email"], action: "mask", apply_to: ["prompt"] } });
    expect(promptOnly.readsReply).toBe(false);
    expect(restoreMessage(promptOnly, { content: [{ type: "text", text: "to bo@example.org" }] }).content).toEqual([
      { type: "text", text: "to bo@example.org" },
    ]);
  });

  test("streamed tool arguments: a new value masked, the request's own restored, the JSON valid at every cut", () => {
    const args = `{"to":"[EMAIL_1]","cc":["bo@example.org"],"note":"${"x".repeat(150)}"}`;
    for (let i = 0; i <= args.length; i += 3) {
      const s = new StreamRestorer(fresh());
      const out: string[] = [];
      const collect = (e: MessagesStreamEvent) => {
        if (e.type === "content_block_delta") out.push((e.delta as { partial_json: string }).partial_json);
      };
      const push = (partial_json: string) =>
        s.push({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json } }, collect);
      push(args.slice(0, i));
      push(args.slice(i));
      s.push({ type: "content_block_stop", index: 1 }, collect);
      expect(JSON.parse(out.join(""))).toEqual({ to: "dana@example.com", cc: ["[EMAIL]"], note: "x".repeat(150) });
    }
  });
});
