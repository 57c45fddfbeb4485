/** Admin bodies are checked against their TypeBox schemas: errors read like a request's, several at once. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

async function admin(path: string, method: string, body: unknown) {
  const res = await fetch(h.url + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    body: (await res.json()) as { error: { type: string; code: string | null; message: string; param?: string } },
  };
}

describe("admin key bodies", () => {
  test("several mistakes: one 400 naming the first with its field, and the next ones", async () => {
    const res = await admin("/admin/keys", "POST", { name: "x", rpm: 0, budget_usd: -1, prompt_cache: "sometimes" });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      type: "invalid_request_error",
      code: null,
      param: "rpm",
      message:
        'rpm: must be a whole number from 1 to 1000000, or null, got 0 (and 2 more: budget_usd: must be a number of US dollars above 0 and at most 10000000, or null, got -1; prompt_cache: must be auto or off, or null for the model\'s own setting, got "sometimes")',
    });
  });

  test("an unknown field is named with the fields there are", async () => {
    const res = await admin("/admin/keys", "POST", { name: "x", rmp: 5 });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe("rmp");
    expect(res.body.error.message).toBe(
      "rmp: unknown field (known: name, models, rpm, tpm, model_limits, budget_usd, expires_at, prompt_cache, tools, guardrails, team_id)",
    );
  });

  test("a key created, changed and rotated with valid bodies", async () => {
    const created = await admin("/admin/keys", "POST", {
      name: "  spaced  ",
      rpm: 5,
      model_limits: { "beta-5": { tpm: 1000 } },
      expires_at: "2099-01-01T00:00:00Z",
    });
    expect(created.status).toBe(201);
    const key = created.body as unknown as {
      id: string;
      name: string;
      rpm: number;
      model_limits: unknown;
      expires_at: string;
    };
    expect([key.name, key.rpm, key.model_limits, key.expires_at]).toEqual([
      "spaced",
      5,
      { "beta-5": { rpm: null, tpm: 1000 } },
      "2099-01-01T00:00:00.000Z",
    ]);
    const patched = await admin(`/admin/keys/${key.id}`, "PATCH", { rpm: null, expires_at: "not a time" });
    expect(patched.status).toBe(400);
    expect(patched.body.error.message).toBe('expires_at: must be an ISO 8601 time or null, got "not a time"');
    const rotated = await admin(`/admin/keys/${key.id}/rotate`, "POST", { grace_seconds: -1 });
    expect(rotated.status).toBe(400);
    expect(rotated.body.error.message).toBe(
      "grace_seconds: must be a whole number of seconds from 0 to 2592000 (30 days), got -1",
    );
  });
});
