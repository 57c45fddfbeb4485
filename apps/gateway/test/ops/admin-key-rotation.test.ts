/**
 * Rotating `TURNPIKE_ADMIN_KEY` without downtime: the new key in `TURNPIKE_ADMIN_KEY`, the old one
 * in `TURNPIKE_ADMIN_KEY_PREVIOUS`, accepted until `TURNPIKE_ADMIN_KEY_PREVIOUS_UNTIL` and refused
 * from then on; what the old key does is audited as its own actor.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config/config";
import { ConfigError } from "../../src/vocabulary/config-error";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";
import { memoryLogger } from "../support/memory-logger";

const OLD_KEY = "sk-admin-old-0123456789abcdefghijklmnopq";
const UNTIL = "2026-12-01T00:00:00.000Z";

describe("a rotation with a grace period", () => {
  let h: Harness;
  let clock = Date.parse(UNTIL) - 60_000;
  const logger = memoryLogger();
  beforeAll(async () => {
    h = await startHarness(
      { TURNPIKE_ADMIN_KEY_PREVIOUS: OLD_KEY, TURNPIKE_ADMIN_KEY_PREVIOUS_UNTIL: UNTIL },
      { now: () => clock, logger },
    );
  });
  afterAll(() => h.close());

  const admin = (secret: string, path = "/admin/keys", init: RequestInit = {}) =>
    fetch(`${h.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    });

  test("the start says until when the previous key is accepted", () => {
    expect(logger.lines).toContain(
      `turnpike info: Admin key rotation: the previous admin key is accepted until ${UNTIL}. admin_key_previous_until=${UNTIL}`,
    );
  });

  test("before the end of its grace both keys work, and the old key's actions are audited apart", async () => {
    expect((await admin(ADMIN_KEY)).status).toBe(200);
    const made = await admin(OLD_KEY, "/admin/keys", { method: "POST", body: JSON.stringify({ name: "by old key" }) });
    expect(made.status).toBe(201);
    const { id } = (await made.json()) as { id: string };
    const audit = (await (await admin(ADMIN_KEY, "/admin/audit")).json()) as {
      data: { actor: string; action: string; target: string }[];
    };
    const byOld = audit.data.find((e) => e.target === id);
    expect(byOld).toMatchObject({ actor: "admin-key:previous" });
    // The harness's own key was made with the current key: the same action, the other actor.
    expect(
      audit.data
        .filter((e) => e.action === byOld?.action)
        .map((e) => e.actor)
        .sort(),
    ).toEqual(["admin-key", "admin-key:previous"]);
  });

  test("from the end of its grace the old key is refused like any wrong key; the new one goes on", async () => {
    clock = Date.parse(UNTIL);
    const refused = await admin(OLD_KEY);
    const wrong = await admin("sk-admin-never-0123456789abcdefghijklmnop");
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual(await wrong.json());
    expect((await admin(ADMIN_KEY)).status).toBe(200);
  });

  test("neither secret reaches a log line", () => {
    for (const line of logger.lines) {
      expect(line.includes(OLD_KEY)).toBe(false);
      expect(line.includes(ADMIN_KEY)).toBe(false);
    }
  });
});

describe("the rotation's settings are checked at start", () => {
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig({ TURNPIKE_ADMIN_KEY: ADMIN_KEY, ...env });
    } catch (e) {
      if (e instanceof ConfigError) return e.problems;
      throw e;
    }
    return [];
  };

  test("a previous key needs the end of its grace, as a time", () => {
    expect(problems({ TURNPIKE_ADMIN_KEY_PREVIOUS: OLD_KEY })).toEqual([
      'TURNPIKE_ADMIN_KEY_PREVIOUS_UNTIL must be the ISO 8601 time the previous admin key stops working (e.g. 2026-12-01T00:00:00Z), got ""',
    ]);
    expect(problems({ TURNPIKE_ADMIN_KEY_PREVIOUS: OLD_KEY, TURNPIKE_ADMIN_KEY_PREVIOUS_UNTIL: "next week" })).toEqual([
      'TURNPIKE_ADMIN_KEY_PREVIOUS_UNTIL must be the ISO 8601 time the previous admin key stops working (e.g. 2026-12-01T00:00:00Z), got "next week"',
    ]);
  });

  test("the previous key is not the current one, and is as long as an admin key must be", () => {
    expect(problems({ TURNPIKE_ADMIN_KEY_PREVIOUS: ADMIN_KEY, TURNPIKE_ADMIN_KEY_PREVIOUS_UNTIL: UNTIL })).toEqual([
      "TURNPIKE_ADMIN_KEY_PREVIOUS is the same as TURNPIKE_ADMIN_KEY: set the new key in TURNPIKE_ADMIN_KEY",
    ]);
    expect(problems({ TURNPIKE_ADMIN_KEY_PREVIOUS: "short", TURNPIKE_ADMIN_KEY_PREVIOUS_UNTIL: UNTIL })).toEqual([
      "TURNPIKE_ADMIN_KEY_PREVIOUS must be at least 32 characters long (got 5)",
    ]);
  });

  test("a previous key needs a current one", () => {
    let error: unknown;
    try {
      loadConfig({ TURNPIKE_ADMIN_KEY_PREVIOUS: OLD_KEY, TURNPIKE_ADMIN_KEY_PREVIOUS_UNTIL: UNTIL });
    } catch (e) {
      error = e;
    }
    expect((error as ConfigError).problems).toEqual([
      "TURNPIKE_ADMIN_KEY_PREVIOUS is set without TURNPIKE_ADMIN_KEY: set the new admin key too",
    ]);
  });

  test("a good pair is read, its time normalised", () => {
    expect(
      loadConfig({
        TURNPIKE_ADMIN_KEY: ADMIN_KEY,
        TURNPIKE_ADMIN_KEY_PREVIOUS: OLD_KEY,
        TURNPIKE_ADMIN_KEY_PREVIOUS_UNTIL: "2026-12-01T01:00:00+01:00",
      }).adminKeyPrevious,
    ).toEqual({ key: OLD_KEY, until: UNTIL });
  });
});
