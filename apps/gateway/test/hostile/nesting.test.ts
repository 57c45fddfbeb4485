import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Harness, startHarness } from "../harness";
import { errorMessageOf } from "./bad-upstream";

// Issue 11, item 1: a tool schema nested 40,000 levels deep (~240 KB) once overflowed the stack of
// the local token counter and blocked every other request for ~3 s. It is refused with a 400
// naming the field and the limit before any work is done, and other requests do not wait. So
// does a long run of one character, which the tokenizer once took quadratic time over.

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});

/** One round first, so that no first-call work (compiling, loading) is what a test below sees. */
beforeAll(async () => {
  await (await send("messages")).text();
  await (await h.call("/v1/models", { method: "GET" })).text();
});
afterAll(() => h.close());

/** A JSON schema nested `depth` levels deep, as text (built without recursion). */
function deepSchema(depth: number): string {
  return '{"type":"object","properties":{"a":'.repeat(depth) + '{"type":"string"}' + "}}".repeat(depth);
}

const schema = deepSchema(20_000); // 40,000 levels of JSON
const bodies = {
  messages: `{"model":"beta-5","max_tokens":100,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t","input_schema":${schema}}]}`,
  chat: `{"model":"alpha-haiku-4-5","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"t","parameters":${schema}}}]}`,
  count: `{"model":"gamma-3-pro","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t","input_schema":${schema}}]}`,
};
const PATHS = { messages: "/v1/messages", chat: "/v1/chat/completions", count: "/v1/messages/count_tokens" } as const;

const send = (kind: keyof typeof bodies) =>
  h.call(PATHS[kind], { method: "POST", dialect: kind === "chat" ? "chat" : "messages", body: bodies[kind] });

describe("deep nesting", () => {
  test("the body is about 240 KB and 40,000 levels deep", () => {
    expect(schema.length).toBeGreaterThan(200_000);
    expect(schema.length).toBeLessThan(800_000);
  });

  for (const kind of ["messages", "chat", "count"] as const) {
    // The message is the body reader's (read-body.ts): the refusal comes before any step that
    // counts or converts the request, which is where the deep schema once blocked the process.
    test(`${kind}: 400 from the body reader, naming the field and the limit, in the caller's format, and no record`, async () => {
      const res = await send(kind);
      expect(res.status).toBe(400);
      const message = errorMessageOf(kind === "chat" ? "chat" : "messages", await res.json());
      expect(message).toContain("tools: JSON nests deeper than the limit of 128 levels");
      await h.gw.deps.ledger.flush();
      expect(
        (await h.gw.deps.store.queryUsage({ key_id: h.keyId })).filter(
          (r) => r.request_id === res.headers.get("x-request-id"),
        ),
      ).toHaveLength(0);
    });
  }

  test("eight at once: every one refused, and a /v1/models call sent among them answers", async () => {
    const deep = Array.from({ length: 8 }, (_, i) => send(i % 2 ? "chat" : "messages"));
    const models = await h.call("/v1/models", { method: "GET" });
    expect(models.status).toBe(200);
    expect(((await models.json()) as any).data.length).toBeGreaterThan(0);
    for (const res of await Promise.all(deep)) expect(res.status).toBe(400);
  });

  // The tokenizer once took quadratic time over a run of one letter: a megabyte of it then took
  // minutes, past the test's own time limit. Counted in slices, it answers, and so does a call
  // sent beside it. (No clock is read: how fast is the benchmark's business.)
  test("a megabyte of one letter is counted locally, and a call sent beside it answers", async () => {
    // beta-5's protocol has no count call: the prompt is counted by Turnpike's own tokenizer.
    const body = JSON.stringify({ model: "beta-5", messages: [{ role: "user", content: "x".repeat(1024 * 1024) }] });
    const counting = h.call("/v1/messages/count_tokens", { method: "POST", dialect: "messages", body });
    const models = h.call("/v1/models", { method: "GET" });
    expect((await models).status).toBe(200);
    const res = await counting;
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).input_tokens).toBeGreaterThan(131_072);
  });

  test("a long run of one letter sent to the built-in simulator (in the gateway's process) is answered, and so is a call beside it", async () => {
    const body = JSON.stringify({ model: "beta-5", messages: [{ role: "user", content: "x".repeat(256 * 1024) }] });
    const inference = h.call("/v1/chat/completions", { method: "POST", dialect: "chat", body });
    const models = h.call("/v1/models", { method: "GET" });
    expect((await models).status).toBe(200);
    expect((await inference).status).toBe(200);
  });

  test("a schema of ordinary depth passes", async () => {
    const res = await h.call("/v1/messages", {
      method: "POST",
      dialect: "messages",
      body: bodies.messages.replace(schema, deepSchema(20)),
    });
    expect(res.status).toBe(200);
  });
});

// Issue 27, item 1: the built-in simulator's prompt cache once re-counted every prefix of a
// conversation: 6,000 turns held every client 9.4 s at 1.8 GB. Linear now, and bounded by its
// documented body limit (README "The simulator's limits").
describe("a long conversation to the built-in simulator", () => {
  const turns = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `turn ${i} of a long talk` }));

  test("6,000 turns are answered with every turn counted, and a call sent beside it answers", async () => {
    const body = JSON.stringify({ model: "beta-5", messages: turns(6_000) });
    const inference = h.call("/v1/chat/completions", { method: "POST", dialect: "chat", body });
    const models = h.call("/v1/models", { method: "GET" });
    expect((await models).status).toBe(200);
    const res = await inference;
    expect(res.status).toBe(200);
    const usage = ((await res.json()) as any).usage;
    // 6,000 turns of at least 3 (overhead) + 6 tokens each.
    expect(usage.prompt_tokens).toBeGreaterThan(6_000 * 9);
  });

  test("15,000 longer turns (past the simulator's 1 MiB, within the gateway's value limit): a 400 in the client's format, and the gateway still answers", async () => {
    const longer = turns(15_000).map((t) => ({ ...t, content: `${t.content}, and on, and on, and on` }));
    const body = JSON.stringify({ model: "beta-5", messages: longer });
    expect(body.length).toBeGreaterThan(1024 * 1024);
    const res = await h.call("/v1/chat/completions", { method: "POST", dialect: "chat", body });
    expect(res.status).toBe(400);
    const error = ((await res.json()) as any).error;
    expect(error.message).toContain("simulator's limit of 1048576 bytes");
    expect((await h.call("/v1/models", { method: "GET" })).status).toBe(200);
  });

  test("100,000 turns (300,000 JSON values): a 413 from the gateway's own value limit, before any step", async () => {
    const body = JSON.stringify({ model: "beta-5", messages: turns(100_000) });
    const res = await h.call("/v1/chat/completions", { method: "POST", dialect: "chat", body });
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).error.message).toContain("TURNPIKE_MAX_BODY_VALUES");
  });
});
