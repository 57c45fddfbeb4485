import { describe, expect, test } from "bun:test";
import { AUTH, PATH, events, sim } from "./test-support";

const fixture = (file: string) => Bun.file(new URL(`./__fixtures__/${file}`, import.meta.url)).text();
const lines = async (file: string) => (await fixture(file)).split("\n").filter((l) => l.trim() !== "");

const messages = (name: string, stream: boolean) =>
  sim().post(
    PATH.messages,
    { model: "a", max_tokens: 50, stream, messages: [{ role: "user", content: `[sim replay=${name}]` }] },
    AUTH.messages,
  );
const chat = (name: string, stream: boolean) =>
  sim().post(
    PATH.chat,
    { model: "b", stream, messages: [{ role: "user", content: `[sim replay=${name}]` }] },
    AUTH.chat,
  );
const generate = (name: string, stream: boolean) =>
  sim().post(
    stream ? `${PATH.generate("g", "streamGenerateContent")}?alt=sse` : PATH.generate("g"),
    { contents: [{ parts: [{ text: `[sim replay=${name}]` }] }] },
    AUTH.generate,
  );

describe("[sim replay=<fixture>]: recorded vendor payloads, verbatim", () => {
  test.each([
    ["anthropic-text", messages],
    ["anthropic-tool", messages],
    ["openai-text", chat],
    ["openai-tool", chat],
    ["google-text", generate],
    ["google-tool", generate],
  ] as const)("%s JSON is the recorded body byte for byte", async (name, call) => {
    const res = await call(name, false);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(await fixture(`${name}.json`));
  });

  test.each(["anthropic-text", "anthropic-tool"])(
    "%s stream: each recorded payload with its event: line",
    async (name) => {
      const evs = await events(await messages(name, true));
      const recorded = await lines(`${name}.chunks.txt`);
      expect(evs.map((e) => e.data)).toEqual(recorded);
      expect(evs.map((e) => e.event)).toEqual(recorded.map((l) => JSON.parse(l).type));
    },
  );

  test.each(["openai-text", "openai-tool"])("%s stream: data: lines then [DONE]", async (name) => {
    const raw = await (await chat(name, true)).text();
    const recorded = await lines(`${name}.chunks.txt`);
    expect(raw).toBe([...recorded, "[DONE]"].map((l) => `data: ${l}\n\n`).join(""));
  });

  test.each(["google-text", "google-tool"])("%s stream: data: lines framed with CRLF", async (name) => {
    const raw = await (await generate(name, true)).text();
    expect(raw).toBe((await lines(`${name}.chunks.txt`)).map((l) => `data: ${l}\r\n\r\n`).join(""));
  });

  test.each([
    ["anthropic-400", messages, 400],
    ["openai-400", chat, 400],
    ["google-429", generate, 429],
  ] as const)("%s is an HTTP error with the recorded body, stream or not", async (name, call, status) => {
    for (const stream of [false, true]) {
      const res = await call(name, stream);
      expect(res.status).toBe(status);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(await res.text()).toBe(await fixture(`${name}.error.json`));
    }
  });

  test("an unknown replay name is a 400 that lists the known ones", async () => {
    const res = await chat("nope", false);
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toStartWith('simulator: unknown replay "nope" (known: anthropic-text,');
  });
});
