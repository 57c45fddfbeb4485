/**
 * Continuation, as a table: every client format × every upstream protocol, each stream cut after
 * three text deltas (the four kinds of cut rotate over the cells: reset, idle deadline, in-band
 * error, an end without the terminal event). A continued cell's client reads exactly the reply an
 * uncut stream of the same content gives (ids aside, checked by each format's own reader: one id,
 * indexes in order, one terminal event), its usage is the sum of both attempts, and its ledger
 * row says `attempts: 2, continuations: 1` — passthroughs included (Responses → Responses and
 * generateContent → generateContent go on in the upstream's own ids: passthrough.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Harness } from "../harness";
import { withoutIds } from "../conformance/outcome";
import type { TableClient } from "../conformance/upstreams";
import { bodyOf, stream } from "./cells";
import { credentialOf, gateway, PROMPT, PROTOCOL_UPSTREAMS, rowOf, WORDS } from "./setup";

const CLIENTS: readonly TableClient[] = ["messages", "chat", "responses", "generate"];
const KINDS = ["reset", "idle", "error", "truncate"] as const;

let h: Harness;
beforeAll(async () => {
  h = await gateway();
});
afterAll(() => h.close());

const content = (o: Parameters<typeof withoutIds>[0]) => {
  const { usage: _usage, ...rest } = withoutIds(o);
  return rest;
};

describe("cut after three text deltas, continued on the same deployment", () => {
  CLIENTS.forEach((client, ci) => {
    PROTOCOL_UPSTREAMS.forEach((up, ui) => {
      const kind = KINDS[(ci + ui) % KINDS.length]!;
      test(`${client} client × ${up.label} upstream, ${kind}`, async () => {
        const body = bodyOf(client, up.model, PROMPT);
        const whole = await stream(h, client, body, up.model);
        expect(whole.outcome.text).toBe(WORDS);
        h.gw.simulator!.fault(credentialOf(up), { cut_after: 3, cut: kind, times: 1 });
        const cut = await stream(h, client, body, up.model);
        const row = await rowOf(h, cut.res);
        expect(cut.error).toBeUndefined();
        expect(content(cut.outcome)).toEqual(content(whole.outcome));
        expect(row.status).toBe(200);
        expect(row.attempts).toBe(2);
        expect(row.continuations).toBe(1);
        // Two prompts were read and the words were written once (the cut part counted from what was relayed).
        expect(row.input_tokens).toBeGreaterThan(whole.outcome.usage.input);
        expect(row.output_tokens).toBeGreaterThanOrEqual(whole.outcome.usage.output);
        // The client is told the sum of both attempts, as the ledger bills it.
        expect(cut.outcome.usage.output).toBe(row.output_tokens);
      });
    });
  });
});
