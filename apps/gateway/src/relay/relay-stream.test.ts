import { describe, expect, test } from "bun:test";
import { FORMATS } from "../formats";
import { cutAfterTerminal } from "./relay-stream";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | string | undefined) =>
  b === undefined || typeof b === "string" ? b : new TextDecoder().decode(b);

describe("cutAfterTerminal", () => {
  const delta =
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}\n\n';
  const stop = 'event: message_stop\ndata: {"type":"message_stop"}\n\n';

  test("a messages piece is cut just after message_stop, as bytes and as text", () => {
    const piece = `${delta}${stop}event: ping\ndata: {"type":"ping"}\n\n`;
    expect(text(cutAfterTerminal(bytes(piece), FORMATS.messages))).toBe(delta + stop);
    expect(cutAfterTerminal(piece, FORMATS.messages)).toBe(delta + stop);
  });

  test("a cut keeps the bytes of the piece it was given (a view, not a copy of other memory)", () => {
    const whole = bytes(`xx${stop}garbage`);
    const view = whole.subarray(2);
    expect(text(cutAfterTerminal(view, FORMATS.messages))).toBe(stop);
  });

  test("a chat piece is cut just after [DONE]", () => {
    const piece = 'data: {"choices":[]}\n\ndata: [DONE]\n\n<html>';
    expect(text(cutAfterTerminal(bytes(piece), FORMATS.chat))).toBe('data: {"choices":[]}\n\ndata: [DONE]\n\n');
  });

  test("no terminal frame, or one not yet ended by its blank line: nothing to cut", () => {
    expect(cutAfterTerminal(bytes(delta), FORMATS.messages)).toBeUndefined();
    expect(
      cutAfterTerminal(bytes('event: message_stop\ndata: {"type":"message_stop"}\n'), FORMATS.messages),
    ).toBeUndefined();
    expect(cutAfterTerminal(delta, FORMATS.messages)).toBeUndefined();
  });

  test("a format without a terminal frame (Responses) never cuts", () => {
    expect(cutAfterTerminal(bytes(stop), FORMATS.responses)).toBeUndefined();
  });
});
