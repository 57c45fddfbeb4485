import { describe, expect, test } from "bun:test";
import type { MessagesStreamEvent } from "@turnpike/schema";
import { SSEDecoderStream } from "@turnpike/schema/sse";
import { fixtureChunks, run } from "../test-helpers.js";
import type { UsageTotals } from "../usage.js";
import { encodeMessagesEvents } from "./encode-messages-events.js";
import { messagesSSEToEvents } from "./messages-sse-to-events.js";

describe("messages SSE → events", () => {
  test("anthropic-text.chunks.txt: every event kept in order (ping included), usage reported", async () => {
    let billed: UsageTotals | undefined;
    const msgs = await fixtureChunks("anthropic-text.chunks.txt", { withEventLines: true });
    const events = await run(messagesSSEToEvents({ onUsage: (u) => (billed = u) }), msgs);
    expect(events.map((e) => e.type as string)).toEqual(msgs.map((m) => m.event ?? ""));
    expect(billed).toEqual({
      input_tokens: 12,
      output_tokens: 30,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
  });

  test("event: error becomes an error event and ends the stream", async () => {
    const events = await run(messagesSSEToEvents(), [
      {
        event: "message_start",
        data: JSON.stringify({
          type: "message_start",
          message: { id: "m", usage: { input_tokens: 3, output_tokens: 1 } },
        }),
      },
      {
        event: "error",
        data: '{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"}}',
      },
      { event: "message_stop", data: '{"type":"message_stop"}' },
    ]);
    expect(events.map((e) => e.type)).toEqual(["message_start", "error"]);
    expect(events[1]).toEqual({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
  });

  test("EOF before message_stop: an in-band api_error is appended", async () => {
    const msgs = (await fixtureChunks("anthropic-tool.chunks.txt", { withEventLines: true })).slice(0, 4);
    const events = await run(messagesSSEToEvents(), msgs);
    expect(events.at(-1)).toMatchObject({ type: "error", error: { type: "api_error" } });
  });

  test("without event lines the JSON type is used; unknown event types are skipped", async () => {
    const events = await run(messagesSSEToEvents(), [
      { data: '{"type":"ping"}' },
      { event: "future_event", data: '{"type":"future_event"}' },
      { data: '{"type":"message_stop"}' },
    ]);
    expect(events.map((e) => e.type)).toEqual(["ping", "message_stop"]);
  });
});

test("trap 8: a duplicate message_start (same id) is dropped; a different id is an error", async () => {
  const start = (id: string) => ({
    event: "message_start",
    data: JSON.stringify({ type: "message_start", message: { id, usage: { input_tokens: 1, output_tokens: 1 } } }),
  });
  const same = await run(messagesSSEToEvents(), [
    start("msg_a"),
    start("msg_a"),
    { event: "message_stop", data: '{"type":"message_stop"}' },
  ]);
  expect(same.map((e) => e.type)).toEqual(["message_start", "message_stop"]);
  const other = await run(messagesSSEToEvents(), [
    start("msg_a"),
    start("msg_b"),
    { event: "message_stop", data: '{"type":"message_stop"}' },
  ]);
  expect(other.map((e) => e.type)).toEqual(["message_start", "error"]);
});

describe("encodeMessagesEvents", () => {
  test("writes the event: line and the JSON type (trap 7), and round-trips through the SSE decoder", async () => {
    const events = await run(
      messagesSSEToEvents(),
      await fixtureChunks("anthropic-tool.chunks.txt", { withEventLines: true }),
    );
    const frames = await run(encodeMessagesEvents(), events);
    expect(frames[0]!.startsWith('event: message_start\ndata: {"type":"message_start"')).toBe(true);
    for (const f of frames) expect(f).toMatch(/^event: (\w+)\ndata: \{"type":"\1"[^\n]*\}\n\n$/);
    const decoded = await run(new SSEDecoderStream(), frames);
    const back: MessagesStreamEvent[] = await run(messagesSSEToEvents(), decoded);
    expect(back).toEqual(events);
  });
});
