import { describe, expect, test } from "bun:test";
import { GatewayError } from "@turnpike/providers";
import type { LogFields, Logger } from "../log/logger";
import { Breaker } from "./breaker";
import { tellBreaker } from "./attempt-rules";

/** A logger that keeps its warnings, the only lines `tellBreaker` writes. */
function keptWarnings(): { logger: Logger; warnings: { message: string; fields?: LogFields }[] } {
  const warnings: { message: string; fields?: LogFields }[] = [];
  const none = () => {};
  return {
    warnings,
    logger: { error: none, info: none, request: none, warn: (message, fields) => warnings.push({ message, fields }) },
  };
}

function deployment() {
  return { breaker: new Breaker({ failures: 2, cooldownS: 30 }), model: "alpha-opus-4-8", name: "east" };
}

const failed = (status: number) => ({
  kind: "error" as const,
  error: new GatewayError({ status, message: `upstream ${status}` }),
});

describe("tellBreaker: the circuit's verdict on one attempt, shared by every chain and by embeddings", () => {
  test("a retryable failure counts against the circuit, is logged, and leaves room for another attempt", () => {
    const { logger, warnings } = keptWarnings();
    const d = deployment();
    const deps = { logger, now: () => 1_000 };
    expect(tellBreaker(deps, { id: "req_1" }, d, performance.now(), 1, failed(503), 503)).toBe(false);
    expect(tellBreaker(deps, { id: "req_1" }, d, performance.now(), 2, failed(529), 529)).toBe(false);
    expect(d.breaker.failuresTotal).toBe(2);
    expect(d.breaker.lastError).toBe("upstream 529");
    expect(d.breaker.state(1_000)).toBe("open");
    expect(warnings).toEqual([
      {
        message: "upstream attempt failed",
        fields: { request_id: "req_1", deployment: "alpha-opus-4-8@east", status: 503, attempt: 1 },
      },
      {
        message: "upstream attempt failed",
        fields: { request_id: "req_1", deployment: "alpha-opus-4-8@east", status: 529, attempt: 2 },
      },
    ]);
  });

  test("a failure not worth another attempt (400) is the client's answer and the upstream up: the circuit closes", () => {
    const { logger, warnings } = keptWarnings();
    const d = deployment();
    d.breaker.failure(1_000, "earlier");
    expect(tellBreaker({ logger, now: () => 2_000 }, { id: "req_2" }, d, performance.now(), 2, failed(400), 400)).toBe(
      true,
    );
    expect(d.breaker.consecutiveFailures).toBe(0);
    expect(warnings).toEqual([]);
  });

  test("a client gone is no verdict: the half-open probe is released, the failures stay as they were", () => {
    const { logger } = keptWarnings();
    const d = deployment();
    d.breaker.failure(0, "a");
    d.breaker.failure(0, "b");
    d.breaker.take(31_000); // past the cooldown: this request is the probe
    expect(d.breaker.available(31_000)).toBe(false);
    expect(
      tellBreaker({ logger, now: () => 31_000 }, { id: "req_3" }, d, performance.now(), 1, { kind: "gone" }, 0),
    ).toBe(true);
    expect(d.breaker.available(31_000)).toBe(true);
    expect(d.breaker.consecutiveFailures).toBe(2);
  });
});
