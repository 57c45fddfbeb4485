import { describe, expect, test } from "bun:test";
import type { MessagesRequest } from "@turnpike/schema";
import { UsageTally } from "../../metering/usage-tally";
import { testTarget } from "../../../test/support/test-deps";
import { CONTEXT_1M_BETA } from "../../dispatch/catalog";
import { MemorySignatures } from "../../stored-responses/signature-store";
import { MESSAGES_UPSTREAM_VERSION, messagesProtocol } from "./messages-protocol";

const body = { model: "alpha-sonnet-4-6", max_tokens: 64, stream: true, messages: [{ role: "user", content: "hi" }] };
const noHeaders = { stream: false, clientHeaders: new Headers() };

describe("messages protocol: automatic cache breakpoints", () => {
  const convo = {
    model: "alpha-sonnet-4-6",
    max_tokens: 64,
    system: "You are terse.",
    tools: [
      { name: "a", input_schema: { type: "object" } },
      { name: "b", input_schema: { type: "object" } },
    ],
    messages: [
      { role: "user", content: "one" },
      { role: "assistant", content: "two" },
      {
        role: "user",
        content: [
          { type: "text", text: "three" },
          { type: "text", text: "four" },
        ],
      },
    ],
  };
  const EPH = { type: "ephemeral" };

  test("prompt_cache auto: the last tool, the system prompt, the last block and the user turn before it", async () => {
    const req = await messagesProtocol.buildRequest(testTarget("alpha-sonnet-4-6"), convo, noHeaders);
    const sent = JSON.parse(req.body);
    expect(sent.tools.map((t: { cache_control?: unknown }) => t.cache_control)).toEqual([undefined, EPH]);
    expect(sent.system).toEqual([{ type: "text", text: "You are terse.", cache_control: EPH }]);
    expect(sent.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "one", cache_control: EPH }] },
      { role: "assistant", content: "two" },
      {
        role: "user",
        content: [
          { type: "text", text: "three" },
          { type: "text", text: "four", cache_control: EPH },
        ],
      },
    ]);
  });

  test("a request that sets any breakpoint itself, or prompt_cache off, is sent as it came", async () => {
    const own = {
      ...convo,
      messages: [
        { role: "user", content: [{ type: "text", text: "x", cache_control: { type: "ephemeral", ttl: "1h" } }] },
      ],
    };
    expect(
      JSON.parse((await messagesProtocol.buildRequest(testTarget("alpha-sonnet-4-6"), own, noHeaders)).body),
    ).toEqual(own);
    const target = testTarget("alpha-sonnet-4-6");
    const off = await messagesProtocol.buildRequest(
      { ...target, entry: { ...target.entry, prompt_cache: "off" } },
      convo,
      noHeaders,
    );
    expect(JSON.parse(off.body)).toEqual(convo);
  });
});

describe("messages protocol: buildRequest", () => {
  test("URL under the base (trailing slash trimmed), x-api-key and the version header", async () => {
    const target = testTarget("alpha-opus-4-8");
    const req = await messagesProtocol.buildRequest(
      { ...target, entry: { ...target.entry, prompt_cache: "off" } },
      body,
      noHeaders,
    );
    expect(req.url).toBe("https://vendor.example/base/v1/messages");
    expect(req.headers).toEqual({
      "content-type": "application/json",
      "x-api-key": "vendor-key",
      "anthropic-version": MESSAGES_UPSTREAM_VERSION,
    });
    expect(JSON.parse(req.body)).toEqual(body);
  });

  test("the client's beta values go unchanged (both header names); the entry's own is appended unless named", async () => {
    const clientHeaders = new Headers({ "alpha-beta": "b1, shared", "anthropic-beta": "shared,b2" });
    const req = await messagesProtocol.buildRequest(testTarget("alpha-sonnet-4-6 (context-1m beta)"), body, {
      stream: true,
      clientHeaders,
    });
    expect(req.headers["anthropic-beta"]).toBe(`b1, shared,shared,b2,${CONTEXT_1M_BETA}`);
    const named = new Headers({ "anthropic-beta": `${CONTEXT_1M_BETA}, future-beta` });
    const once = await messagesProtocol.buildRequest(testTarget("alpha-sonnet-4-6 (context-1m beta)"), body, {
      stream: true,
      clientHeaders: named,
    });
    expect(once.headers["anthropic-beta"]).toBe(`${CONTEXT_1M_BETA}, future-beta`);
    // Without client betas the entry's own still goes.
    const own = await messagesProtocol.buildRequest(testTarget("alpha-sonnet-4-6 (context-1m beta)"), body, noHeaders);
    expect(own.headers["anthropic-beta"]).toBe(CONTEXT_1M_BETA);
    // And with neither, no beta header at all.
    const none = await messagesProtocol.buildRequest(testTarget("alpha-opus-4-8"), body, noHeaders);
    expect("anthropic-beta" in none.headers).toBe(false);
  });

  test("the upstream's auth scheme overrides the protocol's", async () => {
    const req = await messagesProtocol.buildRequest(
      testTarget("alpha-opus-4-8", { auth: "bearer", apiKey: "proxy-key" }),
      body,
      noHeaders,
    );
    expect(req.headers.authorization).toBe("Bearer proxy-key");
    expect(req.headers["x-api-key"]).toBeUndefined();
    expect(messagesProtocol.auth).toBe("x-api-key");
  });
});

