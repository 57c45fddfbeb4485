import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FORMATS, type ClientFormat } from "../formats";
import type { Target } from "../protocols";
import { passthroughBody, plan } from "./plan";
import { testDeps, type TestDeps } from "../../test/support/test-deps";
import { countTokens } from "@turnpike/providers";
import { LARGE_BODY_CHARS, loopTurns } from "../vocabulary/loop-turns";

let t: TestDeps;
beforeAll(async () => {
  t = await testDeps();
});
afterAll(() => t.close());

function target(model: string): Target {
  const entry = t.deps.catalog.get(model)!;
  return { entry, upstream: t.deps.upstreams.get(entry.owned_by)! };
}

const userTurn = [{ role: "user", content: "Tell me about the weather on the coast today, please." }];
const messagesBody = (model: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model,
  max_tokens: 50,
  messages: userTurn,
  ...extra,
});
const chatBody = (model: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model,
  messages: userTurn,
  ...extra,
});

function planFor(format: ClientFormat, body: Record<string, unknown>) {
  const client = format.validate(body);
  return plan(t.deps, format, client, target(client.model));
}

describe("passthrough (format = protocol)", () => {
  test("messages: unknown fields kept, turnpike dropped, model rewritten; the client's body is not changed", async () => {
    const body = messagesBody("alpha-sonnet-4-6 (context-1m beta)", { turnpike: { note: 1 }, vendor_field: { x: 1 } });
    const p = await planFor(FORMATS.messages, body);
    expect(p.passthrough).toBe(true);
    expect(p.protocol.id).toBe("messages");
    expect(p.body).toEqual({ model: "alpha-sonnet-4-6", max_tokens: 50, messages: userTurn, vendor_field: { x: 1 } });
    expect(body.model).toBe("alpha-sonnet-4-6 (context-1m beta)");
    expect(body.turnpike).toEqual({ note: 1 });
    expect(p.warnings).toEqual([]);
    expect(p.countAlongside).toBe(false);
    expect(p.reply.model).toBe("alpha-sonnet-4-6 (context-1m beta)");
    expect(p.reply.inputTokens).toBe(0);
    expect(p.countPrompt()).toBeGreaterThan(5);
  });

  test("chat stream: include_usage is asked of the upstream; the plan keeps what the client asked", async () => {
    const p = await planFor(FORMATS.chat, chatBody("beta-5.5", { stream: true }));
    expect(p.passthrough).toBe(true);
    expect(p.stream).toBe(true);
    expect(p.body.stream_options).toEqual({ include_usage: true });
    expect(p.includeUsage).toBe(false);
    const asked = await planFor(
      FORMATS.chat,
      chatBody("beta-5.5", { stream: true, stream_options: { include_usage: true } }),
    );
    expect(asked.includeUsage).toBe(true);
  });

  test("chat JSON: no stream options are added", async () => {
    const p = await planFor(FORMATS.chat, chatBody("delta-m3", { seed: 7 }));
    expect(p.body).toEqual({ model: "delta-m3", messages: userTurn, seed: 7 });
  });

  test("passthroughBody alone", () => {
    expect(passthroughBody({ model: "a", turnpike: {}, x: 1 }, "b")).toEqual({ x: 1, model: "b" });
  });
});

