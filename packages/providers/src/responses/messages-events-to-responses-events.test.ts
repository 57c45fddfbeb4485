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