describe("messages protocol: counting", () => {
  test("count: the body without max_tokens and stream, to count_tokens, with the entry's headers", async () => {
    const req = await messagesProtocol.count!(testTarget("alpha-sonnet-4-6 (context-1m beta)"), body, new Headers());
    expect(req.url).toBe("https://vendor.example/base/v1/messages/count_tokens");
    expect(JSON.parse(req.body)).toEqual({ model: "alpha-sonnet-4-6", messages: body.messages });
    expect(req.headers).toMatchObject({
      "x-api-key": "vendor-key",
      "anthropic-version": MESSAGES_UPSTREAM_VERSION,
      "anthropic-beta": CONTEXT_1M_BETA,
    });
  });

  test("count carries the client's betas, like the call itself", async () => {
    const req = await messagesProtocol.count!(
      testTarget("alpha-sonnet-4-6 (context-1m beta)"),
      body,
      new Headers({ "anthropic-beta": "token-efficient-tools-2025-02-19" }),
    );
    expect(req.headers["anthropic-beta"]).toBe(`token-efficient-tools-2025-02-19,${CONTEXT_1M_BETA}`);
  });

  test("readCount: input_tokens when it is a non-negative number", () => {
    expect(messagesProtocol.readCount({ input_tokens: 42 })).toBe(42);
    expect(messagesProtocol.readCount({ input_tokens: -1 })).toBeUndefined();
    expect(messagesProtocol.readCount({ input_tokens: "many" })).toBeUndefined();
    expect(messagesProtocol.readCount({})).toBeUndefined();
  });
});

describe("messages protocol: replies", () => {
  test("replyUsage reads every field that is present", () => {
    const usage = {
      input_tokens: 10,
      output_tokens: 4,
      cache_read_input_tokens: 3,
      cache_creation_input_tokens: 2,
      output_tokens_details: { thinking_tokens: 1 },
    };
    expect(messagesProtocol.replyUsage({ usage })).toEqual({
      input_tokens: 10,
      output_tokens: 4,
      cache_read_input_tokens: 3,
      cache_creation_input_tokens: 2,
      reasoning_tokens: 1,
    });
    expect(messagesProtocol.replyUsage({ usage: { output_tokens: 7 } })).toEqual({ output_tokens: 7 });
    expect(messagesProtocol.replyUsage({})).toEqual({});
  });

  test("reply keeps the vendor's body but shows the client's model id", () => {
    const ctx = {
      model: "alpha-sonnet-4-6 (context-1m beta)",
      stopSequences: undefined,
      toolNames: undefined,
      signatures: new MemorySignatures(),
      inputTokens: 0,
    };
    const r = messagesProtocol.reply(
      {
        id: "msg_1",
        type: "message",
        model: "alpha-sonnet-4-6",
        content: [{ type: "text", text: "ok" }],
        usage: { input_tokens: 1, output_tokens: 1 },
      },
      ctx,
    );
    expect(r.model).toBe("alpha-sonnet-4-6 (context-1m beta)");
    expect(r.id).toBe("msg_1");
  });

  test("parseError keeps the status and the vendor's type", () => {
    const err = messagesProtocol.parseError(
      529,
      JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
      new Headers(),
    );
    expect(err.status).toBe(529);
    expect(err.type).toBe("overloaded_error");
    expect(err.message).toBe("Overloaded");
  });

  test("fromPivot sends the upstream model id, with no warnings", async () => {
    const pivot = {
      model: "alpha-sonnet-4-6 (context-1m beta)",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
    } as MessagesRequest;
    const out = await messagesProtocol.fromPivot(
      pivot,
      testTarget("alpha-sonnet-4-6 (context-1m beta)"),
      new MemorySignatures(),
    );
    expect(out.body.model).toBe("alpha-sonnet-4-6");
    expect(out.warnings).toEqual([]);
    expect(out.toolNames).toBeUndefined();
  });
});

