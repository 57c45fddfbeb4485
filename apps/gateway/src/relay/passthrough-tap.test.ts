import { describe, expect, test } from "bun:test";
import { FORMATS } from "../formats";
import { PROTOCOLS } from "../protocols";
import { chunkDecoder, MAX_HELD_FRAMES, passthroughTap, tapStream } from "./passthrough-tap";
import { UsageTally } from "../metering/usage-tally";

const meter = () => new UsageTally();

async function relay(
  dialect: "messages" | "chat",
  frames: string[],
  includeUsage = true,
  m = meter(),
): Promise<string> {
  const enc = new TextEncoder();
  const source = new ReadableStream<Uint8Array>({
    start(c) {
      for (const f of frames) c.enqueue(enc.encode(f));
      c.close();
    },
  });
  const out = source.pipeThrough(
    tapStream(
      passthroughTap(PROTOCOLS[dialect].passthrough, FORMATS[dialect], m, { includeUsage, renameModel: undefined }),
    ),
  );
  let text = "";
  const reader = out.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text;
    text += typeof value === "string" ? value : new TextDecoder().decode(value);
  }
}

const chunk = (delta: object, finish: string | null = null, usage?: object) =>
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;

describe("a same-format stream that ends without its terminator", () => {
  test("chat: finished (finish_reason seen) but no [DONE] → [DONE] is added", async () => {
    const out = await relay("chat", [
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "Hi" }),
      chunk({}, "stop"),
    ]);
    expect(out.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(out).not.toContain('"error"');
  });

  test("chat: cut off before any finish → an in-band error, then [DONE]", async () => {
    const out = await relay("chat", [chunk({ role: "assistant", content: "" }), chunk({ content: "Hi" })]);
    expect(out).toContain(
      'data: {"error":{"message":"The upstream ended the stream without finishing it.","type":"server_error"',
    );
    expect(out.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  test("messages: message_delta seen but no message_stop → message_stop is added", async () => {
    const out = await relay("messages", [
      'event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":5,"output_tokens":1}}}\n\n',
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}\n\n',
    ]);
    expect(out.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')).toBe(true);
  });

  test("messages: cut off mid-reply → an error event and no message_stop", async () => {
    const out = await relay("messages", [
      'event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":5,"output_tokens":1}}}\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}\n\n',
    ]);
    expect(out).toContain("event: error\n");
    expect(out).not.toContain("message_stop");
  });

  test("a complete stream passes through byte for byte", async () => {
    const frames = [
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "Hi" }),
      chunk({}, "stop"),
      "data: [DONE]\n\n",
    ];
    expect(await relay("chat", frames)).toBe(frames.join(""));
  });
});

describe("usage the client did not ask for", () => {
  test("is read for billing and not relayed", async () => {
    const m = meter();
    const usage = { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 };
    const out = await relay(
      "chat",
      [
        chunk({ content: "Hi" }),
        chunk({}, "stop"),
        `data: ${JSON.stringify({ id: "c1", choices: [], usage })}\n\n`,
        "data: [DONE]\n\n",
      ],
      false,
      m,
    );
    expect(out).not.toContain("prompt_tokens");
    expect(m.usage.input_tokens).toBe(9);
    expect(m.usage.output_tokens).toBe(4);
    expect(m.final).toBe(true);
  });
});

