import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { clientAddress, parseTrustedProxies } from "../../src/http/client-address";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";

// Issue 11, items 8 (failed-auth limiting, trusted proxies) and 9 (limits that make sense).

const chat = (h: Harness, key: string, headers: Record<string, string> = {}, body: Record<string, unknown> = {}) =>
  fetch(`${h.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "beta-5", messages: [{ role: "user", content: "hi" }], ...body }),
  });

async function newKey(h: Harness, fields: Record<string, unknown> = {}) {
  const res = await fetch(`${h.url}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    body: JSON.stringify({ name: "t", ...fields }),
  });
  return ((await res.json()) as any).key as string;
}

describe("failed-auth limiting cannot lock out good keys", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  test("31 guesses from an address: its next guess is a 429; a valid key from the same address is served", async () => {
    for (let i = 0; i < 30; i++) expect((await chat(h, `sk-tp-guess-${i}`)).status).toBe(401);
    const locked = await chat(h, "sk-tp-guess-31");
    expect(locked.status).toBe(429);
    expect(((await locked.json()) as any).error.code).toBe("too_many_failed_auth");
    expect((await chat(h, h.key)).status).toBe(200);
  });

  test("without trusted proxies, X-Forwarded-For is ignored: rotating it dodges nothing", async () => {
    const res = await chat(h, "sk-tp-guess-x", { "x-forwarded-for": "198.51.100.77" });
    expect(res.status).toBe(429);
  });
});

describe("behind a trusted proxy, the client address comes from X-Forwarded-For", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ TURNPIKE_TRUSTED_PROXIES: "127.0.0.1, 10.0.0.0/8" });
  });
  afterAll(() => h.close());

  test("one client's guesses lock out that client only", async () => {
    for (let i = 0; i < 30; i++) await chat(h, `sk-tp-guess-${i}`, { "x-forwarded-for": "203.0.113.7" });
    expect((await chat(h, "sk-tp-guess-31", { "x-forwarded-for": "203.0.113.7" })).status).toBe(429);
    // A spoofed left-most entry does not help: the proxy appends the real client on the right.
    expect((await chat(h, "sk-tp-guess-32", { "x-forwarded-for": "192.0.2.1, 203.0.113.7" })).status).toBe(429);
    // Another client behind the same proxy is not touched; a good key is served either way.
    expect((await chat(h, "sk-tp-guess-33", { "x-forwarded-for": "203.0.113.8" })).status).toBe(401);
    expect((await chat(h, h.key, { "x-forwarded-for": "203.0.113.7" })).status).toBe(200);
  });

  test("the address rule: right-most untrusted hop, only from a trusted peer", () => {
    const proxies = parseTrustedProxies("10.0.0.0/8,::1");
    const server = (address: string) => ({ requestIP: () => ({ address }) });
    const req = (xff?: string) => new Request("http://x/", { headers: xff ? { "x-forwarded-for": xff } : {} });
    expect(clientAddress(server("10.1.2.3"), req("198.51.100.1, 10.9.9.9"), proxies)).toBe("198.51.100.1");
    expect(clientAddress(server("::1"), req("2001:db8::5"), proxies)).toBe("2001:db8::5");
    expect(clientAddress(server("::ffff:10.0.0.1"), req("198.51.100.9"), proxies)).toBe("198.51.100.9");
    expect(clientAddress(server("192.0.2.50"), req("198.51.100.1"), proxies)).toBe("192.0.2.50");
    expect(clientAddress(server("10.1.2.3"), req(), proxies)).toBe("10.1.2.3");
    expect(() => parseTrustedProxies("10.0.0.0/33")).toThrow("TURNPIKE_TRUSTED_PROXIES");
    expect(() => parseTrustedProxies("proxy.internal")).toThrow('"proxy.internal" is not an IP address or CIDR range');
  });
});

describe("limits that make sense", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  test("a request whose estimated input alone exceeds the key's tpm is refused at once, saying why", async () => {
    const key = await newKey(h, { tpm: 1000 });
    const res = await chat(h, key, {}, { messages: [{ role: "user", content: "x".repeat(8000) }] });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBeNull();
    expect(res.headers.get("x-should-retry")).toBe("false");
    const body = (await res.json()) as any;
    expect(body.error.message).toContain(
      "is more than this key's limit of 1000 tokens per minute; it cannot be admitted",
    );
    // The key is untouched: a small request goes through at once.
    expect((await chat(h, key)).status).toBe(200);
  });

  test("max_tokens above the model's output cap is lowered to it, with a warning; a large cap within it passes as sent", async () => {
    const key = await newKey(h);
    const messages = (body: Record<string, unknown>) =>
      fetch(`${h.url}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json", "alpha-version": "2023-06-01" },
        body: JSON.stringify({ model: "alpha-haiku-4-5", messages: [{ role: "user", content: "hi" }], ...body }),
      });
    const res = await messages({ max_tokens: 100_000 });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-turnpike-warning")).toContain(
      "max_tokens: 100000 is above alpha-haiku-4-5's output cap; lowered to 64000",
    );
    expect(h.gw.simulator!.requests.at(-1)?.body).toMatchObject({ max_tokens: 64_000 });
    const agent = await messages({ max_tokens: 32_000 });
    expect(agent.status).toBe(200);
    expect(agent.headers.get("x-turnpike-warning")).toBeNull();
    expect(h.gw.simulator!.requests.at(-1)?.body).toMatchObject({ max_tokens: 32_000 });
    // Translated: a chat client's cap, named as it sent it.
    const translated = await chat(h, key, {}, { model: "alpha-haiku-4-5", max_completion_tokens: 500_000 });
    expect(translated.status).toBe(200);
    expect(translated.headers.get("x-turnpike-warning")).toContain(
      "max_completion_tokens: 500000 is above alpha-haiku-4-5's output cap",
    );
    expect(h.gw.simulator!.requests.at(-1)?.body).toMatchObject({ max_tokens: 64_000 });
  });

  test("max_tokens of 0 or less is a 400", async () => {
    const key = await newKey(h);
    for (const max of [0, -1]) {
      const res = await fetch(`${h.url}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json", "alpha-version": "2023-06-01" },
        body: JSON.stringify({ model: "beta-5", max_tokens: max, messages: [{ role: "user", content: "hi" }] }),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as any;
      expect(body.error.type).toBe("invalid_request_error");
      expect(body.error.message).toContain("max_tokens");
    }
  });
});
