import { describe, expect, test } from "bun:test";
import { messagesFormat } from "../formats/messages";
import { UsageTally } from "../metering/usage-tally";
import { PROTOCOLS } from "../protocols";
import { MemorySignatures } from "../stored-responses/signature-store";
import type { Logger } from "../log/logger";
import { ContinuingStream } from "./continuing-tap";
import type { StreamContinuer } from "../dispatch/continuation";
import { StreamSpan } from "./stream-span";
import { translatedTap } from "./translated-tap";

const quiet: Logger = { error() {}, warn() {}, info() {}, request() {} };
const FRAMES = [
  {
    type: "message_start",
    message: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "m",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 1 },
    },
  },
  { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello there" } },
]
  .map((d) => `event: ${d.type}\ndata: ${JSON.stringify(d)}\n\n`)
  .join("");

/** A messages stream cut after its first text (it ends with no terminal event), read as the relay reads it. */
async function run(signal: AbortSignal, abortAfterFirst?: AbortController) {
  const client = messagesFormat.validate({
    model: "m",
    max_tokens: 10,
    stream: true,
    messages: [{ role: "user", content: "hi" }],
  });
  const tally = new UsageTally();
  const span = new StreamSpan();
  const reply = {
    model: "m",
    stopSequences: undefined,
    toolNames: undefined,
    signatures: new MemorySignatures(),
    inputTokens: 0,
  };
  let stream: ContinuingStream | undefined;
  const tap = translatedTap(PROTOCOLS.messages, client, reply, tally, undefined, undefined, {
    span,
    onCut: () => stream?.markCut(),
  });
  let asked = 0;
  const continuer: StreamContinuer = {
    max: 2,
    next: async () => {
      asked++;
      return undefined;
    },
  };
  const source = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode(FRAMES));
      c.close();
    },
  });
  stream = new ContinuingStream(source, { kind: "pivot", tap, span }, undefined, {
    format: messagesFormat,
    client,
    model: "m",
    tally,
    countText: (t) => t.split(" ").length,
    countPrompt: () => 0,
    continuer,
    signal,
    logger: quiet,
    requestId: "req_1",
    route: {},
  });
  const out: string[] = [];
  const write = (p: Uint8Array | string) => out.push(typeof p === "string" ? p : new TextDecoder().decode(p));
  const reader = stream.source.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    stream.tap.push(value, write);
    abortAfterFirst?.abort();
  }
  stream.tap.end(write);
  return { asked, text: out.join(""), failed: stream.tap.failed?.(), span, tally };
}

describe("ContinuingStream", () => {
  test("a cut stream asks for a continuation with the text the client received", async () => {
    const r = await run(new AbortController().signal);
    expect(r.asked).toBe(1);
    expect(r.span.text()).toBe("Hello there");
    expect(r.span.open?.kind).toBe("text");
    // Nothing answered: the in-band error, and the cut attempt's output carried for billing.
    expect(r.failed).toBe(true);
    expect(r.text).toContain("event: error\n");
    expect(r.tally.carriedUsage.output_tokens).toBe(2);
  });

  test("a continuation never starts for a client that is gone", async () => {
    const gone = new AbortController();
    const r = await run(gone.signal, gone);
    expect(r.asked).toBe(0);
    expect(r.failed).toBe(true);
  });
});
