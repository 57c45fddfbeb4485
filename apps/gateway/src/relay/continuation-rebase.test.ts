import { describe, expect, test } from "bun:test";
import type { MessagesStreamEvent } from "@turnpike/schema";
import { ContinuationRebase, overlapOf } from "./continuation-rebase";
import { StreamSpan } from "./stream-span";

const ZERO = {
  input_tokens: 0,
  output_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  reasoning_tokens: 0,
};

describe("overlapOf: the start of a continuation that repeats what was received", () => {
  test("a restated end is found; a short coincidence is not; an undecided start waits", () => {
    expect(overlapOf("The cat sat on the mat", " sat on the mat and purred", true)).toBe(" sat on the mat".length);
    expect(overlapOf("It was a", "a dog", true)).toBe(0);
    expect(overlapOf("It was a sunny day", " sunny", false)).toBeUndefined();
    expect(overlapOf("Hi", "Hi there", true)).toBe(2); // the whole partial, however short
  });
});

describe("ContinuationRebase", () => {
  test("joins the open text block, drops the repeat and the start, numbers later blocks on, sums usage", () => {
    const span = new StreamSpan();
    span.see({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    span.see({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "One two three four" } });
    const rebase = new ContinuationRebase(
      span,
      () => ({ ...ZERO, input_tokens: 10, output_tokens: 4 }),
      () => ({ ...ZERO, input_tokens: 14, output_tokens: 3 }),
      false,
    );
    const out: MessagesStreamEvent[] = [];
    const emit = (ev: MessagesStreamEvent) => out.push(ev);
    const evs = [
      { type: "message_start", message: { id: "msg_2" } },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: " two three four" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: " five" } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "t", name: "f", input: {} } },
      { type: "content_block_stop", index: 1 },
      { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 3 } },
      { type: "message_stop" },
    ] as unknown as MessagesStreamEvent[]; // partial events: only the fields the rebase reads
    for (const ev of evs) rebase.push(ev, emit);
    // The held start is released as one delta once it is known to repeat the received text.
    expect(out.map((e) => [e.type, "index" in e ? e.index : undefined])).toEqual([
      ["content_block_delta", 0],
      ["content_block_stop", 0],
      ["content_block_start", 1],
      ["content_block_stop", 1],
      ["message_delta", undefined],
      ["message_stop", undefined],
    ]);
    const text = out
      .filter((e) => e.type === "content_block_delta")
      .map((e) => (e.type === "content_block_delta" && "text" in e.delta ? e.delta.text : ""))
      .join("");
    expect(text).toBe(" five");
    const delta = out.find((e) => e.type === "message_delta");
    expect(delta?.type === "message_delta" && delta.usage).toMatchObject({ input_tokens: 24, output_tokens: 7 });
  });
});
