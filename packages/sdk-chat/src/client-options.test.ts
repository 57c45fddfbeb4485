import { afterEach, describe, expect, test } from "bun:test";
import { hello, KEY, useMockGateway } from "../test/use-mock-gateway.js";
import ChatClient, { TurnpikeError, type Fetch } from "./index.js";

const { turnpike } = useMockGateway();

const saved = { key: process.env.TURNPIKE_API_KEY, base: process.env.TURNPIKE_BASE_URL };
afterEach(() => {
  if (saved.key === undefined) delete process.env.TURNPIKE_API_KEY;
  else process.env.TURNPIKE_API_KEY = saved.key;
  if (saved.base === undefined) delete process.env.TURNPIKE_BASE_URL;
  else process.env.TURNPIKE_BASE_URL = saved.base;
});

describe("ChatClient options", () => {
  test("apiKey and baseURL fall back to TURNPIKE_API_KEY and TURNPIKE_BASE_URL; /v1 is added", async () => {
    process.env.TURNPIKE_API_KEY = KEY;
    process.env.TURNPIKE_BASE_URL = "http://gateway.test";
    const client = new ChatClient();
    expect(client.baseURL).toBe("http://gateway.test/v1");
    await client.chat.completions.create(hello);
    expect(turnpike.lastRequest()?.apiKey).toBe(KEY);
  });

  test("without any base the default is http://localhost:8080/v1", () => {
    delete process.env.TURNPIKE_BASE_URL;
    expect(new ChatClient({ apiKey: "k" }).baseURL).toBe("http://localhost:8080/v1");
  });

  test("a missing key fails at construction with a clear message", () => {
    delete process.env.TURNPIKE_API_KEY;
    expect(() => new ChatClient()).toThrow(TurnpikeError);
    expect(() => new ChatClient()).toThrow("TURNPIKE_API_KEY");
  });

  test("an injected fetch carries every request", async () => {
    const seen: string[] = [];
    const fetch: Fetch = (input, init) => {
      seen.push(`${init?.method} ${String(input)}`);
      return globalThis.fetch(input, init);
    };
    await new ChatClient({ apiKey: KEY, baseURL: "http://gateway.test", fetch }).chat.completions.create(hello);
    expect(seen).toEqual(["POST http://gateway.test/v1/chat/completions"]);
  });

  test("defaultHeaders and per-call headers are sent", async () => {
    const client = new ChatClient({
      apiKey: KEY,
      baseURL: "http://gateway.test",
      defaultHeaders: { "x-team": "search" },
    });
    await client.chat.completions.create(hello, { headers: { "x-trace": "t1" } });
    const headers = turnpike.lastRequest()?.headers ?? {};
    expect([headers["x-team"], headers["x-trace"]]).toEqual(["search", "t1"]);
  });
});
