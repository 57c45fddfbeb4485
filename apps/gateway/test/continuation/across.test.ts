/**
 * Continuation beyond the table: on another protocol (the cut deployment's circuit opens, its
 * fallback goes on), the cuts it must not go on from (a tool call's arguments, a thinking block),
 * a cut after whole tool calls (the turn ends there, cleanly), `routing.continuation: false`, and
 * the official clients' stream helpers reading a continued stream.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import type { Harness } from "../harness";
import { withoutIds } from "../conformance/outcome";
import { ALPHA, BETA, EPSILON, GAMMA, type TableClient, type Upstream } from "../conformance/upstreams";
import { bodyOf, stream } from "./cells";
import { credentialOf, gateway, PROMPT, rowOf, WORDS } from "./setup";

let clock = 1_800_000_000_000;
let h: Harness;
let off: Harness;
beforeAll(async () => {
  // One failure opens a circuit: the deployment that was cut is not asked again, its fallback is.
  h = await gateway(
    `
  - { id: alpha-haiku-4-5, fallbacks: [beta-5] }
  - { id: beta-5, fallbacks: [gamma-3-flash] }
  - { id: gamma-3-flash, fallbacks: [epsilon-5] }`,
    { now: () => clock, breakerFailures: 1, epsilonFallbacks: ["alpha-haiku-4-5"] },
  );
  off = await gateway("", { continuation: false });
});
afterAll(async () => {
  await h.close();
  await off.close();
});

const content = (o: Parameters<typeof withoutIds>[0]) => {
  const { usage: _usage, ...rest } = withoutIds(o);
  return rest;
};

describe("continued on another protocol", () => {
  const CELLS: [TableClient, Upstream, string, string][] = [
    ["messages", ALPHA, "alpha-haiku-4-5", "chat"],
    ["chat", BETA, "beta-5", "generate"],
    ["responses", GAMMA, "gamma-3-flash", "responses"],
    ["generate", EPSILON, "epsilon-5", "messages"],
    // Passthroughs, continued in the vendor's ids by another protocol.
    ["responses", EPSILON, "epsilon-5", "messages"],
    ["generate", GAMMA, "gamma-3-flash", "responses"],
  ];
  for (const [client, up, model, on] of CELLS) {
    test(`${client} client, cut on ${up.label}, continued on ${on}`, async () => {
      clock += 3_600_000; // every circuit closed again
      const body = bodyOf(client, model, PROMPT);
      h.gw.simulator!.fault(credentialOf(up), { cut_after: 3, cut: "reset", times: 1 });
      const from = h.gw.simulator!.requests.length;
      const cut = await stream(h, client, body, model);
      expect(cut.error).toBeUndefined();
      expect(cut.outcome.text).toBe(WORDS);
      const sent = h.gw.simulator!.requests.slice(from);
      expect(sent).toHaveLength(2);
      const asked = JSON.stringify(sent[1]!.body);
      // The partial reply went along: as a prefill to a messages upstream, else with the ask to go on.
      expect(asked).toContain("Streams that survive");
      if (on === "messages") expect(asked).not.toContain("cut off");
      else expect(asked).toContain("Your previous reply was cut off");
      const row = await rowOf(h, cut.res);
      expect(row.continuations).toBe(1);
      expect(row.attempts).toBe(2);
    });
  }
});

describe("where a cut stream is not continued, or ends cleanly", () => {
  test("inside a tool call's arguments: the in-band error, never half the JSON as whole", async () => {
    clock += 3_600_000;
    const body = bodyOf("messages", "alpha-haiku-4-5", "Weather? [sim tools=1 chunks=8]", true);
    // The first fragment is empty (as the vendor sends it): the cut falls after the second, with half the JSON out.
    h.gw.simulator!.fault("simulator-alpha", { cut_after: 2, cut_in: "tool", cut: "reset", times: 1 });
    const cut = await stream(h, "messages", body, "alpha-haiku-4-5", true);
    const last = cut.frames.at(-1)!;
    expect(last.event).toBe("error");
    expect(cut.frames.some((f) => f.event === "content_block_stop")).toBe(false);
    const row = await rowOf(h, cut.res);
    expect(row.status).toBe(502);
    expect(row.continuations).toBe(0);
    // The cut attempt is billed: it wrote output before it broke.
    expect(row.output_tokens).toBeGreaterThan(0);
  });

  test("inside a thinking block: the in-band error, never a forged signature", async () => {
    clock += 3_600_000;
    const body = {
      ...bodyOf("messages", "alpha-haiku-4-5", "Think. [sim think chunks=8]"),
      max_tokens: 4000,
      thinking: { type: "enabled", budget_tokens: 2000 },
    };
    h.gw.simulator!.fault("simulator-alpha", { cut_after: 1, cut_in: "thinking", cut: "truncate", times: 1 });
    const cut = await stream(h, "messages", body, "alpha-haiku-4-5", true);
    expect(cut.frames.at(-1)!.event).toBe("error");
    expect(cut.frames.some((f) => f.data.includes("signature_delta"))).toBe(false);
    expect((await rowOf(h, cut.res)).continuations).toBe(0);
  });

  test("after whole tool calls: the turn ends there, with tool_use", async () => {
    clock += 3_600_000;
    const body = bodyOf("messages", "gamma-3-flash", "Weather? [sim tools=1]", true);
    const whole = await stream(h, "messages", body, "gamma-3-flash");
    h.gw.simulator!.fault("simulator-gamma", { cut_after: 1, cut_in: "tool", cut: "truncate", times: 1 });
    const cut = await stream(h, "messages", body, "gamma-3-flash");
    expect(cut.error).toBeUndefined();
    expect(cut.outcome.stop).toBe("tool_use");
    expect(content(cut.outcome)).toEqual(content(whole.outcome));
    const row = await rowOf(h, cut.res);
    expect(row.status).toBe(200);
    expect(row.continuations).toBe(0);
    // One upstream call: its prompt is billed once, as the uncut call's was.
    expect(row.input_tokens).toBe((await rowOf(h, whole.res)).input_tokens);
  });

  test("routing.continuation: false — the in-band error as before", async () => {
    off.gw.simulator!.fault("simulator-beta", { cut_after: 3, cut: "reset", times: 1 });
    const from = off.gw.simulator!.requests.length;
    const cut = await stream(off, "chat", bodyOf("chat", "beta-5", PROMPT), "beta-5");
    expect(cut.error).toBeDefined();
    expect(off.gw.simulator!.requests.length - from).toBe(1);
    const row = await rowOf(off, cut.res);
    expect(row.status).toBe(502);
    expect(row.continuations).toBe(0);
  });
});

describe("the official clients' stream helpers read a continued stream", () => {
  test("@anthropic-ai/sdk finalMessage(): the whole text, the summed usage", async () => {
    clock += 3_600_000;
    const anthropic = new Anthropic({ apiKey: h.key, baseURL: h.url, maxRetries: 0 });
    h.gw.simulator!.fault("simulator-alpha", { cut_after: 2, cut: "reset", times: 1 });
    const final = await anthropic.messages
      .stream({ model: "alpha-haiku-4-5", max_tokens: 400, messages: [{ role: "user", content: PROMPT }] })
      .finalMessage();
    expect(final.content).toHaveLength(1);
    expect(final.content[0]).toMatchObject({ type: "text", text: WORDS });
    expect(final.stop_reason).toBe("end_turn");
    expect(final.usage.output_tokens).toBeGreaterThan(0);
  });

  test("openai finalChatCompletion(): the whole text from one completion id", async () => {
    clock += 3_600_000;
    const openai = new OpenAI({ apiKey: h.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
    h.gw.simulator!.fault("simulator-beta", { cut_after: 2, cut: "error", times: 1 });
    const final = await openai.chat.completions
      .stream({
        model: "beta-5",
        messages: [{ role: "user", content: PROMPT }],
        stream_options: { include_usage: true },
      })
      .finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe(WORDS);
    expect(final.choices[0]!.finish_reason).toBe("stop");
    expect(final.id).toMatch(/^chatcmpl-/);
  });
});
