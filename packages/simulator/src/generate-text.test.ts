import { describe, expect, test } from "bun:test";
import { AUTH, PATH, defaultReply, payloads, sim, tok } from "./test-support";

const MODEL = "gamma-3-pro";
const body = (extra: Record<string, unknown> = {}, text = "Hello there") => ({
  systemInstruction: { parts: [{ text: "Be brief." }] },
  contents: [{ role: "user", parts: [{ text }] }],
  ...extra,
});
const INPUT = 3 + tok("Be brief.") + 3 + tok("Hello there");
const TEXT = defaultReply(MODEL, "Hello there");
const usage = (candidates: number) => ({
  promptTokenCount: INPUT,
  candidatesTokenCount: candidates,
  totalTokenCount: INPUT + candidates,
  promptTokensDetails: [{ modality: "TEXT", tokenCount: INPUT }],
});

describe("generateContent protocol, text replies", () => {
  test("JSON reply: the real envelope, the deterministic text and exact usageMetadata", async () => {
    const res = await sim().post(PATH.generate(MODEL), body(), AUTH.generate);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-simulator")).toBe("turnpike");
    expect(await res.json()).toEqual({
      candidates: [{ content: { parts: [{ text: TEXT }], role: "model" }, finishReason: "STOP", index: 0 }],
      usageMetadata: usage(tok(TEXT)),
      modelVersion: MODEL,
      responseId: expect.stringMatching(/^sim\d+$/),
    });
  });

  test("alt=sse stream: CRLF framing, no event lines, no [DONE], cumulative usage, finish on a last empty part", async () => {
    const res = await sim().post(`${PATH.generate(MODEL, "streamGenerateContent")}?alt=sse`, body(), AUTH.generate);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const raw = await res.text();
    const frames = raw.split("\r\n\r\n");
    expect(frames.at(-1)).toBe("");
    expect(frames).toHaveLength(12 + 1 + 1);
    for (const f of frames.slice(0, -1)) {
      expect(f.startsWith("data: ")).toBe(true);
      expect(f.includes("\n")).toBe(false);
    }
    expect(raw.includes("event:")).toBe(false);
    expect(raw.includes("[DONE]")).toBe(false);
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.slice(6)));
    let sent = "";
    for (const c of chunks.slice(0, 12)) {
      sent += c.candidates[0].content.parts[0].text;
      expect(c.candidates[0].finishReason).toBeUndefined();
      expect(c.usageMetadata).toEqual(usage(tok(sent)));
    }
    expect(sent).toBe(TEXT);
    expect(chunks[12].candidates).toEqual([
      { content: { parts: [{ text: "" }], role: "model" }, finishReason: "STOP", index: 0 },
    ]);
    expect(chunks[12].usageMetadata).toEqual(usage(tok(TEXT)));
    expect(new Set(chunks.map((c) => c.responseId)).size).toBe(1);
  });

  test("the repo's SSE decoder reads the CRLF stream", async () => {
    const chunks = await payloads(
      await sim().post(
        `${PATH.generate(MODEL, "streamGenerateContent")}?alt=sse`,
        body({}, "Hi [sim chunks=2]"),
        AUTH.generate,
      ),
    );
    expect(chunks).toHaveLength(3);
  });

  test("without alt=sse the stream is one JSON array", async () => {
    const res = await sim().post(
      PATH.generate(MODEL, "streamGenerateContent"),
      body({}, "Hi [sim chunks=3]"),
      AUTH.generate,
    );
    expect(res.headers.get("content-type")).toBe("application/json");
    const arr = JSON.parse(await res.text());
    expect(arr).toHaveLength(4);
    expect(arr[3].candidates[0].finishReason).toBe("STOP");
  });

  test("countTokens reports the same prompt tokens, plain or wrapped in generateContentRequest", async () => {
    const s = sim();
    expect(await (await s.post(PATH.generate(MODEL, "countTokens"), body(), AUTH.generate)).json()).toEqual({
      totalTokens: INPUT,
    });
    const wrapped = { generateContentRequest: { model: `models/${MODEL}`, ...body() } };
    expect(await (await s.post(PATH.generate(MODEL, "countTokens"), wrapped, AUTH.generate)).json()).toEqual({
      totalTokens: INPUT,
    });
  });

  test("maxOutputTokens caps the text and finishes with MAX_TOKENS", async () => {
    const json = await (
      await sim().post(PATH.generate(MODEL), body({ generationConfig: { maxOutputTokens: 6 } }), AUTH.generate)
    ).json();
    expect(json.candidates[0].finishReason).toBe("MAX_TOKENS");
    expect(tok(json.candidates[0].content.parts[0].text)).toBe(6);
    expect(json.usageMetadata.candidatesTokenCount).toBe(6);
  });

  test("stopSequences cut the text; finishReason STOP", async () => {
    const json = await (
      await sim().post(
        PATH.generate(MODEL),
        body({ generationConfig: { stopSequences: ["three"] } }, '[sim text="one two three four"]'),
        AUTH.generate,
      )
    ).json();
    expect(json.candidates[0].content.parts).toEqual([{ text: "one two " }]);
    expect(json.candidates[0].finishReason).toBe("STOP");
  });

  test("the model comes from the URL, URL-encoded or not", async () => {
    const json = await (
      await sim().post(PATH.generate(encodeURIComponent("gamma x/1")), body({}, '[sim text="ok"]'), AUTH.generate)
    ).json();
    expect(json.modelVersion).toBe("gamma x/1");
  });
});
