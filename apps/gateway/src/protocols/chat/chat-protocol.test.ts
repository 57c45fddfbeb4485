import { describe, expect, test } from "bun:test";
import type { MessagesRequest } from "@turnpike/schema";
import { loadConfig } from "../../config/config";
import { testTarget } from "../../../test/support/test-deps";
import { UsageTally } from "../../metering/usage-tally";
import { buildCatalog } from "../../dispatch/catalog";
import { MemorySignatures } from "../../stored-responses/signature-store";
import { chatProtocol } from "./chat-protocol";
import { PROTOCOLS } from "../index";

const body = { model: "beta-5.5", messages: [{ role: "user", content: "hi" }] };
const opts = { stream: true, clientHeaders: new Headers({ "anthropic-beta": "ignored" }) };

describe("chat protocol: buildRequest", () => {
  test("{base}/chat/completions with a bearer key; client betas are not forwarded", async () => {
    const req = await chatProtocol.buildRequest(
      testTarget("beta-5.5", { baseURL: "https://api.vendor.example/v1/" }),
      body,
      opts,
    );
    expect(req.url).toBe("https://api.vendor.example/v1/chat/completions");
    expect(req.headers).toEqual({ "content-type": "application/json", authorization: "Bearer vendor-key" });
    expect(JSON.parse(req.body)).toEqual(body);
  });

  test("auth override and the entry's own upstream headers", async () => {
    const catalog = buildCatalog(
      [
        {
          id: "beta-custom",
          owned_by: "beta",
          input_per_mtok: 1,
          output_per_mtok: 2,
          context_window: 1000,
          upstream_headers: { "x-org": "o1" },
        },
      ],
      loadConfig({}).vendors,
    );
    const target = { ...testTarget("beta-5.5", { auth: "x-api-key" }), entry: catalog.get("beta-custom")! };
    const req = await chatProtocol.buildRequest(target, body, opts);
    expect(req.headers["x-api-key"]).toBe("vendor-key");
    expect(req.headers.authorization).toBeUndefined();
    expect(req.headers["x-org"]).toBe("o1");
  });

  test("the simulator base of a chat vendor ends in /v1", () => {
    expect(chatProtocol.simulatorBase("http://127.0.0.1:9")).toBe("http://127.0.0.1:9/v1");
    expect(PROTOCOLS.chat).toBe(chatProtocol);
  });
});

describe("chat protocol: counting and passthrough", () => {
  test("no count call: the local tokenizer counts", () => {
    expect(chatProtocol.count).toBeUndefined();
    expect(chatProtocol.readCount({ total_tokens: 5 })).toBeUndefined();
  });

  test("preparePassthrough forces include_usage on a stream and keeps the other stream options", () => {
    const streaming: Record<string, unknown> = {
      ...body,
      stream: true,
      stream_options: { include_usage: false, other: 1 },
    };
    chatProtocol.preparePassthrough(streaming, true);
    expect(streaming.stream_options).toEqual({ include_usage: true, other: 1 });
    const bare: Record<string, unknown> = { ...body, stream: true };
    chatProtocol.preparePassthrough(bare, true);
    expect(bare.stream_options).toEqual({ include_usage: true });
    const json: Record<string, unknown> = { ...body };
    chatProtocol.preparePassthrough(json, false);
    expect(json).toEqual(body);
  });

  test("replyUsage: prompt tokens less the cached ones, completion and reasoning tokens", () => {
    const usage = {
      prompt_tokens: 10,
      completion_tokens: 4,
      total_tokens: 14,
      prompt_tokens_details: { cached_tokens: 3 },
      completion_tokens_details: { reasoning_tokens: 1 },
    };
    expect(chatProtocol.replyUsage({ usage })).toEqual({
      input_tokens: 7,
      output_tokens: 4,
      cache_read_input_tokens: 3,
      cache_creation_input_tokens: 0,
      reasoning_tokens: 1,
    });
  });

  test("passthrough reader: raw only when the client asked for usage (the model is relabelled as text by the tap)", () => {
    expect(chatProtocol.passthrough.raw({ includeUsage: true, renameModel: undefined })).toBe(true);
    expect(chatProtocol.passthrough.raw({ includeUsage: false, renameModel: undefined })).toBe(false);
    expect(chatProtocol.passthrough.raw({ includeUsage: true, renameModel: "x" })).toBe(true);
  });

  test("replyModel: the vendor's own model string of a JSON reply", () => {
    expect(chatProtocol.replyModel({ model: "beta-5-2025-08-07" })).toBe("beta-5-2025-08-07");
    expect(chatProtocol.replyModel({})).toBeUndefined();
  });

  test("inspect drops the usage chunk the client did not ask for, but still reports it", () => {
    const tally = new UsageTally();
    const state = { finished: false, terminated: false };
    const usageChunk = {
      data: JSON.stringify({ id: "c", choices: [], usage: { prompt_tokens: 5, completion_tokens: 2 } }),
    };
    expect(
      chatProtocol.passthrough.inspect(usageChunk, tally, { includeUsage: false, renameModel: undefined }, state),
    ).toBeUndefined();
    expect(tally.usage.input_tokens).toBe(5);
    expect(tally.usage.output_tokens).toBe(2);
    expect(tally.final).toBe(true);
    expect(
      chatProtocol.passthrough.inspect(
        { data: "[DONE]" },
        tally,
        { includeUsage: false, renameModel: undefined },
        state,
      ),
    ).toEqual({ data: "[DONE]" });
    expect(state.terminated).toBe(true);
  });
});

