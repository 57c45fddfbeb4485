/**
 * Retries before the first byte: a failing deployment's request lands on the other deployment;
 * another 4xx is the answer; one deployment alone is tried again after its retry-after, up to the
 * cap, and a 429 that asks too long a wait reaches the client with the vendor's headers.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { Harness } from "../harness";
import { ask, label, recordOf, routedGateway, VARIANTS } from "./setup";

let h: Harness;
/** Each attempt as the `onAttempt` event told it: request id, attempt number, deployment. */
const attempts: [string, number, string | undefined][] = [];
beforeAll(async () => {
  h = await routedGateway(
    `
vendors:
  alpha-backup: { protocol: messages }
  beta-backup: { protocol: chat }
models:
  - id: alpha-haiku-4-5
    deployments:
      - { vendor: alpha, weight: 1000000 }
      - { vendor: alpha-backup, weight: 1 }
  - id: beta-5
    deployments:
      - { vendor: beta, weight: 1000000 }
      - { vendor: beta-backup, weight: 1 }
routing:
  retries: 1
  retry_after_max_s: 2
  breaker: { failures: 1000, cooldown_s: 30 }
`,
    { hooks: [{ onAttempt: (ctx, _target, n, deployment) => attempts.push([ctx.id, n, deployment]) }] },
  );
});
afterAll(() => h.close());
beforeEach(() => h.gw.simulator!.clearFaults());

/** The credentials the simulator saw since `from`. */
const keysSeen = (from: number) =>
  h.gw
    .simulator!.requests.slice(from)
    .map(
      (r) => r.headers["x-api-key"] ?? r.headers.authorization?.replace("Bearer ", "") ?? r.headers["x-goog-api-key"],
    );

describe("a failing deployment's request lands on the other one", () => {
  for (const v of VARIANTS) {
    for (const [model, vendor] of [
      ["alpha-haiku-4-5", "alpha"],
      ["beta-5", "beta"],
    ] as const) {
      test(`${label(v)} → ${model}: a 529 from ${vendor}, served by ${vendor}-backup`, async () => {
        h.gw.simulator!.fault(`simulator-${vendor}`, { status: 529, times: 1 });
        const from = h.gw.simulator!.requests.length;
        const a = await ask(h, v, model, `Hi [sim text="from the backup"]`);
        expect(a.status).toBe(200);
        expect(a.text).toBe("from the backup");
        expect(a.model).toBe(model);
        expect(a.res.headers.get("x-turnpike-deployment")).toBe(`${vendor}-backup`);
        expect(a.res.headers.get("x-turnpike-attempts")).toBe("2");
        expect(a.res.headers.get("x-turnpike-model")).toBe(model);
        expect(a.res.headers.get("x-turnpike-fallback-from")).toBeNull();
        expect(keysSeen(from)).toEqual([`simulator-${vendor}`, `simulator-${vendor}-backup`]);
        const id = a.res.headers.get("x-request-id")!;
        expect(attempts.filter(([r]) => r === id).map(([, n, d]) => [n, d])).toEqual([
          [1, vendor],
          [2, `${vendor}-backup`],
        ]);
        const row = await recordOf(h, a.res);
        expect(row).toMatchObject({ model, deployment: `${vendor}-backup`, attempts: 2, status: 200 });
        expect(row.requested_model).toBeUndefined();
        expect(row.output_tokens).toBeGreaterThan(0);
      });
    }
    test(`${label(v)}: a dropped connection is retried too, and counted as an unreachable attempt`, async () => {
      const unreachable = async () =>
        Number(
          /turnpike_upstream_errors_total\{gen_ai_provider_name="alpha",turnpike_vendor="alpha",error_type="unreachable"\} (\d+)/.exec(
            await (await fetch(`${h.url}/metrics`)).text(),
          )?.[1] ?? 0,
        );
      const before = await unreachable();
      h.gw.simulator!.fault("simulator-alpha", { reset: true, times: 1 });
      const a = await ask(h, v, "alpha-haiku-4-5", `Hi [sim text="after a reset"]`);
      expect(a.status).toBe(200);
      expect(a.text).toBe("after a reset");
      expect(a.res.headers.get("x-turnpike-deployment")).toBe("alpha-backup");
      expect(a.res.headers.get("x-turnpike-attempts")).toBe("2");
      // The request succeeded on the backup; the failed attempt is still in the metrics.
      expect(await unreachable()).toBe(before + 1);
    });
    test(`${label(v)}: another 4xx is the answer, never retried`, async () => {
      h.gw.simulator!.fault("simulator-alpha", { status: 403, times: 1 });
      const from = h.gw.simulator!.requests.length;
      const a = await ask(h, v, "alpha-haiku-4-5", "Hi");
      expect(a.status).toBe(403);
      expect(a.errorType).toBe("permission_error");
      expect(a.res.headers.get("x-turnpike-attempts")).toBe("1");
      expect(keysSeen(from)).toEqual(["simulator-alpha"]);
      const row = await recordOf(h, a.res);
      expect(row).toMatchObject({ deployment: "alpha", attempts: 1, upstream_status: 403, cost_usd: 0 });
    });
  }
});

