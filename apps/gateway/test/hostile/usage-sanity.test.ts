import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_KEY, type Harness } from "../harness";
import { type BadUpstream, clientCall, recordsOf, startBadUpstream, startBadUpstreamGateway } from "./bad-upstream";
import { chatReply, chatStream, messagesReply, messagesStream } from "./replies";

// Issue 11, item 4: upstream usage is checked before it is billed. A negative count once wrote a
// −$6.00 record that lowered the key's monthly spend, and 1e15 tokens a $6,000,000,000 one; now
// such numbers are never stored: the record falls back to Turnpike's own count, flagged estimated.

let bad: BadUpstream;
let h: Harness;
beforeAll(async () => {
  bad = startBadUpstream();
  h = await startBadUpstreamGateway(bad);
});
afterAll(async () => {
  await h.close();
  bad.stop();
});

const spent = async () => {
  const res = await fetch(`${h.url}/admin/keys/${h.keyId}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  return ((await res.json()) as any).spent_this_month_usd as number;
};

/** The record is Turnpike's own count: a prompt of a few tokens, an answer of a few, cents at most. */
async function expectOwnCount(res: Response) {
  expect(res.status).toBe(200);
  await res.text();
  const records = await recordsOf(h, res.headers.get("x-request-id"));
  expect(records).toHaveLength(1);
  const r = records[0]!;
  expect(r.estimated).toBe(true);
  expect(r.input_tokens).toBeGreaterThan(0);
  expect(r.input_tokens).toBeLessThan(50);
  expect(r.output_tokens).toBeGreaterThan(0);
  expect(r.output_tokens).toBeLessThan(50);
  expect(r.cost_usd).toBeGreaterThan(0);
  expect(r.cost_usd).toBeLessThan(0.001);
  return r;
}

const BAD_MESSAGES_USAGE: Record<string, unknown> = {
  negative: { input_tokens: -1_000_000, output_tokens: 5 },
  "1e15 tokens": { input_tokens: 12, output_tokens: 1e15 },
  "non-integer": { input_tokens: 12.5, output_tokens: 5 },
  "beyond the window plus the output cap": { input_tokens: 200_000, output_tokens: 64_001 },
  "a string": "lots",
  "numbers as strings": { input_tokens: "12", output_tokens: "5" },
};

const BAD_CHAT_USAGE: Record<string, unknown> = {
  negative: { prompt_tokens: -1_000_000, completion_tokens: 5, total_tokens: 5 },
  "1e15 tokens": { prompt_tokens: 12, completion_tokens: 1e15, total_tokens: 1e15 },
  "an array": [1, 2, 3],
};

describe("absurd usage from the upstream is never billed as such", () => {
  for (const [what, usage] of Object.entries(BAD_MESSAGES_USAGE)) {
    test(`messages upstream, JSON, passthrough and translated: ${what}`, async () => {
      for (const format of ["messages", "chat"] as const) {
        bad.script({ type: "application/json", body: messagesReply(usage, "Hello there, how are you today?") });
        await expectOwnCount(await clientCall(h, format, "alpha-haiku-4-5", false));
      }
    });
  }

  for (const [what, usage] of Object.entries(BAD_CHAT_USAGE)) {
    test(`chat upstream, JSON and stream: ${what}`, async () => {
      for (const format of ["messages", "chat"] as const) {
        bad.script({ type: "application/json", body: chatReply(usage, "Hello there, how are you today?") });
        await expectOwnCount(await clientCall(h, format, "beta-5", false));
        bad.script({ type: "text/event-stream", body: chatStream({ usage, text: "Hello there, how are you today?" }) });
        await expectOwnCount(await clientCall(h, format, "beta-5", true));
      }
    });
  }

  test("messages upstream stream: a negative input in message_start, 1e15 output in message_delta", async () => {
    for (const format of ["messages", "chat"] as const) {
      bad.script({
        type: "text/event-stream",
        body: messagesStream({ input: -5_000_000, text: "Hello there, how are you today?" }),
      });
      await expectOwnCount(await clientCall(h, format, "alpha-haiku-4-5", true));
      bad.script({
        type: "text/event-stream",
        body: messagesStream({ output: 1e15, text: "Hello there, how are you today?" }),
      });
      await expectOwnCount(await clientCall(h, format, "alpha-haiku-4-5", true));
    }
  });

  test("the key's monthly spend only ever grows, and stays in cents", async () => {
    const before = await spent();
    bad.script({ type: "application/json", body: messagesReply({ input_tokens: -1_200_000, output_tokens: 0 }) });
    await (await clientCall(h, "messages", "alpha-haiku-4-5", false)).text();
    bad.script({ type: "application/json", body: messagesReply({ input_tokens: 1e15, output_tokens: 1e15 }) });
    await (await clientCall(h, "messages", "alpha-haiku-4-5", false)).text();
    await h.gw.deps.ledger.flush();
    const after = await spent();
    expect(after).toBeGreaterThan(before);
    expect(after - before).toBeLessThan(0.001);
  });

  test("sane usage is billed as the upstream reported it", async () => {
    bad.script({ type: "application/json", body: messagesReply({ input_tokens: 1000, output_tokens: 2000 }) });
    const res = await clientCall(h, "messages", "alpha-haiku-4-5", false);
    await res.text();
    const [r] = await recordsOf(h, res.headers.get("x-request-id"));
    expect(r).toMatchObject({ input_tokens: 1000, output_tokens: 2000, estimated: false });
    expect(r!.cost_usd).toBeCloseTo((1000 * 1 + 2000 * 5) / 1e6, 12);
  });
});