describe("messages protocol: passthrough reader", () => {
  const start =
    'event: message_start\ndata: {"type":"message_start","message":{"model":"up","usage":{"input_tokens":9,"output_tokens":1}}}\n\n';
  const delta =
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":6}}\n\n';
  const stop = 'event: message_stop\ndata: {"type":"message_stop"}\n\n';

  test("raw whatever the model is called (the tap relabels it as text)", () => {
    expect(messagesProtocol.passthrough.raw({ includeUsage: false, renameModel: undefined })).toBe(true);
    expect(messagesProtocol.passthrough.raw({ includeUsage: false, renameModel: "x" })).toBe(true);
    expect(messagesProtocol.replyModel({ model: "alpha-haiku-4-5-20251001" })).toBe("alpha-haiku-4-5-20251001");
  });

  test("scan: input from message_start (its output placeholder ignored), output from message_delta, the end from message_stop", () => {
    const tally = new UsageTally();
    const state = { finished: false, terminated: false };
    messagesProtocol.passthrough.scan(start + delta + stop, tally, state);
    expect(tally.usage.input_tokens).toBe(9);
    expect(tally.usage.output_tokens).toBe(6);
    expect(tally.final).toBe(true);
    expect(state).toEqual({ finished: true, terminated: true });
  });
});

describe("messages protocol: quickText", () => {
  const frame = (event: string, data: object) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
  const delta = (d: object) => frame("content_block_delta", { type: "content_block_delta", index: 0, delta: d });
  const reader = messagesProtocol.passthrough;

  test("finds the text the full reader gives, escapes and all, without parsing the region", () => {
    const region = [
      frame("message_start", {
        type: "message_start",
        message: { model: "m", content: [], usage: { input_tokens: 3 } },
      }),
      frame("content_block_start", {
        type: "content_block_start",
        index: 0,
        content_block: { type: "text", text: "not relayed" },
      }),
      delta({ type: "text_delta", text: 'Hé said "hi"\\\n\tthere' }),
      delta({ type: "text_delta", text: "" }),
      delta({ type: "text_delta", text: "ends in a slash \\" }),
      delta({ type: "input_json_delta", partial_json: '{"text":"inside","thinking":"x"}' }),
      delta({ type: "thinking_delta", thinking: "mull 你好 🎉" }),
      delta({ type: "signature_delta", signature: "c2ln" }),
      delta({ type: "citations_delta", citation: { type: "char_location", cited_text: "cited", document_index: 0 } }),
      frame("message_delta", {
        type: "message_delta",
        delta: { stop_reason: "end_turn" },
        usage: { output_tokens: 9 },
      }),
      frame("message_stop", { type: "message_stop" }),
    ].join("");
    const quick = reader.quickText?.(region);
    expect(quick).toBe(reader.text(region));
    expect(quick).toBe('Hé said "hi"\\\n\tthereends in a slash \\{"text":"inside","thinking":"x"}mull 你好 🎉');
  });

  test("a delta line it cannot read by search is left to the full reader", () => {
    expect(reader.quickText?.('event: content_block_delta\ndata: {"type":"content_block_delta"}\n\n')).toBeUndefined();
    expect(reader.quickText?.('event: content_block_delta\ndata: {"delta":{"text":"cut\n\n')).toBeUndefined();
  });
});
