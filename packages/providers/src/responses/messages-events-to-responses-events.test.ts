import { describe, expect, test } from "bun:test";
import { SSEParser } from "@turnpike/schema/sse";
import { MessagesToResponsesMachine } from "./messages-events-to-responses-events.js";
import { RESPONSES_STREAM_SCENARIOS, type ResponsesStreamScenario } from "./responses-stream-scenarios.js";

/** The stream a scenario writes, its made-up item ids replaced by `<id>`. */
function runScenario(s: ResponsesStreamScenario, Machine = MessagesToResponsesMachine): string {
  let out = "";
  const m = new Machine(s.ctx, (frame) => {
    out += frame;
  });
  for (const ev of s.events) m.push(ev);
  if (s.fail) m.fail(...s.fail);
  m.end();
  return out.replace(/\b(msg|fc|ctc|rs)_[A-Za-z0-9]{24}\b/g, "$1_<id>");
}

const fixture = (name: string) => Bun.file(new URL(`./__fixtures__/responses-stream-${name}.sse`, import.meta.url));

describe("the Responses stream encoder, byte for byte", () => {
  for (const s of RESPONSES_STREAM_SCENARIOS) {
    test(`${s.name}: the same bytes as one JSON.stringify of each whole event`, async () => {
      const out = runScenario(s);
      expect(out).toBe(await fixture(s.name).text());
      // Each event's data is canonical JSON (what JSON.stringify of its parsed value gives) with
      // its type first and its sequence number last, numbered from 0.
      const events = new SSEParser().push(out);
      expect(events.length).toBeGreaterThan(0);
      events.forEach((ev, i) => {
        const value = JSON.parse(ev.data) as Record<string, unknown>;
        expect(JSON.stringify(value)).toBe(ev.data);
        const keys = Object.keys(value);
        expect([keys[0], value.type, keys.at(-1), value.sequence_number]).toEqual([
          "type",
          ev.event,
          "sequence_number",
          i,
        ]);
      });
    });
  }

  test("the final response is the one the stream's last event carries", () => {
    const s = RESPONSES_STREAM_SCENARIOS.find((x) => x.name === "mixed") as ResponsesStreamScenario;
    let out = "";
    const m = new MessagesToResponsesMachine(s.ctx, (frame) => {
      out += frame;
    });
    for (const ev of s.events) m.push(ev);
    const last = new SSEParser().push(out).at(-1);
    expect(last?.event).toBe("response.completed");
    expect(JSON.parse(last?.data ?? "").response).toEqual(JSON.parse(JSON.stringify(m.final)));
    expect(m.final?.output.map((i) => i.type)).toEqual([
      "reasoning",
      "message",
      "function_call",
      "function_call",
      "custom_tool_call",
      "custom_tool_call",
      "message",
    ]);
  });
});

