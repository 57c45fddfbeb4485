import { afterEach, describe, expect, test } from "bun:test";
import { hello, KEY, useMockGateway } from "../test/use-mock-gateway.js";
import MessagesClient, { TurnpikeError, type Fetch } from "./index.js";

const { turnpike } = useMockGateway();

const saved = { key: process.env.TURNPIKE_API_KEY, base: process.env.TURNPIKE_BASE_URL };
afterEach(() => {
  if (saved.key === undefined) delete process.env.TURNPIKE_API_KEY;
  else process.env.TURNPIKE_API_KEY = saved.key;
  if (saved.base === undefined) delete process.env.TURNPIKE_BASE_URL;
  else process.env.TURNPIKE_BASE_URL = saved.base;
});

describe("MessagesClient options", () => {
  test("apiKey and baseURL fall back to TURNPIKE_API_KEY and TURNPIKE_BASE_URL", async () => {
    process.env.TURNPIKE_API_KEY = KEY;
    process.env.TURNPIKE_BASE_URL = "http://gateway.test/v1";
    const client = new MessagesClient();
    expect(client.baseURL).toBe("http://gateway.test");
    await client.messages.create(hello);
    expect(turnpike.lastRequest()?.apiKey).toBe(KEY);
  });

  test("a missing key fails at construction with a clear message", () => {
    delete process.env.TURNPIKE_API_KEY;
    expect(() => new MessagesClient()).toThrow(TurnpikeError);
    expect(() => new MessagesClient()).toThrow("new MessagesClient({ apiKey })");
  });

  test("an injected fetch carries every request", async () => {
    const seen: string[] = [];
    const fetch: Fetch = (input, init) => {
      seen.push(String(input));
      return globalThis.fetch(input, init);
    };
    const client = new MessagesClient({ apiKey: KEY, baseURL: "http://gateway.test", fetch });
    await client.models.list();
    await client.messages.create(hello);
    expect(seen).toEqual(["http://gateway.test/v1/models", "http://gateway.test/v1/messages"]);
  });

  test("defaultHeaders are sent, and null removes a default header", async () => {
    const client = new MessagesClient({
      apiKey: KEY,
      baseURL: "http://gateway.test",
      defaultHeaders: { "x-team": "search", "alpha-version": null },
    });
    await client.messages.create(hello, { headers: { "x-trace": "t1" } });
    const headers = turnpike.lastRequest()?.headers ?? {};
    expect([headers["x-team"], headers["x-trace"], headers["alpha-version"]]).toEqual(["search", "t1", undefined]);
  });
});