describe("the scanner and the full parser agree", () => {
  const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
  const frames = [
    chunk({ role: "assistant", content: "" }),
    chunk({ content: "Hi" }),
    chunk({}, "stop"),
    `data: ${JSON.stringify({ id: "c1", choices: [], usage })}\n\n`,
    "data: [DONE]\n\n",
  ];

  for (const [name, shape] of [
    ["LF framing (scanned)", (f: string) => f],
    ["CRLF framing (parsed)", (f: string) => f.replaceAll("\n", "\r\n")],
    ["no space after the colon (parsed)", (f: string) => f.replaceAll("data: ", "data:")],
  ] as const) {
    test(`chat usage is read with ${name}, even split mid-frame`, async () => {
      const m = meter();
      const text = frames.map(shape).join("");
      // Split into 5-byte pieces so frames and markers (`data:` | `{`) straddle chunks.
      const pieces = text.match(/[\s\S]{1,5}/g)!;
      const out = await relay("chat", pieces, true, m);
      expect(out).toBe(text);
      expect(m.usage.input_tokens).toBe(11);
      expect(m.usage.output_tokens).toBe(7);
      expect(m.final).toBe(true);
    });
  }

  test("messages usage from start and delta, split mid-frame", async () => {
    const m = meter();
    const text = [
      'event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":21,"output_tokens":1}}}\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}\n\n',
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}\n\n',
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ].join("");
    const out = await relay("messages", text.match(/[\s\S]{1,5}/g)!, true, m);
    expect(out).toBe(text);
    expect(m.usage.input_tokens).toBe(21);
    expect(m.usage.output_tokens).toBe(9);
    expect(m.final).toBe(true);
  });

  test("a client that leaves early is billed for the text it got, counted from the raw frames", async () => {
    const m = meter();
    await relay(
      "messages",
      [
        'event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":21,"output_tokens":1}}}\n\n',
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello there"}}\n\n',
      ],
      true,
      m,
    );
    expect(m.final).toBe(false);
    expect(m.relayedText()).toBe("Hello there");
  });

  test("a long reply's frames are read out into their text as it goes: the text and the finish survive, byte for byte through", async () => {
    const delta = (i: number) =>
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"w${i} "}}\n\n`;
    const n = Math.ceil((3 * MAX_HELD_FRAMES) / delta(0).length);
    const frames = [
      'event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":21,"output_tokens":1}}}\n\n',
      ...Array.from({ length: n }, (_, i) => delta(i)),
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}\n\n',
    ];
    const m = meter();
    const out = await relay("messages", frames, true, m);
    expect(out.startsWith(frames.join(""))).toBe(true);
    expect(m.relayedText()).toBe(Array.from({ length: n }, (_, i) => `w${i} `).join(""));
    expect(m.finishReason()).toBe("end_turn");
  });
});

describe("the frames a stream keeps to count its text", () => {
  test("regions kept in runs, then events parsed one by one: every word counted, in order", async () => {
    const delta = (i: number, space = " ") =>
      `event:${space}content_block_delta\ndata:${space}{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"w${i} "}}\n\n`;
    const frames = [
      'event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":21,"output_tokens":1}}}\n\n',
      // 40 reads the scanner keeps as regions (a run of 32 joined, 8 more), then fields without
      // their space: the full parser keeps each event's JSON.
      ...Array.from({ length: 40 }, (_, i) => delta(i)),
      ...Array.from({ length: 5 }, (_, i) => delta(40 + i, "")),
    ];
    const m = meter();
    await relay("messages", frames, true, m);
    // The upstream never said its usage or how it ended: the relayed text is what is counted.
    expect(m.relayedText()).toBe(Array.from({ length: 45 }, (_, i) => `w${i} `).join(""));
  });
});

describe("chunkDecoder", () => {
  test("decodes as one stream-mode TextDecoder does, however a text is cut", () => {
    const text = '\uFEFFdata: {"text":"héllo — 你好 🎉"}\n\ndata: {"text":"\uFEFFmid-stream mark kept"}\n\n';
    const bytes = new TextEncoder().encode(text);
    for (const size of [1, 2, 3, 5, 7, 16, 64, bytes.length]) {
      const decode = chunkDecoder();
      const reference = new TextDecoder();
      let got = "";
      let want = "";
      for (let at = 0; at < bytes.length; at += size) {
        const chunk = bytes.subarray(at, at + size);
        got += decode(chunk);
        want += reference.decode(chunk, { stream: true });
      }
      got += decode(new Uint8Array(0), true);
      want += reference.decode();
      expect(got).toBe(want);
      expect(got).toBe(text.slice(1));
    }
    // A stream cut inside a character ends with a replacement character, as the reference does.
    const decode = chunkDecoder();
    expect(decode(bytes.subarray(0, 20)) + decode(new Uint8Array(0), true)).toBe(
      new TextDecoder().decode(bytes.subarray(0, 20)),
    );
  });
});