describe("translated (through the pivot)", () => {
  test("chat → generate: warnings of both conversions, in order", async () => {
    // service_tier is dropped on the way to the pivot; logit_bias by the generate converter.
    const p = await planFor(FORMATS.chat, chatBody("gamma-3-pro", { service_tier: "auto", logit_bias: { "1": 1 } }));
    expect(p.passthrough).toBe(false);
    expect(p.protocol.id).toBe("generate");
    expect(p.warnings.map((w) => w.param)).toEqual(["service_tier", "logit_bias"]);
    expect(p.body.contents).toEqual([{ role: "user", parts: [{ text: userTurn[0]!.content }] }]);
  });

  test("a stream to a protocol that tells the input only at its end is counted up front", async () => {
    const toGenerate = await planFor(FORMATS.chat, chatBody("gamma-3-flash", { stream: true }));
    const toChat = await planFor(FORMATS.messages, messagesBody("beta-5", { stream: true }));
    for (const p of [toGenerate, toChat]) {
      expect(p.reply.inputTokens).toBeGreaterThan(5);
      expect(p.reply.inputTokens).toBe(p.countPrompt());
    }
  });

  test("no up-front count for a stream to the messages protocol, nor for JSON", async () => {
    expect((await planFor(FORMATS.chat, chatBody("alpha-opus-4-8", { stream: true }))).reply.inputTokens).toBe(0);
    expect((await planFor(FORMATS.messages, messagesBody("gamma-3-pro"))).reply.inputTokens).toBe(0);
  });

  test("the reply context: the client's model id and its stop sequences", async () => {
    const p = await planFor(FORMATS.chat, chatBody("alpha-haiku-4-5", { stop: ["END"] }));
    expect(p.reply.model).toBe("alpha-haiku-4-5");
    expect(p.reply.stopSequences).toEqual(["END"]);
    expect(p.body.stop_sequences).toEqual(["END"]);
  });
});

describe("countAlongside", () => {
  test("only a messages client streaming from a generate upstream asks the upstream's count", async () => {
    const cases: [ClientFormat, Record<string, unknown>, boolean][] = [
      [FORMATS.messages, messagesBody("gamma-3-pro", { stream: true }), true],
      [FORMATS.messages, messagesBody("gamma-3-pro"), false],
      [FORMATS.chat, chatBody("gamma-3-pro", { stream: true }), false],
      // The chat protocol has no count call.
      [FORMATS.messages, messagesBody("beta-5.5", { stream: true }), false],
      [FORMATS.messages, messagesBody("alpha-opus-4-8", { stream: true }), false],
    ];
    for (const [format, body, expected] of cases)
      expect({ model: body.model, stream: body.stream, along: (await planFor(format, body)).countAlongside }).toEqual({
        model: body.model,
        stream: body.stream,
        along: expected,
      });
  });
});

describe("a large body's count, in steps", () => {
  const turns = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `turn ${i} hi` }));

  /** The plan of `body` as dispatch makes it, for a body of `size` characters, and the loop's turns its count gave. */
  async function countedInSteps(format: ClientFormat, body: Record<string, unknown>, size: number) {
    const client = format.validate(body);
    const p = await plan(t.deps, format, client, target(client.model), size);
    const before = loopTurns.given;
    const tokens = await p.countPromptInSteps();
    return { p, tokens, turns: loopTurns.given - before };
  }

  test("a passthrough: a turn of the loop before its pivot (made only to be counted) and one before its count", async () => {
    const body = chatBody("beta-5", { messages: turns(5000) });
    const size = JSON.stringify(body).length;
    expect(size).toBeGreaterThan(LARGE_BODY_CHARS);
    const large = await countedInSteps(FORMATS.chat, body, size);
    expect(large.p.passthrough).toBe(true);
    expect(large.turns).toBe(2);
    // The count of the pivot, as one piece would have made it; asked again, not made again.
    expect(large.tokens).toBe(countTokens(FORMATS.chat.validate(body).toPivot("chat").request));
    expect(large.tokens).toBeGreaterThan(5000 * 3);
    const before = loopTurns.given;
    expect(large.p.countPrompt()).toBe(large.tokens);
    expect(await large.p.countPromptInSteps()).toBe(large.tokens);
    expect(loopTurns.given).toBe(before);
    // A small body's count gives no turn.
    const small = await countedInSteps(FORMATS.chat, chatBody("beta-5"), 100);
    expect(small.turns).toBe(0);
    expect(small.tokens).toBe(countTokens(FORMATS.chat.validate(chatBody("beta-5")).toPivot("chat").request));
  });

  test("through the pivot: the plan made the pivot, the count is one step after a turn", async () => {
    const body = messagesBody("beta-5", { messages: turns(5000) });
    const size = JSON.stringify(body).length;
    const large = await countedInSteps(FORMATS.messages, body, size);
    expect(large.p.passthrough).toBe(false);
    expect(large.turns).toBe(1);
    expect(large.tokens).toBe(countTokens(FORMATS.messages.validate(body).toPivot("chat").request));
  });
});
