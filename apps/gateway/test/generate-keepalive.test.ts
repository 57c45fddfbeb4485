/**
 * A quiet generateContent stream gets keep-alives that every reader of the format takes: blank
 * lines, which an SSE parser reads as nothing and a reader that matches `^\s*data: ` from the
 * start of its buffer (the GenAI SDK inside Gemini CLI 0.61) skips as whitespace. The official
 * GenAI SDK rebuilds the reply across them.
 */
import { GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHarness, type Harness } from "./harness";

let h: Harness;
beforeAll(async () => {
  // Keep-alives every 20 ms, chunks every 150 ms: each gap between chunks holds some.
  h = await startHarness({ TURNPIKE_KEEPALIVE_SECONDS: "0.02" });
});
afterAll(async () => {
  await h.close();
});

const TEXT = "one two three four";
const prompt = `Say it. [sim text="${TEXT}" chunks=4 latency=150]`;

for (const model of ["alpha-haiku-4-5", "gamma-3-flash"]) {
  test(`${model}: keep-alives are blank lines between whole frames; the SDK reads through them`, async () => {
    const res = await fetch(`${h.url}/v1beta/models/${model}:streamGenerateContent?alt=sse`, {
      method: "POST",
      headers: { "x-goog-api-key": h.key, "content-type": "application/json" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: prompt }] }] }),
    });
    const raw = await res.text();
    const lines = raw.split(/\r?\n/);
    // Only data lines and blank lines: no comment, no event name.
    expect(lines.filter((l) => l !== "" && !l.startsWith("data: "))).toEqual([]);
    // More blank lines than the frames' own ends: keep-alives were sent.
    expect(lines.filter((l) => l === "").length).toBeGreaterThan(
      lines.filter((l) => l.startsWith("data: ")).length + 1,
    );

    const ai = new GoogleGenAI({ apiKey: h.key, httpOptions: { baseUrl: h.url } });
    let text = "";
    for await (const chunk of await ai.models.generateContentStream({ model, contents: prompt }))
      text += chunk.text ?? "";
    expect(text).toBe(TEXT);
  }, 15_000);
}
