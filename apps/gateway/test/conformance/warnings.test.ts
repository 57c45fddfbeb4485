/**
 * A parameter that cannot be carried to the chosen upstream gives an `x-turnpike-warning` header
 * or a clear 400 naming it, never a silent drop (issue item 6; rows of the table in
 * packages/providers/README.md "Warning vs 400"). Where the upstream can carry it, it is carried.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../harness";
import { asRecord, parseRecord } from "./outcome";
import { PNG_BASE64, WEATHER, chatTools } from "./tools";
import { ALPHA, BETA, GAMMA, type ClientFormat, type Upstream } from "./upstreams";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const HI = [{ role: "user", content: 'Hi [sim text="Fine."]' }];

async function send(client: ClientFormat, up: Upstream, extra: Record<string, unknown>) {
  const body = { model: up.model, ...(client === "messages" ? { max_tokens: 100 } : {}), messages: HI, ...extra };
  const res = await h.call(client === "messages" ? "/v1/messages" : "/v1/chat/completions", {
    method: "POST",
    dialect: client,
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const sent = asRecord(h.gw.simulator!.requests.at(-1)?.body);
  return { status: res.status, warning: res.headers.get("x-turnpike-warning"), body: parseRecord(text), sent };
}

describe("warnings: the call goes through, the header names what was not carried", () => {
  test("top_k (messages client) → chat upstream: warning, not sent; carried to the other two", async () => {
    const r = await send("messages", BETA, { top_k: 5 });
    expect(r.status).toBe(200);
    expect(r.warning).toBe("top_k: not supported by chat-completions upstreams");
    expect(r.sent.top_k).toBeUndefined();
    const a = await send("messages", ALPHA, { top_k: 5 });
    expect([a.warning, a.sent.top_k]).toEqual([null, 5]);
    const g = await send("messages", GAMMA, { top_k: 5 });
    expect([g.warning, g.sent.generationConfig.topK]).toEqual([null, 5]);
  });

  test("top_k on a stream: the warning is in the headers before the first event", async () => {
    const res = await h.call("/v1/messages", {
      method: "POST",
      dialect: "messages",
      body: JSON.stringify({ model: BETA.model, max_tokens: 100, stream: true, top_k: 5, messages: HI }),
    });
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    expect(res.headers.get("x-turnpike-warning")).toBe("top_k: not supported by chat-completions upstreams");
    await res.text();
  });

  test("seed (chat client) → messages upstream: warning, not sent; carried to generateContent", async () => {
    const r = await send("chat", ALPHA, { seed: 42 });
    expect(r.status).toBe(200);
    expect(r.warning).toStartWith("seed: ");
    expect(r.sent.seed).toBeUndefined();
    expect(r.sent.turnpike).toBeUndefined();
    const g = await send("chat", GAMMA, { seed: 42 });
    expect([g.warning, g.sent.generationConfig.seed]).toEqual([null, 42]);
  });

  test("temperature 1.5 (chat client) → messages upstream: clamped to 1, warning", async () => {
    const r = await send("chat", ALPHA, { temperature: 1.5 });
    expect(r.status).toBe(200);
    expect(r.warning).toBe("temperature: clamped from 1.5 to 1 (this upstream accepts 0-1)");
    expect(r.sent.temperature).toBe(1);
  });

  test("a cache breakpoint on a system block (messages client) → chat and generateContent: warning", async () => {
    const system = [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }];
    for (const up of [BETA, GAMMA]) {
      const r = await send("messages", up, { system });
      expect(r.status).toBe(200);
      expect(r.warning).toStartWith("cache_control: ");
    }
  });

  test("parallel_tool_calls: false (chat client) → generateContent: one warning, under the name the client sent", async () => {
    const r = await send("chat", GAMMA, { tools: chatTools(WEATHER), parallel_tool_calls: false });
    expect(r.status).toBe(200);
    expect(r.warning).toBe("parallel_tool_calls: this upstream has no way to limit parallel tool calls");
  });

  test("several: one warning per parameter", async () => {
    const r = await send("messages", BETA, { top_k: 5, service_tier: "auto" });
    expect(r.warning).toBe(
      "top_k: not supported by chat-completions upstreams, service_tier: not carried to chat-completions upstreams",
    );
  });
});

describe("400s: content the model would need, named in the client's own error shape", () => {
  for (const up of [GAMMA, ALPHA]) {
    test(`n: 2 (chat client) → ${up.label} upstream: 400 naming n`, async () => {
      const r = await send("chat", up, { n: 2 });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ type: "invalid_request_error", param: "n" });
      expect(r.body.error.message).toStartWith("n: ");
    });

    test(`image/bmp (chat client) → ${up.label} upstream: 400 naming the type`, async () => {
      const messages = [
        {
          role: "user",
          content: [
            { type: "image_url", image_url: { url: `data:image/bmp;base64,${PNG_BASE64}` } },
            { type: "text", text: "What is it?" },
          ],
        },
      ];
      const r = await send("chat", up, { messages });
      expect(r.status).toBe(400);
      expect(r.body.error.type).toBe("invalid_request_error");
      expect(r.body.error.message).toContain('"image/bmp" is not supported');
    });
  }

  test("a chat upstream takes both as they are (passthrough)", async () => {
    const r = await send("chat", BETA, { n: 2 });
    expect(r.status).toBe(200);
    expect(r.sent.n).toBe(2);
  });

  test("an image URL (messages client) → generateContent: 400 asking for base64", async () => {
    const messages = [
      {
        role: "user",
        content: [
          { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
          { type: "text", text: "What is it?" },
        ],
      },
    ];
    const r = await send("messages", GAMMA, { messages });
    expect(r.status).toBe(400);
    expect(r.body.type).toBe("error");
    expect(r.body.error.type).toBe("invalid_request_error");
    expect(r.body.error.message).toContain("send the content as base64");
  });
});
