import { describe, expect, test } from "bun:test";
import { FORMATS } from "../formats";
import { UsageTally } from "../metering/usage-tally";
import { PROTOCOLS } from "../protocols";
import { passthroughTap } from "./passthrough-tap";
import { firstBadLine, sseLineGate, type LineShape } from "./sse-line-gate";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("firstBadLine", () => {
  test("vendor event lines with LF, CRLF and lone CR line ends pass", () => {
    for (const text of [
      'event: message_start\ndata: {"type":"message_start"}\n\n',
      'data: {"a":1}\r\n\r\ndata: [DONE]\r\n\r\n',
      'data:{"a":1}\r\rdata: [1,2]\r\r',
      ": keep-alive\n\nid: 7\nretry: 1000\n\n",
    ]) {
      expect(firstBadLine(bytes(text))).toBe(-1);
    }
  });

  test("the first line that is no event is found where it starts", () => {
    expect(firstBadLine(bytes('data: {"a":1}\n\n<html>\n'))).toBe(15);
    expect(firstBadLine(bytes('data: {"a":1}\r\n\r\nlorem'))).toBe(17);
    expect(firstBadLine(bytes("data: \n"))).toBe(0); // a data line with nothing on it
    expect(firstBadLine(bytes('data: {"cut":"of\n'))).toBe(0); // JSON that does not close on its line
    expect(firstBadLine(bytes("data: <h1>x</h1>\n"))).toBe(0);
    expect(firstBadLine(bytes('event: x\rdata: {"a":1}\rdaat: 1\r'))).toBe(23);
  });

  test("lines of every length and field, walked or searched, are judged alike", () => {
    const long = "x".repeat(300);
    // A comment and an event name longer than the walk, each followed by a line that is no event.
    expect(firstBadLine(bytes(`: ${long}\nevent: ${long}\n\nnope\n`))).toBe(2 + 300 + 1 + 7 + 300 + 2);
    expect(firstBadLine(bytes(`: ${long}\nevent: ${long}\n\n`))).toBe(-1);
    expect(firstBadLine(bytes(`: ${long}`))).toBe(-1); // no line end at all
    expect(firstBadLine(bytes("id: 1\nretry: 5\nid:\nretry:\n"))).toBe(-1);
    for (const bad of ["i: 1", "idx: 1", "retr: 5", "eventx", "event", "dat: {}", "d", "r", "x"])
      expect(firstBadLine(bytes(`: ok\n${bad}\n`))).toBe(5);
  });

  test("the plain shape: LF line ends and a space after each data and event field", () => {
    const shape = (text: string): boolean => {
      const seen: LineShape = { plain: true };
      expect(firstBadLine(bytes(text), seen)).toBe(-1);
      return seen.plain;
    };
    expect(shape('event: message_start\ndata: {"type":"message_start"}\n\n: ping\n\nid: 1\n\n')).toBe(true);
    expect(shape('data: {"a":"data:{ and event:m in the text"}\n\n')).toBe(true);
    expect(shape('data:{"a":1}\n\n')).toBe(false);
    expect(shape('event:message_start\ndata: {"a":1}\n\n')).toBe(false);
    expect(shape('data: {"a":1}\r\n\r\n')).toBe(false);
  });
});

describe("the line gate in front of the passthrough tap", () => {
  test("a stream that turns to fields without their space mid-way is still read whole by the full parser", () => {
    const tally = new UsageTally();
    const tap = passthroughTap(PROTOCOLS.messages.passthrough, FORMATS.messages, tally, {
      includeUsage: false,
      renameModel: "alpha-haiku-4-5",
    });
    const gate = sseLineGate(tap, FORMATS.messages, "alpha");
    const chunks = [
      'event: message_start\ndata: {"type":"message_start","message":{"model":"alpha-haiku-4-5","usage":{"input_tokens":7,"output_tokens":1}}}\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n',
      'event:message_delta\ndata:{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}\n\n',
      'event:message_stop\ndata:{"type":"message_stop"}\n\n',
    ];
    let out = "";
    const write = (p: Uint8Array | string) => {
      out += typeof p === "string" ? p : new TextDecoder().decode(p);
    };
    for (const c of chunks) gate.push(bytes(c), write);
    gate.end(write);
    expect(tally.usage.input_tokens).toBe(7);
    expect(tally.usage.output_tokens).toBe(3);
    expect(gate.failed?.()).toBe(false);
    expect(out).toBe(chunks.join(""));
  });
});