describe("one deployment left: its retry-after is honoured up to the cap", () => {
  for (const v of VARIANTS) {
    test(`${label(v)}: both fail once, the retry waits out retry-after 1 s and serves`, async () => {
      h.gw.simulator!.fault("simulator-alpha", { status: 429, retry_after: 1, times: 1 });
      h.gw.simulator!.fault("simulator-alpha-backup", { status: 429, retry_after: 1, times: 1 });
      const a = await ask(h, v, "alpha-haiku-4-5", `Hi [sim text="third time"]`);
      expect(a.status).toBe(200);
      expect(a.text).toBe("third time");
      expect(a.res.headers.get("x-turnpike-attempts")).toBe("3");
    });
    test(`${label(v)}: a wait over the cap is not taken; the client gets the 429 with retry-after and the vendor's limit headers`, async () => {
      h.gw.simulator!.fault("simulator-beta", { status: 429, retry_after: 30 });
      h.gw.simulator!.fault("simulator-beta-backup", { status: 429, retry_after: 30 });
      const a = await ask(h, v, "beta-5", "Hi");
      expect(a.status).toBe(429);
      expect(a.errorType).toBe(v.format === "messages" ? "rate_limit_error" : "rate_limit_exceeded");
      expect(a.res.headers.get("retry-after")).toBe("30");
      expect(a.res.headers.get("x-ratelimit-remaining-requests")).toBe("0");
      expect(a.res.headers.get("x-ratelimit-reset-requests")).toBe("30s");
      expect(a.res.headers.get("x-turnpike-attempts")).toBe("2");
    });
  }
});

describe("a model of one deployment and no fallback (its route's direct attempt): retried on itself", () => {
  for (const v of VARIANTS) {
    test(`${label(v)}: a 529 then an answer, two attempts on the same deployment`, async () => {
      h.gw.simulator!.fault("simulator-gamma", { status: 529, times: 1 });
      const a = await ask(h, v, "gamma-3-flash", `Hi [sim text="second try"]`);
      expect(a.status).toBe(200);
      expect(a.text).toBe("second try");
      expect(a.res.headers.get("x-turnpike-deployment")).toBe("gamma");
      expect(a.res.headers.get("x-turnpike-attempts")).toBe("2");
      // Told by `onAttempt` (the simulator also sees a messages stream's count of the prompt, asked alongside).
      const id = a.res.headers.get("x-request-id")!;
      expect(attempts.filter(([r]) => r === id).map(([, n, d]) => [n, d])).toEqual([
        [1, "gamma"],
        [2, "gamma"],
      ]);
      expect(await recordOf(h, a.res)).toMatchObject({ model: "gamma-3-flash", deployment: "gamma", attempts: 2 });
    });
    test(`${label(v)}: still failing after its one retry, the client gets the upstream's error`, async () => {
      h.gw.simulator!.fault("simulator-gamma", { status: 500, times: 2 });
      const a = await ask(h, v, "gamma-3-flash", "Hi");
      expect(a.status).toBe(500);
      expect(a.res.headers.get("x-turnpike-attempts")).toBe("2");
      const id = a.res.headers.get("x-request-id")!;
      expect(attempts.filter(([r]) => r === id).map(([, n, d]) => [n, d])).toEqual([
        [1, "gamma"],
        [2, "gamma"],
      ]);
    });
  }
});