describe("chat protocol: fromPivot and errors", () => {
  test("fromPivot: the system prompt as a message, the upstream model, the output cap and stops", async () => {
    const pivot = {
      model: "beta-5.5",
      max_tokens: 20,
      system: "s",
      stop_sequences: ["X"],
      messages: [{ role: "user", content: "hi" }],
    } as MessagesRequest;
    const out = await chatProtocol.fromPivot(pivot, testTarget("beta-5.5"), new MemorySignatures());
    expect(out.body).toEqual({
      model: "beta-5.5",
      messages: [
        { role: "system", content: "s" },
        { role: "user", content: "hi" },
      ],
      max_completion_tokens: 20,
      stop: ["X"],
    });
    expect(out.warnings).toEqual([]);
  });

  test("parseError keeps the status and the vendor's retry-after header", () => {
    const err = chatProtocol.parseError(
      429,
      JSON.stringify({ error: { type: "requests", message: "slow", code: "rate_limit_exceeded" } }),
      new Headers({ "retry-after": "3" }),
    );
    expect(err.status).toBe(429);
    expect(err.message).toBe("slow");
    expect(err.headers?.["retry-after"]).toBe("3");
  });
});

const frame = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
const text = frame({ id: "c1", choices: [{ index: 0, delta: { content: "Hi" }, finish_reason: null }], usage: null });
const finish = frame({ id: "c1", choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: null });
const usageOnly = frame({ id: "c1", choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } });
const usageWithChoice = frame({
  id: "c1",
  choices: [{ index: 0, delta: {}, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
});
const trim = (region: string, includeUsage = false) =>
  chatProtocol.passthrough.trim!(region, { includeUsage, renameModel: undefined });

describe("chat passthrough trim: the usage the client did not ask for is taken out of a plain region", () => {
  test("a region without usage goes as it is; so does any region when the client asked for usage", () => {
    const region = text + finish + "data: [DONE]\n\n";
    expect(trim(region)).toBe(region);
    expect(trim(text + usageOnly, true)).toBe(text + usageOnly);
  });

  test("the usage-only chunk is dropped, a chunk with choices loses its usage field, the rest is untouched", () => {
    expect(trim(text + finish + usageOnly + "data: [DONE]\n\n")).toBe(text + finish + "data: [DONE]\n\n");
    expect(trim(usageOnly)).toBe("");
    expect(trim(text + usageWithChoice)).toBe(
      text + frame({ id: "c1", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
    );
  });

  test("a usage frame that is not one data line is left to the full parser", () => {
    expect(trim(`event: x\n${usageOnly}`)).toBeUndefined();
  });
});

describe("chat passthrough scan", () => {
  test("a usage key outside a data line (a comment) is passed over: the usage chunk after it is read, the finish and [DONE] seen", () => {
    const tally = new UsageTally();
    const state = { finished: false, terminated: false };
    chatProtocol.passthrough.scan(
      `: proxy note "usage":{}\n\n${text}${finish}${usageOnly}data: [DONE]\n\n`,
      tally,
      state,
    );
    expect(tally.usage.input_tokens).toBe(3);
    expect(tally.usage.output_tokens).toBe(1);
    expect(state).toEqual({ finished: true, terminated: true });
  });
});
