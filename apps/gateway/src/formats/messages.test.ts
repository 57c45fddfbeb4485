import { describe, expect, test } from "bun:test";
import { GatewayError } from "@turnpike/providers";
import { PIVOT_EVENTS } from "../../test/support/test-deps";
import { formatOfHeaders, formatOfPath, FORMATS } from "./index";
import { messagesFormat } from "./messages";

const valid = { model: "alpha-opus-4-8", max_tokens: 100, messages: [{ role: "user", content: "hi" }] };

function thrown(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
  throw new Error("expected a GatewayError");
}

describe("messages format: validate", () => {
  test("a valid body → the client request's facts; the pivot is the body itself", () => {
    const r = messagesFormat.validate({ ...valid, stream: true, extra_field: 1 });
    expect(r.model).toBe("alpha-opus-4-8");
    expect(r.stream).toBe(true);
    expect(r.includeUsage).toBe(false);
    expect(r.body.extra_field).toBe(1);
    const pivot = r.toPivot("generate");
    expect(pivot.warnings).toEqual([]);
    expect(pivot.request.max_tokens).toBe(100);
    expect(messagesFormat.validate(valid).stream).toBe(false);
  });

  test("an invalid body → a 400 naming the field and the rule", () => {
    const err = thrown(() => messagesFormat.validate({ ...valid, max_tokens: "many" }));
    expect(err.status).toBe(400);
    expect(err.type).toBe("invalid_request_error");
    expect(err.param).toBe("max_tokens");
    expect(err.message).toContain("max_tokens: must be an integer");
    const missing = thrown(() => messagesFormat.validate({ messages: valid.messages, max_tokens: 1 }));
    expect(missing.param).toBe("model");
  });
});

describe("messages format: errors and headers", () => {
  test("503 is rendered as 529 overloaded; the body carries the request id", () => {
    const r = messagesFormat.renderError(new GatewayError({ status: 503, message: "busy" }), "req_abc");
    expect(r.status).toBe(529);
    expect(r.body).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "busy" },
      request_id: "req_abc",
    });
  });

  test("other statuses keep their status and take the format's type", () => {
    const r = messagesFormat.renderError(
      new GatewayError({ status: 402, type: "billing_error", message: "spent" }),
      "req_1",
    );
    expect(r.status).toBe(402);
    expect(r.body).toMatchObject({ type: "error", error: { type: "billing_error", message: "spent" } });
    const limited = messagesFormat.renderError(
      new GatewayError({ status: 429, type: "tokens", message: "slow" }),
      "req_2",
    );
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ error: { type: "rate_limit_error" } });
  });

  test("idHeaders: both request-id headers", () => {
    expect(messagesFormat.idHeaders("req_9")).toEqual({ "x-request-id": "req_9", "request-id": "req_9" });
  });
});

describe("messages format: stream framing", () => {
  test("terminal frame, in-band error and isTerminal", () => {
    expect(messagesFormat.terminalFrame).toBe('event: message_stop\ndata: {"type":"message_stop"}\n\n');
    const err = messagesFormat.inBandError("cut off");
    expect(err).toBe('event: error\ndata: {"type":"error","error":{"type":"api_error","message":"cut off"}}\n\n');
    expect(messagesFormat.isTerminal(err)).toBe(true);
    expect(messagesFormat.isTerminal(messagesFormat.terminalFrame)).toBe(true);
    expect(messagesFormat.isTerminal('event: message_delta\ndata: {"type":"message_delta"}\n\n')).toBe(false);
    expect(new TextDecoder().decode(messagesFormat.keepAlive)).toBe('event: ping\ndata: {"type":"ping"}\n\n');
  });

  test("the encoder writes each pivot event as its own SSE frame, unchanged", () => {
    const frames: string[] = [];
    const client = messagesFormat.validate({
      model: "alpha-opus-4-8",
      max_tokens: 10,
      messages: [{ role: "user", content: "Hi" }],
    });
    const enc = client.encoder("alpha-opus-4-8", (f: string) => frames.push(f));
    for (const ev of PIVOT_EVENTS) enc.push(ev);
    enc.end();
    expect(frames.map((f) => f.split("\n")[0])).toEqual([
      "event: message_start",
      "event: content_block_start",
      "event: content_block_delta",
      "event: content_block_stop",
      "event: message_delta",
      "event: message_stop",
    ]);
    expect(JSON.parse(frames[2]!.split("data: ")[1]!)).toEqual(PIVOT_EVENTS[2]);
    expect(frames[5]).toBe(messagesFormat.terminalFrame);
  });
});

describe("format registry", () => {
  test("formatOfHeaders: the messages format by its key or version header, else chat", () => {
    expect(formatOfHeaders(new Headers({ "x-api-key": "sk-x" })).id).toBe("messages");
    expect(formatOfHeaders(new Headers({ "anthropic-version": "2023-06-01" })).id).toBe("messages");
    expect(formatOfHeaders(new Headers({ "alpha-version": "2023-06-01" })).id).toBe("messages");
    expect(formatOfHeaders(new Headers({ authorization: "Bearer sk-x" })).id).toBe("chat");
    expect(formatOfHeaders(new Headers()).id).toBe("chat");
  });

  test("formatOfPath: by path prefix first, then by headers", () => {
    const messagesHeaders = new Headers({ "x-api-key": "sk-x" });
    expect(formatOfPath("/v1/messages/count_tokens", new Headers()).id).toBe("messages");
    expect(formatOfPath("/v1/chat/whatever", messagesHeaders).id).toBe("chat");
    expect(formatOfPath("/v1/models", messagesHeaders).id).toBe("messages");
    expect(formatOfPath("/v1/models", new Headers()).id).toBe("chat");
  });

  test("every format is registered under its own id", () => {
    for (const [id, f] of Object.entries(FORMATS)) expect(f.id).toBe(id as typeof f.id);
    expect(FORMATS.messages.endpoint).toBe("messages");
    expect(FORMATS.chat.endpoint).toBe("chat");
  });
});
