import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Harness } from "../harness";
import {
  type BadUpstream,
  clientCall,
  errorMessageOf,
  recordsOf,
  startBadUpstream,
  startBadUpstreamGateway,
} from "./bad-upstream";
import { chatStream, messagesStream } from "./replies";

// Issue 11, items 5 and 7: one billing rule for upstream errors (before any output: recorded,
// billed nothing, on every route and format), the ledger's `status` is what the client saw and
// `upstream_status` what the vendor sent, one error type per vendor status, and a stream that
// failed midway is recorded as failed.

let bad: BadUpstream;
let h: Harness;
beforeAll(async () => {
  bad = startBadUpstream();
  h = await startBadUpstreamGateway(bad);
});
afterAll(async () => {
  await h.close();
  bad.stop();
});

const ROUTES = [
  ["messages", "alpha-haiku-4-5"],
  ["chat", "beta-5"],
  ["messages", "beta-5"],
  ["chat", "alpha-haiku-4-5"],
  ["messages", "gamma-3-flash"],
  ["chat", "gamma-3-flash"],
  ["responses", "alpha-haiku-4-5"],
  ["responses", "beta-5"],
] as const;

describe("an upstream error before any output is recorded and billed nothing, on every route", () => {
  for (const [format, model] of ROUTES) {
    for (const stream of [false, true]) {
      test(`${format} → ${model}, ${stream ? "stream" : "JSON"}: upstream 500`, async () => {
        bad.script({
          status: 500,
          type: "application/json",
          body: JSON.stringify({ error: { message: "boom", type: "server_error" } }),
        });
        const res = await clientCall(h, format, model, stream);
        expect(res.status).toBe(500);
        expect(res.headers.get("content-type")).toStartWith("application/json");
        errorMessageOf(format, await res.json());
        const records = await recordsOf(h, res.headers.get("x-request-id"));
        expect(records).toHaveLength(1);
        expect(records[0]).toMatchObject({
          status: 500,
          upstream_status: 500,
          input_tokens: 0,
          output_tokens: 0,
          cost_usd: 0,
        });
      });
    }
  }

  test("a stream that errs in-band before any text is billed nothing either", async () => {
    bad.script({
      type: "text/event-stream",
      body: [
        ...messagesStream({ cutAfter: 1 }),
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"busy"}}\n\n',
      ],
    });
    const res = await clientCall(h, "messages", "alpha-haiku-4-5", true);
    const text = await res.text();
    expect(text).toContain("event: error");
    const [r] = await recordsOf(h, res.headers.get("x-request-id"));
    expect(r).toMatchObject({ status: 502, upstream_status: 200, output_tokens: 0, cost_usd: 0 });
  });
});

describe("status bookkeeping", () => {
  test("an upstream 503: the client's status is recorded (chat 503, messages 529), the vendor's beside it", async () => {
    for (const [format, model, seen] of [
      ["chat", "beta-5", 503],
      ["messages", "beta-5", 529],
      ["chat", "alpha-haiku-4-5", 503],
      ["messages", "alpha-haiku-4-5", 529],
    ] as const) {
      bad.script({ status: 503, type: "text/plain", body: "upstream connect error" });
      const res = await clientCall(h, format, model, false);
      expect(res.status).toBe(seen);
      const [r] = await recordsOf(h, res.headers.get("x-request-id"));
      expect(r).toMatchObject({ status: seen, upstream_status: 503 });
    }
  });

  test("the same vendor status is the same error type whatever the vendor", async () => {
    // A messages vendor that labels its 503 `api_error`, a chat vendor and a generateContent vendor.
    const bodies: Record<string, string> = {
      "alpha-haiku-4-5": JSON.stringify({ type: "error", error: { type: "api_error", message: "unavailable" } }),
      "beta-5": JSON.stringify({ error: { message: "unavailable", type: "server_error" } }),
      "gamma-3-flash": JSON.stringify({ error: { code: 503, message: "unavailable", status: "UNAVAILABLE" } }),
    };
    const types = new Set<string>();
    for (const [model, body] of Object.entries(bodies)) {
      bad.script({ status: 503, type: "application/json", body });
      const res = await clientCall(h, "messages", model, false);
      expect(res.status).toBe(529);
      types.add(((await res.json()) as any).error.type);
    }
    expect([...types]).toEqual(["overloaded_error"]);
  });

  test("a stream cut off midway is recorded as failed (502), billed for what was relayed", async () => {
    for (const [format, model, frames] of [
      ["messages", "alpha-haiku-4-5", messagesStream({ cutAfter: 3, text: "Hello there, friend" })],
      ["chat", "beta-5", chatStream({ cutAfter: 2, text: "Hello there, friend" })],
      ["chat", "alpha-haiku-4-5", messagesStream({ cutAfter: 3, text: "Hello there, friend" })],
      ["messages", "beta-5", chatStream({ cutAfter: 2, text: "Hello there, friend" })],
    ] as const) {
      bad.script({ type: "text/event-stream", body: [...frames] });
      const res = await clientCall(h, format, model, true);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain("Hello there, friend");
      expect(text).toContain(format === "chat" ? '"error"' : "event: error");
      const [r] = await recordsOf(h, res.headers.get("x-request-id"));
      expect(r).toMatchObject({ status: 502, upstream_status: 200 });
      expect(r!.output_tokens).toBeGreaterThan(0);
      expect(r!.cost_usd).toBeGreaterThan(0);
    }
  });

  test("a complete stream is recorded as a plain 200", async () => {
    bad.script({ type: "text/event-stream", body: messagesStream() });
    const res = await clientCall(h, "messages", "alpha-haiku-4-5", true);
    await res.text();
    const [r] = await recordsOf(h, res.headers.get("x-request-id"));
    expect(r).toMatchObject({
      status: 200,
      upstream_status: 200,
      input_tokens: 12,
      output_tokens: 5,
      estimated: false,
    });
  });
});
