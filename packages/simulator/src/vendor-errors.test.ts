import { describe, expect, test } from "bun:test";
import { AUTH, PATH, sim } from "./test-support";

const req = {
  messages: (d: string) =>
    [
      PATH.messages,
      { model: "alpha-x", max_tokens: 10, messages: [{ role: "user", content: d }] },
      AUTH.messages,
    ] as const,
  chat: (d: string) =>
    [PATH.chat, { model: "beta-x", stream: true, messages: [{ role: "user", content: d }] }, AUTH.chat] as const,
  generate: (d: string) =>
    [
      `${PATH.generate("gamma-x", "streamGenerateContent")}?alt=sse`,
      { contents: [{ parts: [{ text: d }] }] },
      AUTH.generate,
    ] as const,
};

describe("[sim error=<status>]: the vendor's error before any byte", () => {
  test.each([
    [400, "invalid_request_error"],
    [401, "authentication_error"],
    [402, "billing_error"],
    [403, "permission_error"],
    [404, "not_found_error"],
    [413, "request_too_large"],
    [429, "rate_limit_error"],
    [500, "api_error"],
    [504, "timeout_error"],
    [529, "overloaded_error"],
    [418, "invalid_request_error"],
    [502, "api_error"],
  ])("messages %d → %s", async (status, type) => {
    const res = await sim().post(...req.messages(`hi [sim error=${status}]`));
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("retry-after")).toBe(status === 429 || status === 529 ? "1" : null);
    const body = await res.json();
    expect(body).toEqual({
      type: "error",
      error: { type, message: expect.any(String) },
      request_id: expect.stringMatching(/^req_sim/),
    });
  });

  test.each([
    [400, "invalid_request_error", null],
    [401, "invalid_request_error", "invalid_api_key"],
    [404, "invalid_request_error", "model_not_found"],
    [429, "requests", "rate_limit_exceeded"],
    [500, "server_error", null],
    [503, "service_unavailable_error", "server_is_overloaded"],
  ])("chat %d → %s / %s, JSON even for a stream request", async (status, type, code) => {
    const res = await sim().post(...req.chat(`[sim error=${status}]`));
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("retry-after")).toBe(status === 429 || status === 503 ? "1" : null);
    const body = await res.json();
    expect(body).toEqual({ error: { message: expect.any(String), type, param: null, code } });
    if (status === 404)
      expect(body.error.message).toBe("The model `beta-x` does not exist or you do not have access to it.");
  });

  test.each([
    [400, "INVALID_ARGUMENT"],
    [403, "PERMISSION_DENIED"],
    [404, "NOT_FOUND"],
    [429, "RESOURCE_EXHAUSTED"],
    [500, "INTERNAL"],
    [503, "UNAVAILABLE"],
    [504, "DEADLINE_EXCEEDED"],
  ])("generateContent %d → %s", async (status, name) => {
    const res = await sim().post(...req.generate(`[sim error=${status}]`));
    expect(res.status).toBe(status);
    const body = await res.json();
    expect(body.error).toMatchObject({ code: status, status: name, message: expect.any(String) });
    if (status === 429) {
      expect(res.headers.get("retry-after")).toBe("1");
      expect(body.error.details).toContainEqual({
        "@type": "type.googleapis.com/google.rpc.RetryInfo",
        retryDelay: "1s",
      });
    }
  });

  test("retry_after sets the retry-after header and generateContent's RetryInfo", async () => {
    const a = await sim().post(...req.messages("[sim error=529 retry_after=7]"));
    expect(a.headers.get("retry-after")).toBe("7");
    const g = await sim().post(...req.generate("[sim error=429 retry_after=3]"));
    expect(g.headers.get("retry-after")).toBe("3");
    expect((await g.json()).error.details[1].retryDelay).toBe("3s");
  });

  test("count endpoints honour the error directive", async () => {
    const a = await sim().post(
      "/v1/messages/count_tokens",
      { model: "a", messages: [{ role: "user", content: "[sim error=529]" }] },
      AUTH.messages,
    );
    expect(a.status).toBe(529);
    const g = await sim().post(
      PATH.generate("g", "countTokens"),
      { contents: [{ parts: [{ text: "[sim error=500]" }] }] },
      AUTH.generate,
    );
    expect((await g.json()).error.status).toBe("INTERNAL");
  });

  test("a bad directive is a 400 that names the problem", async () => {
    const res = await sim().post(...req.chat("[sim tool=2]"));
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toStartWith('simulator: unknown simulator directive "tool"');
    const v = await sim().post(...req.generate("[sim variant=whole-tool-call]"));
    expect((await v.json()).error.message).toBe(
      'simulator: unknown variant "whole-tool-call" for the generate protocol (known: none)',
    );
  });
});
