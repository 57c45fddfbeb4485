/**
 * When every deployment is rate-limited, the official clients see their own rate-limit error
 * carrying the upstream's wait (retry-after) and the vendor's limit headers, so they back off.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import type { Harness } from "../harness";
import { routedGateway } from "./setup";

let h: Harness;
beforeAll(async () => {
  h = await routedGateway(`
vendors:
  alpha-backup: { protocol: messages }
models:
  - id: alpha-haiku-4-5
    deployments: [{ vendor: alpha }, { vendor: alpha-backup }]
    fallbacks: [beta-5]
routing:
  retries: 2
  retry_after_max_s: 5
  breaker: { failures: 1000, cooldown_s: 30 }
`);
  for (const k of ["alpha", "alpha-backup", "beta"])
    h.gw.simulator!.fault(`simulator-${k}`, { status: 429, retry_after: 42 });
});
afterAll(() => h.close());

describe("a 429 with retry-after reaches the official clients as their rate-limit error", () => {
  test("messages client (@anthropic-ai/sdk), JSON and stream", async () => {
    const client = new Anthropic({ apiKey: h.key, baseURL: h.url, maxRetries: 0 });
    for (const stream of [false, true]) {
      const err = await client.messages
        .create({ model: "alpha-haiku-4-5", max_tokens: 20, stream, messages: [{ role: "user", content: "Hi" }] })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(Anthropic.RateLimitError);
      const e = err as InstanceType<typeof Anthropic.RateLimitError>;
      expect(e.status).toBe(429);
      expect(e.headers?.get("retry-after")).toBe("42");
      expect(e.headers?.get("x-turnpike-attempts")).toBe("3");
      expect(e.headers?.get("x-turnpike-fallback-from")).toBe("alpha-haiku-4-5");
      // beta served last (a chat-protocol vendor): its own limit headers come through.
      expect(e.headers?.get("x-ratelimit-remaining-requests")).toBe("0");
    }
  });

  test("chat client (openai), JSON and stream", async () => {
    const client = new OpenAI({ apiKey: h.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
    for (const stream of [false, true]) {
      const err = await client.chat.completions
        .create({ model: "alpha-haiku-4-5", stream, messages: [{ role: "user", content: "Hi" }] })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(OpenAI.RateLimitError);
      const e = err as InstanceType<typeof OpenAI.RateLimitError>;
      expect(e.status).toBe(429);
      expect(e.headers?.get("retry-after")).toBe("42");
      expect(e.headers?.get("x-ratelimit-reset-requests")).toBe("42s");
    }
  });
});
