import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CATALOG_IDS, readSSE, startHarness, type Harness } from "./harness";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const REPLY = "The quick brown fox jumps over the lazy dog.";

function messagesBody(model: string, stream: boolean) {
  return {
    model,
    max_tokens: 200,
    stream,
    system: "You are terse.",
    messages: [
      { role: "user", content: "Hello there" },
      { role: "assistant", content: "Hi! How can I help?" },
      { role: "user", content: `Say the sentence. [sim text="${REPLY}"]` },
    ],
  };
}

function chatBody(model: string, stream: boolean, includeUsage = false) {
  return {
    model,
    stream,
    ...(stream && includeUsage ? { stream_options: { include_usage: true } } : {}),
    messages: [
      { role: "system", content: "You are terse." },
      { role: "user", content: "Hello there" },
      { role: "assistant", content: "Hi! How can I help?" },
      { role: "user", content: `Say the sentence. [sim text="${REPLY}"]` },
    ],
  };
}

describe("messages format × every catalog model", () => {
  for (const model of CATALOG_IDS) {
    test(`${model} JSON`, async () => {
      const res = await h.call("/v1/messages", {
        method: "POST",
        dialect: "messages",
        body: JSON.stringify(messagesBody(model, false)),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-turnpike-upstream")).toBe("simulator");
      expect(res.headers.get("request-id")).toMatch(/^req_[0-9a-f]{32}$/);
      const body = (await res.json()) as Record<string, any>;
      expect(body.type).toBe("message");
      expect(body.id).toMatch(/^msg_/);
      expect(body.model).toBe(model);
      expect(body.role).toBe("assistant");
      expect(body.content).toEqual([{ type: "text", text: REPLY }]);
      expect(body.stop_reason).toBe("end_turn");
      expect(body.usage.input_tokens).toBeGreaterThan(10);
      expect(body.usage.output_tokens).toBeGreaterThan(5);
    });

    test(`${model} stream`, async () => {
      const res = await h.call("/v1/messages", {
        method: "POST",
        dialect: "messages",
        body: JSON.stringify(messagesBody(model, true)),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toStartWith("text/event-stream");
      expect(res.headers.get("cache-control")).toBe("no-cache");
      const frames = await readSSE(res);
      // Every frame names its event, and the name equals the JSON type.
      for (const f of frames) expect(f.event).toBe(JSON.parse(f.data).type);
      const types = frames.map((f) => f.event).filter((t) => t !== "ping");
      expect(types[0]).toBe("message_start");
      expect(types[1]).toBe("content_block_start");
      expect(types.at(-3)).toBe("content_block_stop");
      expect(types.at(-2)).toBe("message_delta");
      expect(types.at(-1)).toBe("message_stop");
      const start = JSON.parse(frames[0]!.data);
      expect(start.message.model).toBe(model);
      expect(start.message.id).toMatch(/^msg_/);
      expect(start.message.usage.input_tokens).toBeGreaterThan(10);
      const text = frames
        .filter((f) => f.event === "content_block_delta")
        .map((f) => JSON.parse(f.data).delta.text)
        .join("");
      expect(text).toBe(REPLY);
      const delta = JSON.parse(frames.find((f) => f.event === "message_delta")!.data);
      expect(delta.delta.stop_reason).toBe("end_turn");
      expect(delta.usage.output_tokens).toBeGreaterThan(5);
    });
  }
});

describe("chat completions format × every catalog model", () => {
  for (const model of CATALOG_IDS) {
    test(`${model} JSON`, async () => {
      const res = await h.call("/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify(chatBody(model, false)),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, any>;
      expect(body.object).toBe("chat.completion");
      expect(body.id).toMatch(/^chatcmpl-/);
      expect(body.model).toBe(model);
      expect(body.choices).toHaveLength(1);
      expect(body.choices[0].message.role).toBe("assistant");
      expect(body.choices[0].message.content).toBe(REPLY);
      expect(body.choices[0].finish_reason).toBe("stop");
      expect(body.usage.prompt_tokens).toBeGreaterThan(10);
      expect(body.usage.completion_tokens).toBeGreaterThan(5);
      expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
    });

    test(`${model} stream`, async () => {
      const res = await h.call("/v1/chat/completions", { method: "POST", body: JSON.stringify(chatBody(model, true)) });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toStartWith("text/event-stream");
      const frames = await readSSE(res);
      for (const f of frames) expect(f.event).toBeUndefined();
      expect(frames.at(-1)!.data).toBe("[DONE]");
      const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data));
      const ids = new Set(chunks.map((c) => c.id));
      expect(ids.size).toBe(1);
      expect([...ids][0]).toMatch(/^chatcmpl-/);
      for (const c of chunks) {
        expect(c.object).toBe("chat.completion.chunk");
        expect(c.model).toBe(model);
      }
      expect(chunks[0].choices[0].delta.role).toBe("assistant");
      const text = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
      expect(text).toBe(REPLY);
      expect(chunks.at(-1).choices[0].finish_reason).toBe("stop");
      // No usage chunk: the client did not ask for one.
      expect(chunks.some((c) => Array.isArray(c.choices) && c.choices.length === 0)).toBe(false);
    });

    test(`${model} stream with include_usage`, async () => {
      const res = await h.call("/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify(chatBody(model, true, true)),
      });
      const frames = await readSSE(res);
      expect(frames.at(-1)!.data).toBe("[DONE]");
      const last = JSON.parse(frames.at(-2)!.data);
      expect(last.choices).toEqual([]);
      expect(last.usage.prompt_tokens).toBeGreaterThan(10);
      expect(last.usage.completion_tokens).toBeGreaterThan(5);
      expect(last.usage.total_tokens).toBe(last.usage.prompt_tokens + last.usage.completion_tokens);
    });
  }
});

describe("usage is metered at the same price through either endpoint", () => {
  test("the same model and reply cost the same via messages and chat", async () => {
    const model = "gamma-3-flash";
    const a = await h.call("/v1/messages", {
      method: "POST",
      dialect: "messages",
      body: JSON.stringify(messagesBody(model, false)),
    });
    const ma = (await a.json()) as any;
    const b = await h.call("/v1/chat/completions", { method: "POST", body: JSON.stringify(chatBody(model, false)) });
    const mb = (await b.json()) as any;
    expect(ma.usage.output_tokens).toBe(mb.usage.completion_tokens);
    const usage = await fetch(`${h.url}/admin/usage?model=${model}`, {
      headers: { authorization: "Bearer sk-admin-test-0123456789abcdefghijklmnop" },
    });
    const rows = ((await usage.json()) as { data: any[] }).data;
    const byId = new Map(rows.map((r) => [r.request_id, r]));
    const ra = byId.get(a.headers.get("x-request-id"));
    const rb = byId.get(b.headers.get("x-request-id"));
    expect(ra.endpoint).toBe("messages");
    expect(rb.endpoint).toBe("chat");
    expect(ra.output_tokens).toBe(ma.usage.output_tokens);
    expect(rb.input_tokens).toBe(mb.usage.prompt_tokens);
    // gamma-3-flash: $0.5 in, $2.5 out per million.
    expect(ra.cost_usd).toBeCloseTo((ra.input_tokens * 0.5 + ra.output_tokens * 2.5) / 1e6, 12);
    expect(rb.cost_usd).toBeCloseTo((rb.input_tokens * 0.5 + rb.output_tokens * 2.5) / 1e6, 12);
    // The two requests say the same thing, so the upstream saw the same prompt: same bill.
    expect(ra.input_tokens).toBe(rb.input_tokens);
    expect(ra.cost_usd).toBe(rb.cost_usd);
  });
});
