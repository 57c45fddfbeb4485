/**
 * The pipeline's lifecycle events, seen from a subscriber of a running gateway: one inference
 * request emits onStart → onAttempt → onUpstreamResponse → onFinish under the request id the
 * client is given, and onFinish carries the record the ledger keeps.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { PipelineHooks } from "../src/request/events";
import type { UsageRecord } from "../src/storage/store";
import { readSSE, startHarness, type Harness } from "./harness";

interface Seen {
  event: keyof PipelineHooks;
  id: string;
  detail: unknown;
}

let seen: Seen[] = [];
const finishes: { status: number; record: UsageRecord | undefined }[] = [];
const recorder: PipelineHooks = {
  onStart: (ctx) => seen.push({ event: "onStart", id: ctx.id, detail: ctx.format.id }),
  onAttempt: (ctx, target, attempt) =>
    seen.push({ event: "onAttempt", id: ctx.id, detail: `${target.entry.id}#${attempt}` }),
  onUpstreamResponse: (ctx, status, ms) =>
    seen.push({ event: "onUpstreamResponse", id: ctx.id, detail: ms >= 0 ? status : "negative ms" }),
  onFinish: (ctx, status, record) => {
    seen.push({ event: "onFinish", id: ctx.id, detail: status });
    finishes.push({ status, record });
  },
};
// A broken subscriber before the recorder: the request and the other subscriber go on.
const broken: PipelineHooks = {
  onStart: () => {
    throw new Error("broken subscriber");
  },
};

let h: Harness;
beforeAll(async () => {
  h = await startHarness({}, { hooks: [broken, recorder] });
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  seen = [];
  finishes.length = 0;
});

async function ledgerRow(requestId: string): Promise<UsageRecord | undefined> {
  await h.gw.deps.ledger.flush();
  return (await h.gw.deps.store.queryUsage({ key_id: h.keyId })).find((r) => r.request_id === requestId);
}

describe("lifecycle events of one inference request", () => {
  test("chat JSON: the four events in order, under the x-request-id; onFinish's record is the ledger row", async () => {
    const res = await h.call("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({ model: "beta-5.5", messages: [{ role: "user", content: "Say hi" }] }),
    });
    expect(res.status).toBe(200);
    await res.json();
    const id = res.headers.get("x-request-id")!;
    expect(id).toStartWith("req_");
    expect(seen).toEqual([
      { event: "onStart", id, detail: "chat" },
      { event: "onAttempt", id, detail: "beta-5.5#1" },
      { event: "onUpstreamResponse", id, detail: 200 },
      { event: "onFinish", id, detail: 200 },
    ]);
    const record = finishes[0]!.record!;
    expect(record.request_id).toBe(id);
    expect(record.output_tokens).toBeGreaterThan(0);
    expect(await ledgerRow(id)).toEqual(record);
  });

  test("messages stream from a generate upstream: the same order; the record is made when the stream ends", async () => {
    const res = await h.call("/v1/messages", {
      method: "POST",
      dialect: "messages",
      body: JSON.stringify({
        model: "gamma-3-flash",
        max_tokens: 64,
        stream: true,
        messages: [{ role: "user", content: "Count to three" }],
      }),
    });
    expect(res.status).toBe(200);
    const id = res.headers.get("x-request-id")!;
    expect(res.headers.get("request-id")).toBe(id);
    const frames = await readSSE(res);
    expect(frames.at(-1)!.event).toBe("message_stop");
    await h.gw.deps.ledger.flush();
    expect(seen.map((s) => s.event)).toEqual(["onStart", "onAttempt", "onUpstreamResponse", "onFinish"]);
    expect(new Set(seen.map((s) => s.id))).toEqual(new Set([id]));
    const record = finishes[0]!.record!;
    expect(record).toMatchObject({
      request_id: id,
      model: "gamma-3-flash",
      endpoint: "messages",
      stream: true,
      status: 200,
      upstream_status: 200,
    });
    expect(await ledgerRow(id)).toEqual(record);
  });

  test("an upstream error: onUpstreamResponse has its status; onFinish the client's, with the record", async () => {
    const res = await h.call("/v1/messages", {
      method: "POST",
      dialect: "messages",
      body: JSON.stringify({
        model: "alpha-haiku-4-5",
        max_tokens: 64,
        messages: [{ role: "user", content: "fail [sim error=529]" }],
      }),
    });
    const id = res.headers.get("x-request-id")!;
    expect(res.status).toBe(529);
    expect(seen.map((s) => [s.event, s.detail])).toEqual([
      ["onStart", "messages"],
      ["onAttempt", "alpha-haiku-4-5#1"],
      ["onUpstreamResponse", 529],
      ["onFinish", 529],
    ]);
    expect(finishes[0]!.record?.upstream_status).toBe(529);
    expect(await ledgerRow(id)).toEqual(finishes[0]!.record!);
  });

  test("a request refused before any upstream call: onStart and onFinish only, no record", async () => {
    const res = await h.call("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(404);
    const id = res.headers.get("x-request-id")!;
    expect(seen).toEqual([
      { event: "onStart", id, detail: "chat" },
      { event: "onFinish", id, detail: 404 },
    ]);
    expect(finishes[0]!.record).toBeUndefined();
    expect(await ledgerRow(id)).toBeUndefined();
  });
});
