import { describe, expect, test } from "bun:test";
import type { CatalogEntry } from "../vocabulary/target";
import { UsageTally } from "./usage-tally";

/** One token per word: easy to predict. */
const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
const ZERO = {
  input_tokens: 0,
  output_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  reasoning_tokens: 0,
};
const never = () => {
  throw new Error("the prompt must not be counted here");
};

describe("UsageTally.report", () => {
  test("fields overwrite one by one; absent fields stand", () => {
    const t = new UsageTally();
    t.report({ input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 4 }, false);
    t.report({ output_tokens: 7 }, false);
    expect(t.usage).toEqual({
      input_tokens: 10,
      output_tokens: 7,
      cache_read_input_tokens: 4,
      cache_creation_input_tokens: 0,
      reasoning_tokens: 0,
    });
    expect(t.final).toBe(false);
  });

  test("a number that cannot be true (NaN, infinite, negative, fractional, beyond the model) discards the upstream's usage: Turnpike counts, flagged estimated", () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, -5, 2.5, 1e15]) {
      const t = new UsageTally(264_000);
      t.report({ input_tokens: 10, output_tokens: 1 }, false);
      t.report({ input_tokens: bad, output_tokens: 7 }, true);
      // Later reports are not believed either.
      t.report({ input_tokens: 10, output_tokens: 7 }, true);
      expect(t.usage).toMatchObject({
        input_tokens: 0,
        output_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
        reasoning_tokens: 0,
      });
      expect(t.final).toBe(false);
      t.relayed("some text");
      const { counts, estimated } = t.settle(
        () => 3,
        () => 42,
      );
      expect(counts).toMatchObject({
        input_tokens: 42,
        output_tokens: 3,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
        reasoning_tokens: 0,
      });
      expect(estimated).toBe(true);
    }
  });

  test("closing numbers without an output count (a wrongly shaped usage) are not taken as closing", () => {
    const t = new UsageTally(264_000);
    t.report({ input_tokens: 12 }, true);
    expect(t.final).toBe(false);
    t.relayed("Hello");
    expect(
      t.settle(
        () => 2,
        () => 99,
      ),
    ).toMatchObject({ counts: { input_tokens: 12, output_tokens: 2 }, estimated: true });
  });

  test("inputs that add up beyond the model's window are not believed either", () => {
    const t = new UsageTally(1000);
    t.report({ input_tokens: 600, cache_read_input_tokens: 600, output_tokens: 1 }, true);
    expect(t.final).toBe(false);
    expect(
      t.settle(
        () => 0,
        () => 9,
      ).estimated,
    ).toBe(true);
  });

  test("final is sticky once reported", () => {
    const t = new UsageTally();
    t.report({ output_tokens: 3 }, true);
    t.report({ output_tokens: 4 }, false);
    expect(t.final).toBe(true);
    expect(t.usage.output_tokens).toBe(4);
  });

  test("relayed text: pieces in order, then the late sources", () => {
    const t = new UsageTally();
    t.relayedLater(() => " later");
    t.relayed("one");
    t.relayed(" two");
    expect(t.relayedText()).toBe("one two later");
  });
});

describe("UsageTally.settle", () => {
  test("the upstream's closing numbers are billed as they are, and nothing is counted", () => {
    const t = new UsageTally();
    let read = 0;
    t.report({ input_tokens: 20, output_tokens: 2 }, true);
    t.relayed("many many words that say more than two tokens");
    t.relayedLater(() => {
      read++;
      return "x";
    });
    expect(t.settle(words, never)).toEqual({
      counts: {
        input_tokens: 20,
        output_tokens: 2,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
        reasoning_tokens: 0,
      },
      estimated: false,
    });
    expect(read).toBe(0);
  });

  test("without them: the relayed text is counted if it says more, and the prompt if nothing reported input", () => {
    const t = new UsageTally();
    t.relayed("five words reached the client");
    expect(t.settle(words, () => 42)).toEqual({
      counts: {
        input_tokens: 42,
        output_tokens: 5,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
        reasoning_tokens: 0,
      },
      estimated: true,
    });
  });

  test("a reported input side stands (cache reads count as reported input)", () => {
    const t = new UsageTally();
    t.report({ cache_read_input_tokens: 9 }, false);
    t.relayed("two words");
    const s = t.settle(words, never);
    expect(s.counts.input_tokens).toBe(0);
    expect(s.counts.cache_read_input_tokens).toBe(9);
    expect(s.counts.output_tokens).toBe(2);
    expect(s.estimated).toBe(true);
  });

  test("a placeholder that already says more than the text is kept, and not flagged", () => {
    const t = new UsageTally();
    t.report({ input_tokens: 3, output_tokens: 10 }, false);
    t.relayed("two words");
    expect(t.settle(words, never)).toEqual({
      counts: {
        input_tokens: 3,
        output_tokens: 10,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
        reasoning_tokens: 0,
      },
      estimated: false,
    });
  });

  test("nothing at all: zero output, and an empty prompt count is not an estimate", () => {
    const t = new UsageTally();
    expect(t.settle(words, () => 0)).toEqual({
      counts: {
        input_tokens: 0,
        output_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
        reasoning_tokens: 0,
      },
      estimated: false,
    });
  });

  test("settle does not change the tally", () => {
    const t = new UsageTally();
    t.relayed("three little words");
    t.settle(words, () => 5);
    expect(t.usage.output_tokens).toBe(0);
    expect(t.usage.input_tokens).toBe(0);
  });
});

describe("UsageTally.carry (a stream continued after a cut)", () => {
  const beta = { id: "beta-5" } as CatalogEntry; // only its identity is kept by the tally

  test("each attempt settled on its own and kept with what served it; settle sums them", () => {
    const t = new UsageTally();
    t.report({ input_tokens: 40, output_tokens: 1 }, false);
    t.relayed("one two three");
    // The cut attempt: its input as reported, its output counted from what it relayed.
    expect(t.carry(words, never)).toEqual({ ...ZERO, input_tokens: 40, output_tokens: 3 });
    t.servedBy(beta, "priority");
    t.report({ input_tokens: 50, output_tokens: 6 }, true);
    const { counts, estimated, attempts } = t.settle(words, never);
    expect(counts).toEqual({ ...ZERO, input_tokens: 90, output_tokens: 9 });
    expect(estimated).toBe(true);
    expect(attempts).toEqual([
      { counts: { ...ZERO, input_tokens: 40, output_tokens: 3 }, server: undefined },
      { counts: { ...ZERO, input_tokens: 50, output_tokens: 6 }, server: { entry: beta, serviceTier: "priority" } },
    ]);
    expect(t.carriedUsage).toEqual({ ...ZERO, input_tokens: 40, output_tokens: 3 });
  });

  test("carried and never continued: the carried attempts only, the prompt not counted a second time", () => {
    const t = new UsageTally();
    t.relayed("one two");
    // Nothing reported: the first attempt's prompt is counted once, at the carry.
    t.carry(words, () => 25);
    const { counts, attempts } = t.settle(words, () => 25);
    expect(counts).toEqual({ ...ZERO, input_tokens: 25, output_tokens: 2 });
    expect(attempts).toHaveLength(1);
  });

  test("a tally never cut settles with no attempts (one price for the request)", () => {
    const t = new UsageTally();
    t.report({ input_tokens: 5, output_tokens: 2 }, true);
    expect(t.settle(never, never)).toEqual({
      counts: { ...ZERO, input_tokens: 5, output_tokens: 2 },
      estimated: false,
    });
  });
});
