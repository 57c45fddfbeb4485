import { describe, expect, test } from "bun:test";
import { FORMATS } from "../formats";
import { cutAfterTerminal, relayStream, type StreamEnd } from "./relay-stream";

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

describe("relayStream: how a stream ended", () => {
  const logger = { debug() {}, info() {}, warn() {}, error() {} } as never;
  const tap = { push: (chunk: Uint8Array, out: (p: Uint8Array) => void) => out(chunk), end() {} };
  /** An upstream that sends one chunk, then fails its next read (as an aborted fetch does). */
  const failingUpstream = () => {
    let sent = false;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) throw new Error("The operation was aborted.");
        sent = true;
        controller.enqueue(bytes("data: one\n\n"));
      },
    });
  };
  const relayed = (client: AbortController) => {
    let how: StreamEnd | undefined;
    const body = relayStream(failingUpstream(), {
      tap,
      format: FORMATS.chat,
      logger,
      requestId: "req_test",
      keepAliveMs: 0,
      client: client.signal,
      onEnd: (h) => {
        how = h;
      },
    });
    return { body, how: () => how };
  };

  test("an upstream read that fails after the client went away ends as the client's abort", async () => {
    const client = new AbortController();
    const r = relayed(client);
    const reader = r.body.getReader();
    expect(text((await reader.read()).value)).toBe("data: one\n\n");
    client.abort();
    await reader.read().catch(() => {});
    expect(r.how()).toBe("aborted");
  });

  test("the same failure with the client still there is the upstream's failure", async () => {
    const r = relayed(new AbortController());
    const reader = r.body.getReader();
    await reader.read();
    const rest: string[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest.push(text(value) ?? "");
    }
    expect(r.how()).toBe("failed");
    expect(rest.join("")).toContain("error");
  });
});
