import { afterEach, describe, expect, test } from "bun:test";
import { FORMATS } from "../formats";
import type { Target } from "../protocols";
import type { RequestContext } from "../request/context";
import type { PipelineHooks } from "../request/events";
import { execute } from "./execute";
import { plan, type Plan } from "./plan";
import { json, testContext, testDeps, type FetchHandler, type TestDeps } from "../../test/support/test-deps";

let t: TestDeps;
afterEach(() => t.close());

const reply = {
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: "alpha-opus-4-8",
  content: [{ type: "text", text: "Hi" }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 5, output_tokens: 1 },
};

async function setup(
  handler: FetchHandler,
  opts: { model?: string; stream?: boolean; hooks?: PipelineHooks[]; signal?: AbortSignal } = {},
): Promise<{ ctx: RequestContext; p: Plan }> {
  t = await testDeps({ fetch: handler, hooks: opts.hooks ?? [] });
  const model = opts.model ?? "alpha-opus-4-8";
  const body = {
    model,
    max_tokens: 20,
    stream: opts.stream ?? false,
    messages: [{ role: "user", content: "What is the capital of France?" }],
  };
  const request = new Request("http://gateway.test/v1/messages", {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "anthropic-beta": "b1" },
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  const ctx = testContext({ format: FORMATS.messages, request });
  const entry = t.deps.catalog.get(model)!;
  const target: Target = { entry, upstream: t.deps.upstreams.get(entry.owned_by)! };
  return { ctx, p: await plan(t.deps, FORMATS.messages, FORMATS.messages.validate(body), target) };
}

describe("execute", () => {
  test("an ok reply → kind reply, after one POST built by the protocol with the client's headers", async () => {
    const { ctx, p } = await setup(() => json(reply));
    const out = await execute(t.deps, ctx, p);
    expect(out.kind).toBe("reply");
    if (out.kind !== "reply") return;
    expect(out.status).toBe(200);
    expect(out.inputTokens).toBeUndefined();
    expect(((await out.response.json()) as typeof reply).id).toBe("msg_1");
    expect(t.fetch.calls).toHaveLength(1);
    const call = t.fetch.calls[0]!;
    expect(call.url).toBe("http://sim.invalid/v1/messages");
    expect(call.method).toBe("POST");
    expect(call.headers.get("x-api-key")).toBe("simulator-alpha");
    expect(call.headers.get("anthropic-beta")).toBe("b1");
    expect(JSON.parse(call.body).model).toBe("alpha-opus-4-8");
    expect(call.signal).toBe(ctx.request.signal);
  });

  test("an upstream 529 → kind error with the parsed GatewayError and the upstream status", async () => {
    const { ctx, p } = await setup(() =>
      json({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, 529),
    );
    const out = await execute(t.deps, ctx, p);
    expect(out.kind).toBe("error");
    if (out.kind !== "error") return;
    expect(out.status).toBe(529);
    expect(out.error.status).toBe(529);
    expect(out.error.type).toBe("overloaded_error");
    expect(out.error.message).toBe("Overloaded");
  });

  test("a fetch that throws → kind error, 502 naming the vendor, status 0, logged", async () => {
    const { ctx, p } = await setup(() => {
      throw new TypeError("connect ECONNREFUSED");
    });
    const out = await execute(t.deps, ctx, p);
    expect(out.kind).toBe("error");
    if (out.kind !== "error") return;
    expect(out.status).toBe(0);
    expect(out.error.status).toBe(502);
    expect(out.error.message).toBe("Could not reach the alpha upstream: connect ECONNREFUSED");
    expect(t.logger.lines).toEqual([
      `turnpike warn: upstream unreachable request_id=${ctx.id} vendor=alpha reason=connect ECONNREFUSED`,
    ]);
  });

  test("a client that went away → kind gone, nothing logged", async () => {
    const ac = new AbortController();
    const { ctx, p } = await setup(
      () => {
        ac.abort();
        throw new DOMException("The operation was aborted.", "AbortError");
      },
      { signal: ac.signal },
    );
    expect(await execute(t.deps, ctx, p)).toEqual({ kind: "gone" });
    expect(t.logger.lines).toEqual([]);
  });

  test("a client already gone: the upstream call is aborted → gone", async () => {
    const ac = new AbortController();
    ac.abort();
    const { ctx, p } = await setup(() => json(reply), { signal: ac.signal });
    expect((await execute(t.deps, ctx, p)).kind).toBe("gone");
  });

  const limits = { n: 1, connectMs: 5000, firstByteMs: 5000, idleMs: 5000 };
  /**
   * An upstream that never answers on its own: only its call's abort ends it (so a test that
   * finishes proves the abort came, with no clock read), and says that it came.
   */
  const hanging = (abortedAt: { ms?: number }) => (call: { signal: AbortSignal | undefined }) =>
    new Promise<Response>((_resolve, reject) => {
      call.signal!.addEventListener("abort", () => {
        abortedAt.ms = performance.now();
        reject(new DOMException("The operation was aborted.", "AbortError"));
      });
    });

  for (const leaveAfterMs of [2, 150]) {
    test(`with deadlines, a client that leaves ${leaveAfterMs} ms into a slow attempt aborts the upstream call → gone`, async () => {
      const ac = new AbortController();
      const abortedAt: { ms?: number } = {};
      const { ctx, p } = await setup(hanging(abortedAt), { signal: ac.signal });
      setTimeout(() => ac.abort(), leaveAfterMs);
      // Before the link delay (20 ms) or after it: the upstream is told, or this would never end.
      expect((await execute(t.deps, ctx, p, limits)).kind).toBe("gone");
      expect(abortedAt.ms).toBeGreaterThan(0);
    });
  }

  test("with deadlines, connectMs passed → a 504 timeout error, the call aborted", async () => {
    const abortedAt: { ms?: number } = {};
    const { ctx, p } = await setup(hanging(abortedAt));
    const out = await execute(t.deps, ctx, p, { ...limits, connectMs: 60 });
    expect(out.kind).toBe("error");
    if (out.kind !== "error") return;
    expect(out.timedOut).toBe(true);
    expect(out.error.status).toBe(504);
    expect(abortedAt.ms).toBeGreaterThan(0);
  });
});

describe("execute: hooks", () => {
  test("onAttempt (target, attempt 1) then onUpstreamResponse (status, ms)", async () => {
    const seen: string[] = [];
    let attemptTarget: Target | undefined;
    let ms = -1;
    const hooks: PipelineHooks[] = [
      {
        onAttempt: (c, target, attempt) => {
          seen.push(`attempt ${c.id} ${attempt}`);
          attemptTarget = target;
        },
        onUpstreamResponse: (c, status, elapsed) => {
          seen.push(`response ${c.id} ${status}`);
          ms = elapsed;
        },
      },
    ];
    const { ctx, p } = await setup(() => json(reply, 200), { hooks });
    await execute(t.deps, ctx, p);
    expect(seen).toEqual([`attempt ${ctx.id} 1`, `response ${ctx.id} 200`]);
    expect(attemptTarget).toBe(p.target);
    expect(ms).toBeGreaterThanOrEqual(0);
  });

  test("an upstream that could not be reached is told as status 0", async () => {
    const seen: string[] = [];
    const hooks: PipelineHooks[] = [
      { onAttempt: () => seen.push("attempt"), onUpstreamResponse: (_c, status) => seen.push(`response ${status}`) },
    ];
    const { ctx, p } = await setup(() => Promise.reject(new Error("down")), { hooks });
    await execute(t.deps, ctx, p);
    expect(seen).toEqual(["attempt", "response 0"]);
  });
});

describe("execute: the upstream's count alongside", () => {
  const sse = () => new Response("data: {}\n\n", { headers: { "content-type": "text/event-stream" } });

  test("a messages client streaming from generate: the count call runs too and its number is returned", async () => {
    const { ctx, p } = await setup((call) => (call.url.endsWith(":countTokens") ? json({ totalTokens: 42 }) : sse()), {
      model: "gamma-3-pro",
      stream: true,
    });
    expect(p.countAlongside).toBe(true);
    const out = await execute(t.deps, ctx, p);
    expect(out.kind === "reply" && out.inputTokens).toBe(42);
    expect(t.fetch.calls.map((c) => c.url.split("/").pop()).sort()).toEqual([
      "gamma-3-pro:countTokens",
      "gamma-3-pro:streamGenerateContent?alt=sse",
    ]);
    // Both calls go with the client's signal: a client that leaves cancels the count too.
    for (const c of t.fetch.calls) expect(c.signal).toBe(ctx.request.signal);
  });

  test("a failed count leaves the local count standing (inputTokens undefined)", async () => {
    const { ctx, p } = await setup((call) => (call.url.endsWith(":countTokens") ? json({ error: "no" }, 500) : sse()), {
      model: "gamma-3-pro",
      stream: true,
    });
    const out = await execute(t.deps, ctx, p);
    expect(out.kind).toBe("reply");
    expect(out.kind === "reply" && out.inputTokens).toBeUndefined();
  });
});

describe("execute: Turnpike's own count of a prompt the stream must open with", () => {
  test("a messages client streaming from chat: the call goes out first, the prompt is counted once while it is answered", async () => {
    const order: string[] = [];
    const { ctx, p } = await setup(
      () => {
        order.push("fetch");
        return new Response("data: [DONE]\n\n", { headers: { "content-type": "text/event-stream" } });
      },
      { model: "beta-5", stream: true },
    );
    expect(p.countFirst).toBe(true);
    const count = t.deps.countPrompt;
    t.deps.countPrompt = (r) => {
      order.push("count");
      return count(r);
    };
    const out = await execute(t.deps, ctx, p);
    expect(out.kind).toBe("reply");
    expect(order).toEqual(["fetch", "count"]);
    // What the stream's first event will carry: the same count, not counted again.
    expect(p.reply.inputTokens).toBeGreaterThan(5);
    expect(order).toEqual(["fetch", "count"]);
  });

  test("a JSON reply, or a stream whose upstream tells the input first, is not counted", async () => {
    for (const [model, stream] of [
      ["beta-5", false],
      ["alpha-opus-4-8", true],
    ] as const) {
      const { ctx, p } = await setup(
        () =>
          stream ? new Response("data: {}\n\n", { headers: { "content-type": "text/event-stream" } }) : json(reply),
        { model, stream },
      );
      let counted = 0;
      t.deps.countPrompt = () => ++counted;
      await execute(t.deps, ctx, p);
      expect(p.countFirst).toBe(false);
      expect(counted).toBe(0);
      t.close();
    }
  });
});