describe("resume: going on from a stream a Responses upstream wrote", () => {
  const upstream = [
    { type: "response.created", response: { id: "resp_up", object: "response", created_at: 7, model: "m", tools: [] } },
    {
      type: "response.in_progress",
      response: { id: "resp_up", object: "response", created_at: 7, model: "m", tools: [] },
    },
    { type: "response.output_item.added", output_index: 0, item: { type: "reasoning", id: "rs_up", summary: [] } },
    {
      type: "response.output_item.done",
      output_index: 0,
      item: { type: "reasoning", id: "rs_up", summary: [], encrypted_content: "sealed" },
    },
    {
      type: "response.output_item.added",
      output_index: 1,
      item: { type: "message", id: "msg_up", status: "in_progress", role: "assistant", content: [] },
    },
    {
      type: "response.content_part.added",
      item_id: "msg_up",
      output_index: 1,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [], logprobs: [] },
    },
    { type: "response.output_text.delta", item_id: "msg_up", output_index: 1, content_index: 0, delta: "Hello " },
  ].map((e, i) => ({ ...e, sequence_number: i }));

  /** A machine resumed from `events`, then given the continuation's text and end; its events parsed. */
  function goOn(
    events: unknown[],
    text: string,
  ): { resumed: ReturnType<MessagesToResponsesMachine["resume"]>; out: any[] } {
    let out = "";
    const m = new MessagesToResponsesMachine({ model: "m", request: { model: "m", input: "hi" } }, (f) => {
      out += f;
    });
    const resumed = m.resume(events);
    if (resumed) {
      const index = resumed.textOpen ? 0 : 1;
      if (!resumed.textOpen) m.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
      m.push({ type: "content_block_delta", index, delta: { type: "text_delta", text } });
      m.push({ type: "content_block_stop", index });
      m.push({
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: 9 },
      });
      m.push({ type: "message_stop" });
    }
    return { resumed, out: new SSEParser().push(out).map((e) => JSON.parse(e.data)) };
  }

  test("an open text part: its deltas and done events in the upstream's ids, numbered on, the whole text", () => {
    const { resumed, out } = goOn(upstream, "world");
    expect(resumed).toEqual({ textOpen: true });
    expect(out.map((e) => [e.type, e.sequence_number])).toEqual([
      ["response.output_text.delta", 7],
      ["response.output_text.done", 8],
      ["response.content_part.done", 9],
      ["response.output_item.done", 10],
      ["response.completed", 11],
    ]);
    expect(out.slice(0, 4).map((e) => [e.item_id ?? e.item.id, e.output_index])).toEqual([
      ["msg_up", 1],
      ["msg_up", 1],
      ["msg_up", 1],
      ["msg_up", 1],
    ]);
    expect(out[1].text).toBe("Hello world");
    expect(out[2].part.text).toBe("Hello world");
    expect(out[3].item).toMatchObject({ id: "msg_up", status: "completed", content: [{ text: "Hello world" }] });
    const response = out[4].response;
    expect(response).toMatchObject({ id: "resp_up", created_at: 7, status: "completed", tools: [] });
    // The vendor's reasoning item as it was done, its sealed content included.
    expect(response.output[0]).toEqual({ type: "reasoning", id: "rs_up", summary: [], encrypted_content: "sealed" });
    expect(response.output[1].content[0].text).toBe("Hello world");
    expect(response.usage.output_tokens).toBe(9);
  });

  test("a text part already done: the continuation's text is the message's next part", () => {
    const done = [
      ...upstream,
      {
        type: "response.output_text.done",
        item_id: "msg_up",
        output_index: 1,
        content_index: 0,
        text: "Hello ",
        sequence_number: 7,
      },
      {
        type: "response.content_part.done",
        item_id: "msg_up",
        output_index: 1,
        content_index: 0,
        part: { type: "output_text", text: "Hello ", annotations: [], logprobs: [] },
        sequence_number: 8,
      },
    ];
    const { resumed, out } = goOn(done, "world");
    expect(resumed).toEqual({ textOpen: false });
    expect(out[0]).toMatchObject({
      type: "response.content_part.added",
      item_id: "msg_up",
      content_index: 1,
      sequence_number: 9,
    });
    expect(out.at(-1).response.output[1].content.map((p: any) => p.text)).toEqual(["Hello ", "world"]);
  });

  test("an item other than a message open, or events without the response: not gone on with", () => {
    const call = [
      ...upstream.slice(0, 4),
      {
        type: "response.output_item.added",
        output_index: 1,
        item: { type: "function_call", id: "fc_up", arguments: "" },
        sequence_number: 4,
      },
    ];
    expect(goOn(call, "x").resumed).toBeUndefined();
    expect(goOn(upstream.slice(2), "x").resumed).toBeUndefined();
    // Nothing received: the machine's own stream from its start.
    const fresh = goOn([], "x");
    expect(fresh.resumed).toEqual({ textOpen: false });
    expect(fresh.out[0]).toMatchObject({ type: "response.created", sequence_number: 0 });
  });
});
