/**
 * Choosing a deployment: weighted random over the healthy ones with room under their rpm; a
 * session id (`x-session-id` or `x-claude-code-session-id`) sticks to one while it is healthy
 * (dispatch/affinity.ts; test/fidelity/session-affinity.test.ts covers the rest).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { Harness } from "../harness";
import { ask, routedGateway, VARIANTS } from "./setup";

let h: Harness;
let clock = Date.now();
beforeAll(async () => {
  h = await routedGateway(
    `
vendors:
  alpha-backup: { protocol: messages }
models:
  - id: alpha-haiku-4-5
    deployments: [{ vendor: alpha }, { vendor: alpha-backup }]
  - id: alpha-opus-4-8
    deployments:
      - { vendor: alpha, weight: 1000000, rpm: 2 }
      - { vendor: alpha-backup, weight: 1 }
  - id: alpha-fable-5
    deployments:
      - { vendor: alpha, weight: 1000000, tpm: 60 }
      - { vendor: alpha-backup, weight: 1 }
routing:
  breaker: { failures: 1000, cooldown_s: 30 }
`,
    { now: () => clock },
  );
});
afterAll(() => h.close());
beforeEach(() => h.gw.simulator!.clearFaults());

const served = async (i: number, model: string, headers: Record<string, string> = {}) => {
  const a = await ask(h, VARIANTS[i % 4]!, model, "Hi", { headers });
  expect(a.status).toBe(200);
  return a.res.headers.get("x-turnpike-deployment");
};

describe("session stickiness", () => {
  for (const header of ["x-session-id", "x-claude-code-session-id"]) {
    test(`${header}: every request of one session on one deployment, in each format and mode`, async () => {
      for (const session of ["sess-1", "sess-2", "sess-3"]) {
        const seen = new Set<string | null>();
        for (let i = 0; i < 8; i++) seen.add(await served(i, "alpha-haiku-4-5", { [header]: session }));
        expect(seen.size).toBe(1);
      }
    });
  }

  test("sessions spread over both deployments; one moves when its deployment fails, and stays where it moved", async () => {
    const by = new Map<string, string | null>();
    for (let s = 0; s < 24; s++) by.set(`s${s}`, await served(s, "alpha-haiku-4-5", { "x-session-id": `s${s}` }));
    expect(new Set(by.values())).toEqual(new Set(["alpha", "alpha-backup"]));
    const [session, home] = [...by.entries()].find(([, d]) => d === "alpha")!;
    h.gw.simulator!.fault("simulator-alpha", { status: 503 });
    expect(await served(1, "alpha-haiku-4-5", { "x-session-id": session })).toBe("alpha-backup");
    h.gw.simulator!.clearFaults();
    // Its prompt cache is on the backup now: going home would reset it a second time.
    expect(home).toBe("alpha");
    expect(await served(2, "alpha-haiku-4-5", { "x-session-id": session })).toBe("alpha-backup");
  });
});

describe("weights and rpm", () => {
  test("the heavy deployment serves until its rpm is used up, then the other; a new minute frees it", async () => {
    clock += 120_000;
    const seen = [];
    for (let i = 0; i < 4; i++) seen.push(await served(i, "alpha-opus-4-8"));
    expect(seen).toEqual(["alpha", "alpha", "alpha-backup", "alpha-backup"]);
    clock += 60_000;
    expect(await served(0, "alpha-opus-4-8")).toBe("alpha");
  });

  test("tpm: the prompt estimates of the minute must fit under it, else the other deployment", async () => {
    clock += 120_000;
    // A chat body of this prompt is about 140 bytes: some 35 tokens by the estimate, so one fits under 60 and two do not.
    const prompt = "x".repeat(60);
    const seen = [];
    for (let i = 0; i < 3; i++) {
      const a = await ask(h, VARIANTS[2], "alpha-fable-5", prompt);
      expect(a.status).toBe(200);
      seen.push(a.res.headers.get("x-turnpike-deployment"));
    }
    expect(seen).toEqual(["alpha", "alpha-backup", "alpha-backup"]);
  });
});
