/**
 * Traces over OTLP/HTTP to an in-process receiver: one server span per request, a client span per
 * upstream attempt under it, GenAI attributes, the request id, and an incoming `traceparent` joined.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../harness";
import { startOtlpReceiver, type ExportedSpan } from "./otlp-receiver";

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;
// A caller's trace: W3C trace context, version 00, sampled.
const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

let receiver: ReturnType<typeof startOtlpReceiver>;
let h: Harness;
const ids: Record<string, string> = {};
let spans: ExportedSpan[];

beforeAll(async () => {
  receiver = startOtlpReceiver();
  h = await startHarness({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: "turnpike-test" });
  const chat = await h.call("/v1/chat/completions", {
    method: "POST",
    headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
    body: JSON.stringify({ model: "beta-5.5", messages: [{ role: "user", content: "hi" }] }),
  });
  ids.chat = chat.headers.get("x-request-id")!;
  await chat.text();
  const failed = await h.call("/v1/messages", {
    method: "POST",
    dialect: "messages",
    body: JSON.stringify({
      model: "alpha-haiku-4-5",
      max_tokens: 32,
      messages: [{ role: "user", content: "fail [sim error=529]" }],
    }),
  });
  ids.failed = failed.headers.get("x-request-id")!;
  await failed.text();
  // Why each reply ended: a translated JSON reply cut at its cap, a passed-through stream.
  const capped = await h.call("/v1/messages", {
    method: "POST",
    dialect: "messages",
    body: JSON.stringify({
      model: "beta-5",
      max_tokens: 3,
      messages: [{ role: "user", content: "Tell me a long story" }],
    }),
  });
  ids.capped = capped.headers.get("x-request-id")!;
  await capped.text();
  const streamed = await h.call("/v1/chat/completions", {
    method: "POST",
    body: JSON.stringify({ model: "beta-5", stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  ids.streamed = streamed.headers.get("x-request-id")!;
  await streamed.text();
  // Closing the gateway shuts the tracer down, which exports every span still batched.
  await h.close();
  spans = receiver.spans;
});
afterAll(() => receiver.stop());

const spansOf = (requestId: string) => {
  const root = spans.find((s) => s.attributes["turnpike.request_id"] === requestId);
  if (!root) throw new Error(`no span for ${requestId}; got ${spans.map((s) => s.name).join(", ")}`);
  return { root, children: spans.filter((s) => s.parentSpanId === root.spanId) };
};

describe("tracing over OTLP/HTTP", () => {
  test("exported as OTLP JSON, under the configured service name", () => {
    expect(receiver.contentTypes.length).toBeGreaterThan(0);
    for (const t of receiver.contentTypes) expect(t).toContain("application/json");
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(["turnpike-test"]));
    expect(spans.length).toBe(8);
  });

  test("a request's span joins the caller's trace; its attempt is a child span; GenAI attributes on both", () => {
    const { root, children } = spansOf(ids.chat!);
    expect(root.traceId).toBe(CALLER_TRACE);
    expect(root.parentSpanId).toBe(CALLER_SPAN);
    expect(root.kind).toBe(SERVER);
    expect(root.name).toBe("chat beta-5.5");
    expect(root.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.system": "beta",
      "gen_ai.request.model": "beta-5.5",
      "http.response.status_code": 200,
      "turnpike.request_id": ids.chat,
    });
    expect(root.attributes["gen_ai.response.model"]).toBeString();
    expect(root.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
    expect(root.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
    expect(children.length).toBe(1);
    const attempt = children[0]!;
    expect(attempt.traceId).toBe(CALLER_TRACE);
    expect(attempt.kind).toBe(CLIENT);
    expect(attempt.attributes).toMatchObject({
      "gen_ai.system": "beta",
      "turnpike.attempt": 1,
      "http.response.status_code": 200,
    });
    expect(attempt.attributes["gen_ai.usage.output_tokens"]).toBe(root.attributes["gen_ai.usage.output_tokens"]!);
  });

  test("each reply's finish reason: the pivot's for a translated reply, the vendor's word for a passthrough", () => {
    expect(spansOf(ids.chat!).root.attributes["gen_ai.response.finish_reasons"]).toEqual(["stop"]);
    expect(spansOf(ids.capped!).root.attributes["gen_ai.response.finish_reasons"]).toEqual(["max_tokens"]);
    expect(spansOf(ids.streamed!).root.attributes["gen_ai.response.finish_reasons"]).toEqual(["stop"]);
    expect(spansOf(ids.failed!).root.attributes["gen_ai.response.finish_reasons"]).toBeUndefined();
  });

  test("off without an endpoint: the tracing packages are never loaded", async () => {
    const loaded = async (...args: string[]) => {
      const proc = Bun.spawn(["bun", `${import.meta.dir}/boot-probe.ts`, ...args], {
        stdout: "pipe",
        stderr: "inherit",
      });
      const out = await new Response(proc.stdout).text();
      expect(await proc.exited).toBe(0);
      return JSON.parse(out.trim().split("\n").at(-1)!) as string[];
    };
    const sdk = [
      "@opentelemetry/core",
      "@opentelemetry/exporter-trace-otlp-http",
      "@opentelemetry/resources",
      "@opentelemetry/sdk-trace",
    ];
    // The API package alone (a no-op until an SDK registers) comes with the metrics client.
    expect((await loaded()).filter((p) => p !== "@opentelemetry/api")).toEqual([]);
    expect(await loaded(receiver.url)).toEqual(expect.arrayContaining(sdk));
  });

  test("a request without traceparent starts its own trace; an upstream error marks both spans", () => {
    const { root, children } = spansOf(ids.failed!);
    expect(root.traceId).not.toBe(CALLER_TRACE);
    expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(root.parentSpanId ?? "").toBe("");
    expect(root.name).toBe("chat alpha-haiku-4-5");
    expect(root.attributes["http.response.status_code"]).toBe(529);
    expect(root.status?.code).toBe(ERROR);
    expect(children.length).toBe(1);
    expect(children[0]!.attributes["http.response.status_code"]).toBe(529);
    expect(children[0]!.status?.code).toBe(ERROR);
    // error.type, the conventions' class of the failure: the status on both.
    expect(root.attributes["error.type"]).toBe("529");
    expect(children[0]!.attributes["error.type"]).toBe("529");
    // A success carries none.
    expect(spansOf(ids.chat!).root.attributes["error.type"]).toBeUndefined();
  });
});
