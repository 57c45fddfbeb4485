import { describe, expect, test } from "bun:test";
import { APIClient, type ClientOptions, type Fetch } from "./api-client.js";
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  BadRequestError,
  InternalServerError,
  RateLimitError,
  TurnpikeError,
} from "./errors.js";

/** The loop is tested through an injected fetch: no network, no patching. */
class TestClient extends APIClient {
  constructor(options: Omit<ClientOptions, "apiKey" | "baseURL"> = {}) {
    super({ apiKey: "sk-test", baseURL: "http://gw.test/", ...options });
  }
  protected authHeaders(): Record<string, string> {
    return { authorization: `Bearer ${this.apiKey}` };
  }
}

interface Call {
  url: string;
  init: RequestInit;
}

/** A fetch that answers with `replies` in order (the last one repeats) and records calls. */
function scripted(...replies: Array<() => Response | Promise<Response>>): { fetch: Fetch; calls: Call[] } {
  const calls: Call[] = [];
  const fetch: Fetch = async (input, init = {}) => {
    calls.push({ url: String(input), init });
    const reply = replies[Math.min(calls.length - 1, replies.length - 1)];
    if (!reply) throw new Error("no reply scripted");
    return reply();
  };
  return { fetch, calls };
}

const ok =
  (body: unknown = { ok: true }, headers: Record<string, string> = {}) =>
  () =>
    Response.json(body, { headers: { "x-request-id": "req_ok", ...headers } });
// `retry-after-ms: 1` keeps retries fast and proves the hint is honoured.
const fail =
  (status: number, headers: Record<string, string> = {}) =>
  () =>
    Response.json(
      { error: { message: `status ${status}`, type: "x" } },
      { status, headers: { "retry-after-ms": "1", ...headers } },
    );

/** A fetch that never answers until its signal aborts, like a hung server. */
const hang: Fetch = (_input, init) =>
  new Promise((_resolve, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)));

const get = (client: APIClient, extra: object = {}) =>
  client.request<{ ok: boolean }>({ method: "GET", path: "/x", ...extra });

describe("request", () => {
  test("sends auth, JSON headers and body to base + path, and parses the reply", async () => {
    const { fetch, calls } = scripted(ok({ ok: true }));
    const client = new TestClient({ fetch, defaultHeaders: { "x-extra": "1" } });
    const result = await client.request<{ ok: boolean }>({
      method: "POST",
      path: "/v1/things",
      body: { a: 1 },
      query: { q: "é" },
    });
    expect(result).toEqual({ ok: true });
    expect(calls[0]?.url).toBe("http://gw.test/v1/things?q=%C3%A9");
    const headers = new Headers(calls[0]?.init.headers);
    expect(headers.get("authorization")).toBe("Bearer sk-test");
    expect(headers.get("content-type")).toBe("application/json");
    expect(headers.get("x-extra")).toBe("1");
    expect(calls[0]?.init.body).toBe('{"a":1}');
    expect(calls[0]?.init.method).toBe("POST");
  });

  test("per-call headers override defaults and null removes one", async () => {
    const { fetch, calls } = scripted(ok());
    const client = new TestClient({ fetch, defaultHeaders: { "x-a": "1", "x-b": "2" } });
    await get(client, { headers: { "x-a": "3", "x-b": null } });
    const headers = new Headers(calls[0]?.init.headers);
    expect([headers.get("x-a"), headers.get("x-b")]).toEqual(["3", null]);
  });

  test("withResponse gives the raw response and the request id", async () => {
    const { fetch } = scripted(ok({ ok: true }, { "x-turnpike-upstream": "simulator" }));
    const { data, response, requestId } = await get(new TestClient({ fetch })).withResponse();
    expect(data.ok).toBe(true);
    expect(response.headers.get("x-turnpike-upstream")).toBe("simulator");
    expect(requestId).toBe("req_ok");
  });

  test("a reply that is not JSON is a clear error", async () => {
    const { fetch } = scripted(() => new Response("<html>hi</html>", { status: 200 }));
    await expect(get(new TestClient({ fetch }))).rejects.toThrow(/Expected a JSON reply .*<html>hi<\/html>/);
  });

  test("bad options are rejected at construction", () => {
    expect(() => new TestClient({ maxRetries: -1 })).toThrow(TurnpikeError);
    expect(() => new TestClient({ timeout: 1.5 })).toThrow("timeout must be a non-negative integer");
  });
});

