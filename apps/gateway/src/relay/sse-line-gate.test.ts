import { describe, expect, test } from "bun:test";
import { firstBadLine } from "./sse-line-gate";

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
});
