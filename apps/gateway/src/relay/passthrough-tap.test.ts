import { describe, expect, test } from "bun:test";
import { FORMATS } from "../formats";
import { PROTOCOLS } from "../protocols";
import { chunkDecoder, framesHolding, MAX_HELD_FRAMES, passthroughTap, tapStream } from "./passthrough-tap";
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

describe("whole plain frames read as bytes (the line gate vouched for them) and as text agree", () => {
  const start = (model: string, input: unknown = 21) =>
    `event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"${model}","usage":{"input_tokens":${JSON.stringify(input)},"output_tokens":1}}}\n\n`;
  const delta = (text: string) =>
    `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${JSON.stringify(text)}}}\n\n`;
  const end = (output: unknown = 9) =>
    `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":${JSON.stringify(output)}}}\n\n`;
  const stop = 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
  const chatChunk = (delta: object, finish: string | null, usage: object | null) =>
    `data: ${JSON.stringify({ id: "c1", model: "beta-5", choices: [{ index: 0, delta, finish_reason: finish }], usage })}\n\n`;

  /** One stream through a tap, its chunks pushed as the line gate hands them over (`plain`) or not. */
  function run(dialect: "messages" | "chat", chunks: string[], plain: boolean, renameModel?: string) {
    const m = new UsageTally(1_000_000);
    const audited: string[] = [];
    const tap = passthroughTap(
      PROTOCOLS[dialect].passthrough,
      FORMATS[dialect],
      m,
      { includeUsage: true, renameModel },
      (json) => audited.push(json),
    );
    let out = "";
    const put = (p: Uint8Array | string) => {
      out += typeof p === "string" ? p : new TextDecoder().decode(p);
    };
    let terminatedAt = -1;
    for (const [i, c] of chunks.entries()) {
      tap.push(new TextEncoder().encode(c), put, plain);
      if (terminatedAt === -1 && tap.terminated?.()) terminatedAt = i;
    }
    if (terminatedAt === -1) tap.end(put);
    return {
      out,
      terminatedAt,
      failed: tap.failed?.(),
      usage: { ...m.usage },
      final: m.final,
      text: m.relayedText(),
      finish: m.finishReason(),
      model: m.upstreamModel,
      audited,
    };
  }

  const streams: [string, "messages" | "chat", string[], string?][] = [
    [
      "messages, the whole reply in one read",
      "messages",
      [start("alpha-haiku-4-5") + delta("Hi") + delta(" there") + end() + stop],
    ],
    [
      "messages, one read per frame",
      "messages",
      [start("alpha-haiku-4-5"), delta("Hi"), delta(" é there"), end(), stop],
    ],
    [
      "messages, frames after the terminal one in its read",
      "messages",
      [start("m1") + delta("Hi") + end() + stop + delta("late")],
    ],
    [
      "messages, the vendor's own model name (relabelled)",
      "messages",
      [start("alpha-haiku-4-5-20251001") + delta("Hi") + end() + stop],
      "alpha-haiku-4-5",
    ],
    [
      "messages, the catalog's name (nothing relabelled)",
      "messages",
      [start("alpha-haiku-4-5") + delta("Hi"), end() + stop],
      "alpha-haiku-4-5",
    ],
    ["messages, a negative count", "messages", [start("m1", -5) + delta("Hi") + end() + stop]],
    [
      "messages, a usage in a content frame",
      "messages",
      [start("m1") + delta("x").replace("}}\n", '},"usage":{"output_tokens":-1}}\n') + end() + stop],
    ],
    [
      "messages, an error event mid-read",
      "messages",
      [
        start("m1") +
          delta("Hi") +
          'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"busy"}}\n\n' +
          delta("no"),
      ],
    ],
    ["messages, the word usage in the text", "messages", [start("m1") + delta('the "usage": of words') + end() + stop]],
    ["messages, cut off (no end)", "messages", [start("m1") + delta("Hi")]],
    [
      "chat, usage null until the last chunk, in one read",
      "chat",
      [
        chatChunk({ role: "assistant", content: "" }, null, null) +
          chatChunk({ content: "Hi" }, null, null) +
          chatChunk({}, "stop", null) +
          chatChunk({}, null, { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 }).replace(
            '"choices":[{"index":0,"delta":{},"finish_reason":null}]',
            '"choices":[]',
          ) +
          "data: [DONE]\n\n",
      ],
      "beta-5",
    ],
    [
      "chat, one read per chunk",
      "chat",
      [
        chatChunk({ role: "assistant", content: "" }, null, null),
        chatChunk({ content: "Hi" }, null, null),
        chatChunk({}, "stop", null),
        chatChunk({}, null, { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 }),
        "data: [DONE]\n\n",
      ],
    ],
    [
      "chat, a usage that is an array",
      "chat",
      [chatChunk({ content: "Hi" }, "stop", [1, 2] as unknown as object) + "data: [DONE]\n\n"],
    ],
  ];
  for (const [name, dialect, chunks, rename] of streams)
    test(name, () => {
      const bytes = run(dialect, chunks, true, rename);
      expect(bytes).toEqual(run(dialect, chunks, false, rename));
      // What each stream was written to show, read on the byte path.
      if (name.includes("own model name")) expect(bytes.out).toContain('"model":"alpha-haiku-4-5"');
      if (name.includes("after the terminal")) expect(bytes.terminatedAt).toBe(0);
      if (name.includes("negative")) expect(bytes.audited[0]).toContain('"input_tokens":-5');
      if (name.includes("content frame")) expect(bytes.audited).toHaveLength(3);
    });

  test("framesHolding decodes only the frames that hold a marker or a usage that is not null", () => {
    const region = Buffer.from(start("m1") + delta("a") + delta("b") + end() + stop);
    const frames = framesHolding(region, [Buffer.from("event: message_")]);
    expect(frames).toBe(start("m1") + end() + stop);
    const chat = Buffer.from(chatChunk({ content: "a" }, null, null) + chatChunk({}, null, { prompt_tokens: 1 }));
    expect(framesHolding(chat, [])).toBe(chatChunk({}, null, { prompt_tokens: 1 }));
    expect(framesHolding(chat, [Buffer.from("nowhere")])).toBe(chatChunk({}, null, { prompt_tokens: 1 }));
    expect(framesHolding(Buffer.from(chatChunk({ content: "a" }, null, null)), [])).toBe("");
    // A fetch body's chunks are plain typed arrays, searched where they are; one cut out of a larger
    // array (an offset into its memory) finds the same frames.
    const text = `${delta("x")}${start("m2")}${delta("c")}`;
    const plain = new TextEncoder().encode(text);
    expect(plain).not.toBeInstanceOf(Buffer);
    expect(framesHolding(plain, [Buffer.from("event: message_")])).toBe(start("m2"));
    const inner = new TextEncoder().encode(`${delta("pad")}${text}`).subarray(delta("pad").length);
    expect(framesHolding(inner, [Buffer.from("event: message_")])).toBe(start("m2"));
  });
});
