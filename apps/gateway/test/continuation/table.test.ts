/**
 * Continuation, as a table: every client format × every upstream protocol, each stream cut after
 * three text deltas (the four kinds of cut rotate over the cells: reset, idle deadline, in-band
 * error, an end without the terminal event). A continued cell's client reads exactly the reply an
 * uncut stream of the same content gives (ids aside, checked by each format's own reader: one id,
 * indexes in order, one terminal event), its usage is the sum of both attempts, and its ledger
 * row says `attempts: 2, continuations: 1`. A passthrough the gateway cannot go on with
 * (Responses → Responses, generateContent → generateContent) ends with the in-band error, as
 * documented. Then one continuation on each protocol from another (the cut deployment's circuit
 * open: the fallback goes on).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Harness } from "../harness";
import { withoutIds } from "../conformance/outcome";
import { ALPHA, BETA, EPSILON, GAMMA, type TableClient, type Upstream } from "../conformance/upstreams";
import { bodyOf, stream } from "./cells";
import { credentialOf, gateway, PROMPT, PROTOCOL_UPSTREAMS, rowOf, WORDS } from "./setup";

const CLIENTS: readonly TableClient[] = ["messages", "chat", "responses", "generate"];
const KINDS = ["reset", "idle", "error", "truncate"] as const;
/** The client format whose passthrough has the upstream's own ids all through (not continued). */
const NOT_CONTINUED: Partial<Record<TableClient, Upstream["protocol"]>> = {
  responses: "responses",
  generate: "generate",
};

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
        const passthrough = NOT_CONTINUED[client] === up.protocol;
        const cut = await stream(h, client, body, up.model, passthrough);
        const row = await rowOf(h, cut.res);
        if (passthrough) {
          // The documented ending: the in-band error, as before continuation existed.
          expect(cut.frames.at(-1)!.data).toContain("error");
          expect(row.status).toBe(502);
          expect(row.continuations).toBe(0);
          return;
        }
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
