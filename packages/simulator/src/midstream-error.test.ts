import { describe, expect, test } from "bun:test";
import { AUTH, PATH, events, payloads, sim } from "./test-support";

const chunks6 = "[sim chunks=6 midstream_error]";

describe("[sim midstream_error]: a 200 stream that breaks after some chunks", () => {
  test("messages: event: error with overloaded_error after half the deltas, and no message_stop", async () => {
    const evs = await events(
      await sim().post(
        PATH.messages,
        { model: "a", max_tokens: 500, stream: true, messages: [{ role: "user", content: chunks6 }] },
        AUTH.messages,
      ),
    );
    expect(evs.filter((e) => e.event === "content_block_delta")).toHaveLength(3);
    expect(evs.at(-1)).toEqual({
      event: "error",
      data: JSON.stringify({
        type: "error",
        error: { details: null, type: "overloaded_error", message: "Overloaded" },
      }),
    });
    expect(
      evs.some((e) => e.event === "message_stop" || e.event === "message_delta" || e.event === "content_block_stop"),
    ).toBe(false);
  });

  test("chat: data {error:{…}} then [DONE], no finish chunk", async () => {
    const res = await sim().post(
      PATH.chat,
      {
        model: "b",
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: "user", content: chunks6 }],
      },
      AUTH.chat,
    );
    expect(res.status).toBe(200);
    const all = await payloads(res);
    expect(all.at(-1)).toBe("[DONE]");
    expect(all.at(-2)).toEqual({
      error: { message: expect.any(String), type: "server_error", param: null, code: null },
    });
    const content = all.slice(0, -2);
    expect(content).toHaveLength(1 + 3);
    expect(content.every((c) => c.choices[0].finish_reason === null)).toBe(true);
  });

  test("generateContent: an error object event after the 200, then the stream ends without a finishReason", async () => {
    const all = await payloads(
      await sim().post(
        `${PATH.generate("g", "streamGenerateContent")}?alt=sse`,
        { contents: [{ parts: [{ text: chunks6 }] }] },
        AUTH.generate,
      ),
    );
    expect(all).toHaveLength(3 + 1);
    expect(all.at(-1)).toEqual({
      error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" },
    });
    expect(all.slice(0, -1).every((c) => c.candidates[0].finishReason === undefined)).toBe(true);
  });

  test("midstream_error=close ends the stream cleanly with no terminator", async () => {
    const all = await payloads(
      await sim().post(
        PATH.chat,
        { model: "b", stream: true, messages: [{ role: "user", content: "[sim chunks=6 midstream_error=close]" }] },
        AUTH.chat,
      ),
    );
    expect(all).toHaveLength(4);
    expect(all.includes("[DONE]")).toBe(false);
  });

  test("midstream_error=reset breaks the body: reading it fails", async () => {
    const res = await sim().post(
      PATH.messages,
      {
        model: "a",
        max_tokens: 500,
        stream: true,
        messages: [{ role: "user", content: "[sim midstream_error=reset]" }],
      },
      AUTH.messages,
    );
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow("simulated connection reset");
  });

  test("midstream_error applies with latency too (chunks pulled one by one)", async () => {
    const evs = await events(
      await sim({ latencyMs: 1 }).post(
        PATH.messages,
        { model: "a", max_tokens: 500, stream: true, messages: [{ role: "user", content: chunks6 }] },
        AUTH.messages,
      ),
    );
    expect(evs.at(-1)!.event).toBe("error");
  });
});
