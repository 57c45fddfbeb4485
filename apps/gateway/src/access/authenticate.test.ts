import { afterEach, beforeEach, describe, expect, spyOn, test } from "bun:test";
import { GatewayError } from "@turnpike/providers";
import { authenticate, authenticateNow, presentedKey } from "./authenticate";
import { NO_GUARDRAILS, keyPolicies, parseGuardrails } from "../guardrails/policy";
import { teamDirectory } from "../teams/team-directory";
import type { Team } from "../teams/team-store";
import type { KeyRecord } from "../storage/store";
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

describe("a team key's chain, made once per key and team (issue 47)", () => {
  test("at once (no promise) once its team is held, the same effective key each time, made anew when the team changes", async () => {
    const dir = teamDirectory(t.deps.store, t.deps.now);
    const at = new Date(0).toISOString();
    const team: Team = {
      id: "team_chain",
      name: "chain",
      models: null,
      rpm: 50,
      tpm: null,
      budget_usd: 20,
      created_at: at,
      updated_at: at,
    };
    await dir.store.createTeam(team);
    const { record, secret } = await t.addKey({ name: "member", team_id: team.id });
    const c = ctx({ "x-api-key": secret });
    // The first request reads the team (a promise); the next find it held.
    const first = await authenticateNow(t.deps, c);
    const again = authenticateNow(t.deps, c);
    expect(again).not.toBeInstanceOf(Promise);
    expect(again).toBe(first);
    expect((again as KeyRecord).rpm).toBe(50);
    expect((again as KeyRecord).team?.budget_usd).toBe(20);
    expect(record.team).toBeUndefined();
    // A change to the team here is forgotten at once: the next request reads it and makes the key anew.
    await dir.store.updateTeam({ ...team, rpm: 10 });
    dir.forget(team.id);
    const changed = await authenticateNow(t.deps, c);
    expect(changed).not.toBe(first);
    expect(changed.rpm).toBe(10);
  });

  test("a key's guardrail policies: made once per key record, none for a key that runs none", () => {
    const config = parseGuardrails({ policies: { words: { words: ["Project Falcon"], action: "mask" } } }, []);
    const plain = { guardrails: null };
    const guarded = { guardrails: ["words"] };
    expect(keyPolicies(config, plain)).toBeUndefined();
    const policies = keyPolicies(config, guarded);
    expect(policies?.map((p) => p.name)).toEqual(["words"]);
    expect(keyPolicies(config, guarded)).toBe(policies);
    // A changed key is a new record: its policies are made again.
    expect(keyPolicies(config, { guardrails: [] })).toBeUndefined();
    expect(keyPolicies(NO_GUARDRAILS, guarded)).toBeUndefined();
  });
});
