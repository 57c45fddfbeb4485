import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { SKIP_THOUGHT_SIGNATURE } from "@turnpike/providers";
import { type Harness, startHarness } from "../harness";
import { freshPrefix, redisUp, TEST_REDIS_URL } from "./servers";

/**
 * A generateContent model wants each replayed tool call's thought signature back. With Redis
 * configured, the signature one instance kept when the call was made is found by another
 * instance the next turn lands on (behind a load balancer, turns go anywhere); without it, that
 * instance can only send the documented placeholder.
 */
describe.skipIf(!redisUp)("thought signatures shared between instances through Redis", () => {
  let a: Harness;
  let b: Harness;
  let alone: Harness;
  let redis: RedisClient;
  let prefix: ReturnType<typeof freshPrefix>;

  beforeAll(async () => {
    prefix = freshPrefix();
    const env = { TURNPIKE_REDIS_URL: TEST_REDIS_URL, TURNPIKE_REDIS_PREFIX: prefix.prefix };
    [a, b, alone] = await Promise.all([startHarness(env), startHarness(env), startHarness()]);
    redis = new RedisClient(TEST_REDIS_URL);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close(), alone.close()]);
    redis.close();
    await prefix.drop();
  });

  const tools = [
    {
      type: "function",
      function: {
        name: "get_weather",
        description: "Weather in a city",
        parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
    },
  ];
  const call = (h: Harness, messages: unknown[], stream: boolean) =>
    h.call("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({
        model: "gamma-3-pro",
        messages,
        tools,
        tool_choice: messages.length === 1 ? "required" : "auto",
        stream,
      }),
    });
  /** The thought signature of the first function call in the last request `h` sent upstream. */
  const sentSignature = (h: Harness): unknown => {
    const body = h.gw.simulator!.requests.at(-1)!.body as {
      contents: { parts: { functionCall?: unknown; thoughtSignature?: string }[] }[];
    };
    return body.contents.flatMap((c) => c.parts).find((p) => p.functionCall)?.thoughtSignature;
  };

  for (const stream of [false, true]) {
    test(`a tool call made on one instance is replayed on another with its signature (${stream ? "stream" : "JSON"} first turn)`, async () => {
      const first = [{ role: "user", content: "What is the weather in Paris?" }];
      const r1 = await call(a, first, stream);
      expect(r1.status).toBe(200);
      let toolCall: { id: string; function: { name: string; arguments: string } };
      if (stream) {
        const chunks = (await r1.text())
          .split("\n\n")
          .filter((f) => f.startsWith("data: {"))
          .map((f) => JSON.parse(f.slice(6)));
        const d = chunks.flatMap((c) => c.choices?.[0]?.delta?.tool_calls ?? []);
        toolCall = {
          id: d[0].id,
          function: {
            name: d[0].function.name,
            arguments: d.map((x: { function: { arguments?: string } }) => x.function.arguments ?? "").join(""),
          },
        };
      } else {
        toolCall = ((await r1.json()) as any).choices[0].message.tool_calls[0];
      }
      expect(toolCall.function.name).toBe("get_weather");
      const kept = await redis.get(`${prefix.prefix}sig:${toolCall.id}`);
      expect(kept).toBeString();
      expect(kept).not.toBe(SKIP_THOUGHT_SIGNATURE);

      const second = [
        ...first,
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: toolCall.id, type: "function", function: toolCall.function }],
        },
        { role: "tool", tool_call_id: toolCall.id, content: "18 °C, clear" },
      ];
      const r2 = await call(b, second, false);
      expect(r2.status).toBe(200);
      expect(sentSignature(b)).toBe(kept!);
      // An instance that shares nothing has only the placeholder to send.
      const r3 = await call(alone, second, false);
      expect(r3.status).toBe(200);
      expect(sentSignature(alone)).toBe(SKIP_THOUGHT_SIGNATURE);
    });
  }
});