describe("retries", () => {
  test("retries a 500 and returns the later success", async () => {
    const { fetch, calls } = scripted(fail(500), fail(503), ok());
    expect(await get(new TestClient({ fetch }))).toEqual({ ok: true });
    expect(calls).toHaveLength(3);
  });

  test("gives up after maxRetries with the last error", async () => {
    const { fetch, calls } = scripted(fail(503));
    const err = await get(new TestClient({ fetch })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect((err as InternalServerError).status).toBe(503);
    expect(calls).toHaveLength(3);
  });

  test("per-call maxRetries overrides the client's", async () => {
    const { fetch, calls } = scripted(fail(500));
    await get(new TestClient({ fetch, maxRetries: 5 }), { maxRetries: 1 }).catch(() => undefined);
    expect(calls).toHaveLength(2);
  });

  test("429 is retried; when retries run out the RateLimitError carries the hint", async () => {
    const { fetch, calls } = scripted(fail(429, { "retry-after-ms": "1" }));
    const err = await get(new TestClient({ fetch, maxRetries: 1 })).catch((e: unknown) => e);
    expect(calls).toHaveLength(2);
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).retryAfterMs).toBe(1);
  });

  test("a 400 is not retried", async () => {
    const { fetch, calls } = scripted(fail(400));
    await expect(get(new TestClient({ fetch }))).rejects.toBeInstanceOf(BadRequestError);
    expect(calls).toHaveLength(1);
  });

  test("x-should-retry: false stops retries; true forces them", async () => {
    const stop = scripted(fail(500, { "x-should-retry": "false" }));
    await get(new TestClient({ fetch: stop.fetch })).catch(() => undefined);
    expect(stop.calls).toHaveLength(1);
    const go = scripted(fail(400, { "x-should-retry": "true" }), ok());
    expect(await get(new TestClient({ fetch: go.fetch }))).toEqual({ ok: true });
    expect(go.calls).toHaveLength(2);
  });

  test("a connection failure is retried, then surfaces as APIConnectionError with the cause", async () => {
    const cause = new TypeError("fetch failed");
    const { fetch, calls } = scripted(() => Promise.reject(cause));
    const err = await get(new TestClient({ fetch, maxRetries: 1 })).catch((e: unknown) => e);
    expect(calls).toHaveLength(2);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect((err as APIConnectionError).cause).toBe(cause);
  });
});

describe("timeouts and aborts", () => {
  test("an attempt that outlives `timeout` is an APITimeoutError", async () => {
    const err = await get(new TestClient({ fetch: hang, timeout: 20, maxRetries: 0 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APITimeoutError);
    expect(err).toBeInstanceOf(APIConnectionError);
  });

  test("timeouts are retried", async () => {
    let attempts = 0;
    const fetch: Fetch = (input, init) => (++attempts === 1 ? hang(input, init) : Promise.resolve(ok()()));
    expect(await get(new TestClient({ fetch, timeout: 20, maxRetries: 1 }))).toEqual({ ok: true });
    expect(attempts).toBe(2);
  });

  test("the timeout also covers a body that stops half-way", async () => {
    const stalled = () =>
      new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('{"ok":')) }), {
        status: 200,
      });
    const { fetch } = scripted(stalled);
    await expect(get(new TestClient({ fetch, timeout: 20, maxRetries: 0 }))).rejects.toBeInstanceOf(APITimeoutError);
  });

  test("the caller's signal aborts a pending request without retrying", async () => {
    let attempts = 0;
    const fetch: Fetch = (input, init) => (attempts++, hang(input, init));
    const controller = new AbortController();
    const pending = get(new TestClient({ fetch }), { signal: controller.signal });
    setTimeout(() => controller.abort(), 5);
    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
    expect(attempts).toBe(1);
  });

  test("an already-aborted signal never calls fetch", async () => {
    const { fetch, calls } = scripted(ok());
    await expect(get(new TestClient({ fetch }), { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      APIUserAbortError,
    );
    expect(calls).toHaveLength(0);
  });

  test("aborting during the wait between retries ends it at once", async () => {
    // retry-after-ms is capped at a minute; 30 s would stall the test if the abort were ignored.
    const { fetch, calls } = scripted(fail(500, { "retry-after-ms": "30000" }));
    const controller = new AbortController();
    const pending = get(new TestClient({ fetch }), { signal: controller.signal });
    setTimeout(() => controller.abort(), 5);
    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
    expect(calls).toHaveLength(1);
  });
});
