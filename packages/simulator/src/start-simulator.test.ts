import { afterAll, describe, expect, test } from "bun:test";
import { startSimulator } from "./start-simulator";
import { AUTH, tok } from "./test-support";

describe("startSimulator over HTTP", async () => {
  const sim = await startSimulator({ port: 0, captureLimit: 2 });
  afterAll(() => sim.stop());
  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    fetch(`${sim.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });

  test("listens on 127.0.0.1 and serves all three protocols on one origin", async () => {
    expect(sim.url).toBe(`http://127.0.0.1:${sim.port}`);
    expect(sim.port).toBeGreaterThan(0);
    const a = await post(
      "/v1/messages",
      { model: "a", max_tokens: 5, messages: [{ role: "user", content: "Hi" }] },
      AUTH.messages,
    );
    const b = await post(
      "/v1/chat/completions",
      { model: "b", messages: [{ role: "user", content: "Hi" }] },
      AUTH.chat,
    );
    const g = await post(
      "/v1beta/models/g:generateContent",
      { contents: [{ parts: [{ text: "Hi" }] }] },
      AUTH.generate,
    );
    expect([a.status, b.status, g.status]).toEqual([200, 200, 200]);
    expect((await a.json()).usage.input_tokens).toBe(3 + tok("Hi"));
    expect((await b.json()).usage.prompt_tokens).toBe(3 + tok("Hi"));
    expect((await g.json()).usageMetadata.promptTokenCount).toBe(3 + tok("Hi"));
  });

  test("requests keeps the last captureLimit requests with method, path, headers and parsed body", async () => {
    await post("/v1/chat/completions", { model: "first", messages: [{ role: "user", content: "1" }] }, AUTH.chat);
    await post(
      "/v1beta/models/g:streamGenerateContent?alt=sse",
      { contents: [{ parts: [{ text: "2" }] }] },
      { "x-goog-api-key": "gk" },
    );
    expect(sim.requests).toHaveLength(2);
    expect(sim.requests[0]!.body).toMatchObject({ model: "first" });
    expect(sim.requests[1]).toMatchObject({
      method: "POST",
      path: "/v1beta/models/g:streamGenerateContent?alt=sse",
      body: { contents: [{ parts: [{ text: "2" }] }] },
    });
    expect(sim.requests[1]!.headers["x-goog-api-key"]).toBe("gk");
  });

  test("a stream arrives as chunked SSE and every reply carries x-simulator", async () => {
    const res = await post(
      "/v1/messages",
      { model: "a", max_tokens: 50, stream: true, messages: [{ role: "user", content: "Hi" }] },
      AUTH.messages,
    );
    expect(res.headers.get("x-simulator")).toBe("turnpike");
    expect(res.headers.get("content-length")).toBeNull();
    expect(await res.text()).toEndWith('event: message_stop\ndata: {"type":"message_stop"}\n\n');
  });
});

describe("latency and first byte", () => {
  test("latencyMs spaces the chunks out; firstByteMs delays the response", async () => {
    const sim = await startSimulator({ latencyMs: 25, firstByteMs: 40 });
    try {
      const started = performance.now();
      const res = await fetch(`${sim.url}/v1/chat/completions`, {
        method: "POST",
        headers: AUTH.chat,
        body: JSON.stringify({ model: "b", stream: true, messages: [{ role: "user", content: "Hi [sim chunks=3]" }] }),
      });
      // Lower bounds only: a timer never fires early, and a loaded machine only adds to them.
      expect(performance.now() - started).toBeGreaterThanOrEqual(35);
      const text = await res.text();
      // role + 3 content + finish + [DONE] = 6 frames, 25 ms apart after the first byte's 40 ms.
      expect(text.match(/^data: /gm)).toHaveLength(6);
      expect(performance.now() - started).toBeGreaterThanOrEqual(35 + 5 * 20);
    } finally {
      await sim.stop();
    }
  });
});

describe("midstream_error=reset over a socket", () => {
  test("the client gets the 200 and some bytes, then a broken connection", async () => {
    const sim = await startSimulator();
    try {
      const res = await fetch(`${sim.url}/v1/messages`, {
        method: "POST",
        headers: AUTH.messages,
        body: JSON.stringify({
          model: "a",
          max_tokens: 500,
          stream: true,
          messages: [{ role: "user", content: "[sim midstream_error=reset]" }],
        }),
      });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      let received = "";
      const read = async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          received += new TextDecoder().decode(value);
        }
      };
      await expect(read()).rejects.toThrow();
      expect(received).toStartWith("event: message_start\n");
      expect(received.includes("message_stop")).toBe(false);
    } finally {
      await sim.stop();
    }
  });
});
