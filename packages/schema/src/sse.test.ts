import { describe, expect, test } from "bun:test";
import { SSEDecoderStream, SSEEncoderStream, SSEParser, type SSEMessage, formatSSE, formatSSEComment } from "./sse.js";

const enc = new TextEncoder();

/** Reads a stream to the end (with a reader: the DOM lib types lack stream async iteration). */
async function collect<T>(stream: ReadableStream<T>): Promise<T[]> {
  const out: T[] = [];
  const reader = stream.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) out.push(r.value);
  return out;
}

/** Feeds the chunks through a real SSEDecoderStream, one network read each. */
async function decode(chunks: (string | Uint8Array)[]): Promise<SSEMessage[]> {
  const source = new ReadableStream<string | Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  });
  return collect(source.pipeThrough(new SSEDecoderStream()));
}

describe("SSEDecoderStream", () => {
  test("LF framing with event and data lines (messages format)", async () => {
    const text = 'event: message_start\ndata: {"type":"message_start"}\n\nevent: ping\ndata: {"type":"ping"}\n\n';
    expect(await decode([enc.encode(text)])).toEqual([
      { event: "message_start", data: '{"type":"message_start"}' },
      { event: "ping", data: '{"type":"ping"}' },
    ]);
  });

  test("CRLF framing (generateContent servers)", async () => {
    expect(await decode(['data: {"a":1}\r\n\r\ndata: {"a":2}\r\n\r\n'])).toEqual([
      { data: '{"a":1}' },
      { data: '{"a":2}' },
    ]);
  });

  test("lone CR framing", async () => {
    expect(await decode(["event: x\rdata: 1\r\rdata: 2\r\r"])).toEqual([{ event: "x", data: "1" }, { data: "2" }]);
  });

  test("a CRLF split across two reads is one line ending, not two", async () => {
    // If the LF were taken as a second line ending, the blank line would end the event early
    // and `data: b` would become a separate event.
    expect(await decode(["data: a\r", "\ndata: b\r\n\r\n"])).toEqual([{ data: "a\nb" }]);
  });

  test("a blank line split as CR | LF between reads dispatches once", async () => {
    expect(await decode(["data: a\r\n\r", "\ndata: b\r\n\r\n"])).toEqual([{ data: "a" }, { data: "b" }]);
  });

  test("multi-line data is joined with newlines", async () => {
    expect(await decode(["data: line one\ndata: line two\ndata:\ndata: four\n\n"])).toEqual([
      { data: "line one\nline two\n\nfour" },
    ]);
  });

  test("comments are ignored (keep-alives)", async () => {
    expect(await decode([": ping\n\n:another\ndata: x\n: inside\n\n"])).toEqual([{ data: "x" }]);
  });

  test("an event split at every byte decodes the same", async () => {
    const bytes = enc.encode('event: content_block_delta\ndata: {"text":"Hello"}\n\ndata: [DONE]\n\n');
    const oneByteReads = Array.from(bytes, (b) => new Uint8Array([b]));
    expect(await decode(oneByteReads)).toEqual([
      { event: "content_block_delta", data: '{"text":"Hello"}' },
      { data: "[DONE]" },
    ]);
  });

  test("a multi-byte UTF-8 character split across two reads survives", async () => {
    const bytes = enc.encode("data: caf\u00e9 \u{1F600}\n\n");
    const euro = bytes.indexOf(0xc3); // first byte of é
    const emoji = bytes.indexOf(0xf0); // first byte of the 4-byte emoji
    const reads = [bytes.slice(0, euro + 1), bytes.slice(euro + 1, emoji + 2), bytes.slice(emoji + 2)];
    expect(await decode(reads)).toEqual([{ data: "café 😀" }]);
  });

  test("a final event without its trailing blank line is still dispatched", async () => {
    expect(await decode(['data: {"done":true}'])).toEqual([{ data: '{"done":true}' }]);
    expect(await decode(["data: last\n"])).toEqual([{ data: "last" }]);
  });

  test("id and retry fields; an event line with no data dispatches nothing", async () => {
    expect(await decode(["id: 7\nretry: 1500\ndata: x\n\nevent: lonely\n\n"])).toEqual([
      { id: "7", retry: 1500, data: "x" },
    ]);
  });

  test("an id persists to later events, as the standard's last-event-ID buffer does", async () => {
    expect(await decode(["id: 1\ndata: a\n\ndata: b\n\n"])).toEqual([
      { id: "1", data: "a" },
      { id: "1", data: "b" },
    ]);
  });

  test("no space after the colon, and a field with no colon", async () => {
    expect(await decode(["data:x\ndata\n\n"])).toEqual([{ data: "x\n" }]);
  });
});

describe("formatSSE", () => {
  test("writes event then data, ended by a blank line", () => {
    expect(formatSSE({ event: "ping", data: '{"type":"ping"}' })).toBe('event: ping\ndata: {"type":"ping"}\n\n');
    expect(formatSSE({ data: "[DONE]" })).toBe("data: [DONE]\n\n");
    expect(formatSSEComment("keep-alive")).toBe(": keep-alive\n\n");
  });

  test("round trip through the encoder and decoder streams", async () => {
    const messages: SSEMessage[] = [
      { event: "message_start", data: '{"type":"message_start","message":{"content":[]}}' },
      { data: "multi\nline\ndata" },
      { data: "" },
      // Last, because an id persists to later events (see the test above).
      { event: "content_block_delta", data: '{"text":"naïve 日本語 😀"}', id: "42" },
    ];
    const source = new ReadableStream<SSEMessage | string>({
      start(c) {
        for (const m of messages) c.enqueue(m);
        c.enqueue(formatSSEComment("ping"));
        c.close();
      },
    });
    const decoded = await collect(source.pipeThrough(new SSEEncoderStream()).pipeThrough(new SSEDecoderStream()));
    expect(decoded).toEqual(messages);
  });

  test("CR and CRLF inside data are normalised to LF on the way back", () => {
    const parser = new SSEParser();
    const out = [...parser.push(formatSSE({ data: "a\r\nb\rc" })), ...parser.end()];
    expect(out).toEqual([{ data: "a\nb\nc" }]);
  });
});
