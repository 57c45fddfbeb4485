import { describe, expect, test } from "bun:test";
import { GatewayError } from "@turnpike/providers";
import type { MessagesResponse } from "@turnpike/schema";
import { PIVOT_EVENTS } from "../../test/support/test-deps";
import { chatFormat, DEFAULT_MAX_TOKENS } from "./chat";

const messages = [
  { role: "system", content: "be brief" },
  { role: "user", content: "hi" },
];

function thrown(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
  throw new Error("expected a GatewayError");
}

function encode(includeUsage: boolean): string[] {
  const frames: string[] = [];
  const body = {
    model: "beta-5.5",
    messages: [{ role: "user", content: "Hi" }],
    stream: true,
    ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
  };
  const enc = chatFormat.validate(body).encoder("beta-5.5", (f: string) => frames.push(f));
  for (const ev of PIVOT_EVENTS) enc.push(ev);
  enc.end();
  return frames;
}

const payload = (frame: string) => JSON.parse(frame.slice("data: ".length)) as Record<string, any>;

describe("chat format: validate", () => {
  test("a valid streaming body → model, stream and includeUsage", () => {
    const r = chatFormat.validate({
      model: "beta-5.5",
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(r.model).toBe("beta-5.5");
    expect(r.stream).toBe(true);
    expect(r.includeUsage).toBe(true);
    const plain = chatFormat.validate({ model: "beta-5.5", messages, stream: true });
    expect(plain.includeUsage).toBe(false);
    expect(chatFormat.validate({ model: "beta-5.5", messages }).stream).toBe(false);
  });

  test("toPivot: system moved out, the default output cap, warnings for what the target cannot carry", () => {
    const r = chatFormat.validate({ model: "beta-5.5", messages, seed: 3 });
    const toMessages = r.toPivot("messages");
    expect(toMessages.request.system).toBe("be brief");
    expect(toMessages.request.max_tokens).toBe(DEFAULT_MAX_TOKENS);
    expect(toMessages.request.messages).toEqual([{ role: "user", content: [{ type: "text", text: "hi" }] }]);
    expect(toMessages.warnings.map((w) => w.param)).toEqual(["seed"]);
    // The same request kept for a chat upstream warns of nothing.
    expect(r.toPivot("chat").warnings).toEqual([]);
    expect(
      chatFormat.validate({ model: "beta-5.5", messages, max_tokens: 50 }).toPivot("messages").request.max_tokens,
    ).toBe(50);
  });

  test("an invalid body → a 400 naming the field", () => {
    const err = thrown(() => chatFormat.validate({ model: "beta-5.5", messages, max_tokens: "x" }));
    expect(err.status).toBe(400);
    expect(err.param).toBe("max_tokens");
    expect(err.message).toStartWith("max_tokens: must be an integer");
    const noModel = thrown(() => chatFormat.validate({ messages }));
    expect(noModel.param).toBe("model");
    expect(noModel.message).toContain("required string");
  });
});

describe("chat format: errors and headers", () => {
  test("529 becomes 503 server_is_overloaded", () => {
    const r = chatFormat.renderError(new GatewayError({ status: 529, message: "busy" }), "req_1");
    expect(r.status).toBe(503);
    expect(r.body).toEqual({
      error: { message: "busy", type: "service_unavailable_error", param: null, code: "server_is_overloaded" },
    });
  });

  test("402 becomes 429 insufficient_quota", () => {
    const r = chatFormat.renderError(
      new GatewayError({ status: 402, type: "billing_error", code: "insufficient_quota", message: "spent" }),
      "req_1",
    );
    expect(r.status).toBe(429);
    expect(r.body).toEqual({
      error: { message: "spent", type: "insufficient_quota", param: null, code: "insufficient_quota" },
    });
  });

  test("other statuses pass; the body has no request id; param is kept", () => {
    const r = chatFormat.renderError(
      new GatewayError({ status: 400, type: "invalid_request_error", message: "bad", param: "n" }),
      "req_1",
    );
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: { message: "bad", type: "invalid_request_error", param: "n", code: null } });
    expect(chatFormat.renderError(new GatewayError({ status: 401, message: "who" }), "req_1").body).toMatchObject({
      error: { code: "invalid_api_key" },
    });
  });

  test("idHeaders: x-request-id only", () => {
    expect(chatFormat.idHeaders("req_7")).toEqual({ "x-request-id": "req_7" });
  });

  test("claims nothing by headers", () => {
    expect(chatFormat.claims(new Headers({ "x-api-key": "sk-x", authorization: "Bearer sk-x" }))).toBe(false);
  });
});

describe("chat format: stream framing", () => {
  test("[DONE] ends a stream; an in-band error is an error chunk then [DONE]", () => {
    expect(chatFormat.terminalFrame).toBe("data: [DONE]\n\n");
    const err = chatFormat.inBandError("cut off");
    expect(err).toBe(
      'data: {"error":{"message":"cut off","type":"server_error","param":null,"code":null}}\n\ndata: [DONE]\n\n',
    );
    expect(chatFormat.isTerminal(err)).toBe(true);
    expect(chatFormat.isTerminal('data: {"choices":[]}\n\n')).toBe(false);
    expect(new TextDecoder().decode(chatFormat.keepAlive)).toBe(": keep-alive\n\n");
  });

  test("the encoder: role chunk, content chunk, finish chunk, then [DONE]", () => {
    const frames = encode(false);
    expect(frames).toHaveLength(4);
    expect(frames[3]).toBe("data: [DONE]\n\n");
    const [first, text, finish] = frames.slice(0, 3).map(payload);
    for (const c of [first, text, finish]) {
      expect(c!.object).toBe("chat.completion.chunk");
      expect(c!.model).toBe("beta-5.5");
    }
    expect(first!.choices[0].delta).toEqual({ role: "assistant", content: "" });
    expect(text!.choices[0].delta).toEqual({ content: "Hello" });
    expect(finish!.choices[0]).toMatchObject({ delta: {}, finish_reason: "stop" });
    expect(frames.some((f) => f.includes('"usage"'))).toBe(false);
  });

  test("with include_usage, a usage chunk with no choices comes just before [DONE]", () => {
    const frames = encode(true);
    expect(frames).toHaveLength(5);
    const usage = payload(frames[3]!);
    expect(usage.choices).toEqual([]);
    expect(usage.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
    expect(frames[4]).toBe("data: [DONE]\n\n");
  });

  test("encodeReply: the pivot reply as a chat completion under the client's model id", () => {
    const reply: MessagesResponse = {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "upstream-id",
      content: [{ type: "text", text: "Hi" }],
      stop_reason: "max_tokens",
      stop_sequence: null,
      usage: { input_tokens: 3, output_tokens: 2 },
    } as MessagesResponse;
    const out = chatFormat
      .validate({ model: "beta-5.5", messages: [{ role: "user", content: "Hi" }] })
      .encodeReply(reply, "beta-5.5") as Record<string, any>;
    expect(out.object).toBe("chat.completion");
    expect(out.model).toBe("beta-5.5");
    expect(out.choices[0].message).toMatchObject({ role: "assistant", content: "Hi" });
    expect(out.choices[0].finish_reason).toBe("length");
    expect(out.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
  });
});
