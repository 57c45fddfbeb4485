/**
 * Deadlines: an upstream that does not answer in `connect_ms` is a failure before the first byte
 * (retried, then a 504 `timeout` in the caller's format); a stream silent for `idle_ms` ends in
 * the in-band error. Per model over `routing.timeouts`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { Harness } from "../harness";
import { ask, label, recordOf, routedGateway, VARIANTS } from "./setup";

// Deadlines that a healthy answer must beat are generous (a loaded machine answers late); the
// ones that must pass are met by upstreams that never answer, or answer long after them.
let h: Harness;
beforeAll(async () => {
  h = await routedGateway(`
vendors:
  alpha-backup: { protocol: messages }
models:
  - id: alpha-haiku-4-5
    deployments:
      - { vendor: alpha, weight: 1000000 }
      - { vendor: alpha-backup, weight: 1 }
    timeouts: { connect_ms: 1000 }
  - id: beta-5
    timeouts: { connect_ms: 1000, idle_ms: 300 }
routing:
  timeouts: { connect_ms: 5000, first_byte_ms: 5000, idle_ms: 5000 }
  breaker: { failures: 1000, cooldown_s: 30 }
`);
});
afterAll(() => h.close());
beforeEach(() => h.gw.simulator!.clearFaults());

describe("an upstream that does not answer", () => {
  for (const v of VARIANTS) {
    test(`${label(v)}: is left after connect_ms, and the other deployment serves`, async () => {
      h.gw.simulator!.fault("simulator-alpha", { hang: true, times: 1 });
      const a = await ask(h, v, "alpha-haiku-4-5", `Hi [sim text="not hung"]`);
      expect(a.status).toBe(200);
      expect(a.text).toBe("not hung");
      expect(a.res.headers.get("x-turnpike-deployment")).toBe("alpha-backup");
      expect(a.res.headers.get("x-turnpike-attempts")).toBe("2");
    });
    test(`${label(v)}: with nowhere else to go, a 504 timeout in the caller's format, recorded unbilled`, async () => {
      h.gw.simulator!.fault("simulator-beta", { hang: true, times: 1 });
      const a = await ask(h, v, "beta-5", "Hi");
      expect(a.status).toBe(504);
      expect(a.text).toContain("did not answer within 1000 ms");
      // Each format's own words for it: the messages format's type, the chat format's code.
      if (v.format === "messages") expect(a.errorType).toBe("timeout_error");
      else expect([a.errorType, a.errorCode]).toEqual(["server_error", "timeout"]);
      expect(await recordOf(h, a.res)).toMatchObject({ status: 504, upstream_status: 0, cost_usd: 0, attempts: 1 });
    });
    test(`${label(v)}: a slow answer within another model's longer deadline is waited for`, async () => {
      h.gw.simulator!.fault("simulator-gamma", { first_byte_ms: 600, times: 1 });
      const a = await ask(h, v, "gamma-3-flash", `Hi [sim text="slow but fine"]`);
      expect(a.status).toBe(200);
      expect(a.text).toBe("slow but fine");
    });
  }
});

describe("a stream that goes quiet", () => {
  for (const v of VARIANTS.filter((x) => x.stream)) {
    test(`${label(v)}: idle_ms after the last chunk ends it with the in-band error, recorded as failed`, async () => {
      const a = await ask(h, v, "beta-5", `Hi [sim latency=1500 chunks=3]`);
      expect(a.status).toBe(200);
      expect(a.errorType).toBeDefined();
      const row = await recordOf(h, a.res);
      expect(row.status).toBe(502);
    });
  }
});

describe("a body that does not come within first_byte_ms", () => {
  let slow: Harness;
  beforeAll(async () => {
    // The upstream's head comes at once, its body never (it errors once the gateway aborts it).
    const lateBody = ((_url: string, init?: RequestInit) => {
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          init?.signal?.addEventListener("abort", () => c.error(new Error("aborted")));
        },
      });
      const stream = typeof init?.body === "string" && JSON.parse(init.body).stream === true;
      return Promise.resolve(
        new Response(body, {
          status: 200,
          headers: { "content-type": stream ? "text/event-stream" : "application/json" },
        }),
      );
    }) as typeof fetch;
    slow = await routedGateway("routing:\n  timeouts: { first_byte_ms: 200 }\n", { fetch: lateBody });
  });
  afterAll(() => slow.close());
  for (const v of VARIANTS.filter((x) => !x.stream)) {
    test(`${label(v)}: a 504 timeout, recorded unbilled`, async () => {
      const a = await ask(slow, v, "beta-5", "Hi");
      expect(a.status).toBe(504);
      expect(a.text).toBe("The beta upstream did not send its reply within 200 ms.");
      expect(await recordOf(slow, a.res)).toMatchObject({ status: 504, upstream_status: 200, cost_usd: 0 });
    });
  }
  for (const v of VARIANTS.filter((x) => x.stream)) {
    test(`${label(v)}: the stream's headers are out, so it ends with the in-band error, recorded failed and unbilled`, async () => {
      const a = await ask(slow, v, "beta-5", "Hi");
      expect(a.status).toBe(200);
      expect(a.errorType).toBeDefined();
      expect(a.text).toBe("");
      expect(await recordOf(slow, a.res)).toMatchObject({ status: 502, cost_usd: 0 });
    });
  }
});
