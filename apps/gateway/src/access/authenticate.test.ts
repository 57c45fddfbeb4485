import { afterEach, beforeEach, describe, expect, spyOn, test } from "bun:test";
import { GatewayError } from "@turnpike/providers";
import { authenticate, presentedKey } from "./authenticate";
import { testDeps, type TestDeps } from "../../test/support/test-deps";

let t: TestDeps;
beforeEach(async () => {
  t = await testDeps();
});
afterEach(() => t.close());

function ctx(headers: Record<string, string>, address = "10.0.0.1") {
  return {
    request: new Request("http://gateway.test/v1/messages", { method: "POST", headers }),
    address: () => address,
  };
}

async function refused(p: Promise<unknown>): Promise<GatewayError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
  throw new Error("expected authentication to fail");
}

describe("presentedKey", () => {
  test("x-api-key first, else a bearer token (any case, trimmed)", () => {
    expect(presentedKey(new Headers({ "x-api-key": " sk-a ", authorization: "Bearer sk-b" }))).toBe("sk-a");
    expect(presentedKey(new Headers({ authorization: "bearer   sk-b " }))).toBe("sk-b");
    expect(presentedKey(new Headers({ authorization: "Basic abc" }))).toBeUndefined();
    expect(presentedKey(new Headers())).toBeUndefined();
  });
});

describe("authenticate", () => {
  test("a live key by either header → its record", async () => {
    const { record, secret } = await t.addKey({ name: "live" });
    expect((await authenticate(t.deps, ctx({ "x-api-key": secret }))).id).toBe(record.id);
    expect((await authenticate(t.deps, ctx({ authorization: `Bearer ${secret}` }))).name).toBe("live");
  });

  test("no key → 401 naming both ways to send one, and the failure is counted", async () => {
    expect(t.deps.authFailures.active).toBe(false);
    const err = await refused(authenticate(t.deps, ctx({})));
    expect(err.status).toBe(401);
    expect(err.type).toBe("authentication_error");
    expect(err.message).toContain("Missing API key");
    expect(t.deps.authFailures.active).toBe(true);
  });

  test("an unknown key → 401; a secret that is not a Turnpike key is not looked up", async () => {
    const lookups = spyOn(t.deps.keys, "authenticate");
    expect((await refused(authenticate(t.deps, ctx({ "x-api-key": "sk-tp-nope" })))).message).toBe(
      "Invalid API key: it is not a Turnpike key.",
    );
    expect(lookups).toHaveBeenCalledTimes(1);
    expect((await refused(authenticate(t.deps, ctx({ "x-api-key": "not-a-key" })))).status).toBe(401);
    expect(lookups).toHaveBeenCalledTimes(1);
  });

  test("a revoked key → 401 revoked", async () => {
    const { record, secret } = await t.addKey();
    await t.deps.keys.revoke(record.id);
    const err = await refused(authenticate(t.deps, ctx({ "x-api-key": secret })));
    expect(err.status).toBe(401);
    expect(err.message).toBe("This API key was revoked.");
  });

  test("an expired key → 401 expired, at its expiry instant and after", async () => {
    const { secret } = await t.addKey({ expires_at: new Date(t.clock.now() + 1000).toISOString() });
    await authenticate(t.deps, ctx({ "x-api-key": secret }));
    t.clock.advance(1000);
    expect((await refused(authenticate(t.deps, ctx({ "x-api-key": secret })))).message).toBe(
      "This API key has expired.",
    );
  });

  test("a rotated-out secret works within its grace period, not after; the new one works", async () => {
    const { record, secret: old } = await t.addKey();
    const rotated = await t.deps.keys.rotate(record.id, 60);
    expect((await authenticate(t.deps, ctx({ "x-api-key": old }))).id).toBe(record.id);
    expect((await authenticate(t.deps, ctx({ "x-api-key": rotated!.secret }))).id).toBe(record.id);
    t.clock.advance(60_000);
    expect((await refused(authenticate(t.deps, ctx({ "x-api-key": old })))).message).toContain("Invalid API key");
    expect((await authenticate(t.deps, ctx({ "x-api-key": rotated!.secret }))).id).toBe(record.id);
  });

  test("a rotation with no grace refuses the old secret at once", async () => {
    const { record, secret: old } = await t.addKey();
    await t.deps.keys.rotate(record.id, 0);
    expect((await refused(authenticate(t.deps, ctx({ "x-api-key": old })))).status).toBe(401);
  });
});

describe("failed attempts per address", () => {
  test("30 failures from one address → its next failures are 429s; a valid key from it still passes; other addresses go on", async () => {
    const { record, secret } = await t.addKey();
    for (let i = 0; i < 30; i++)
      expect((await refused(authenticate(t.deps, ctx({ "x-api-key": `sk-tp-guess-${i}` }, "10.6.6.6")))).status).toBe(
        401,
      );
    const err = await refused(authenticate(t.deps, ctx({ "x-api-key": "sk-tp-guess-31" }, "10.6.6.6")));
    expect(err.status).toBe(429);
    expect(err.code).toBe("too_many_failed_auth");
    expect(err.headers).toEqual({ "retry-after": "60" });
    // The good key behind the same address (a NAT, a proxy) is never refused for others' guesses.
    expect((await authenticate(t.deps, ctx({ "x-api-key": secret }, "10.6.6.6"))).id).toBe(record.id);
    expect((await refused(authenticate(t.deps, ctx({ "x-api-key": "sk-tp-guess-32" }, "10.7.7.7")))).status).toBe(401);
  });

  test("29 failures do not lock out; the lockout ends with its window", async () => {
    for (let i = 0; i < 29; i++) await refused(authenticate(t.deps, ctx({}, "10.6.6.6")));
    expect((await refused(authenticate(t.deps, ctx({}, "10.6.6.6")))).status).toBe(401);
    t.clock.advance(45_000);
    const err = await refused(authenticate(t.deps, ctx({}, "10.6.6.6")));
    expect(err.status).toBe(429);
    expect(err.headers?.["retry-after"]).toBe("15");
    t.clock.advance(15_000);
    expect((await refused(authenticate(t.deps, ctx({}, "10.6.6.6")))).status).toBe(401);
  });
});
