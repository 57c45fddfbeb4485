/**
 * Continuation under guardrails (DESIGN §11: one span of what the client received, shared by the
 * restorer and the continuation): the partial reply goes to the next upstream in its redacted
 * form, never with the client's own value, and text the restorer held back when the stream was
 * cut is written once — by the continuation — not twice.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Harness } from "../harness";
import { routedGateway } from "../routing/setup";
import { ALPHA, BETA } from "../conformance/upstreams";
import { bodyOf, stream } from "./cells";
import { credentialOf, rowOf } from "./setup";

const EMAIL = "dana.smith@example.com";
// Long enough that part of it is out before the cut, with the reply policy's hold-back in the way.
const WORDS =
  `Write to ${EMAIL} about the stream that was cut, and keep every word in order, with nothing repeated, ` +
  "nothing lost, and nothing held back by a policy shown twice when the rest of the reply comes from another attempt.";

let h: Harness;
beforeAll(async () => {
  h = await routedGateway(`
guardrails:
  default: [pii, reply-words]
  policies:
    pii: { detect: [email], action: redact }
    reply-words: { words: [Zephyrine], action: mask, apply_to: [reply] }
routing:
  continuation: true
  timeouts: { idle_ms: 300 }
  breaker: { failures: 1000, cooldown_s: 30 }
`);
});
afterAll(() => h.close());

for (const [client, up, model] of [
  ["messages", ALPHA, "alpha-haiku-4-5"],
  ["chat", BETA, "beta-5"],
] as const) {
  test(`${client} on ${up.label}: cut after six deltas, continued; the value stays home, no text twice`, async () => {
    const prompt = `Tell me. [sim chunks=10 text="${WORDS}"]`;
    h.gw.simulator!.fault(credentialOf(up), { cut_after: 6, cut: "reset", times: 1 });
    const from = h.gw.simulator!.requests.length;
    const cut = await stream(h, client, bodyOf(client, model, prompt), model);
    expect(cut.error).toBeUndefined();
    // The client reads its own value back, and every word exactly once.
    expect(cut.outcome.text).toBe(WORDS);
    const sent = h.gw.simulator!.requests.slice(from);
    expect(sent).toHaveLength(2);
    // Neither attempt carried the value: the continuation's partial reply went redacted too.
    for (const r of sent) expect(JSON.stringify(r.body)).not.toContain(EMAIL);
    expect(JSON.stringify(sent[1]!.body)).toContain("[EMAIL_1]");
    const row = await rowOf(h, cut.res);
    expect(row.continuations).toBe(1);
    expect(row.attempts).toBe(2);
  });
}
