import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { countValues, scanValues, takeCensus } from "../../src/http/json-census-worker";
import { mightExceed } from "../../src/http/json-census";
import { DEFAULT_MAX_BODY_VALUES, parseJsonWithin } from "../../src/request/read-body";
import { loadConfig } from "../../src/config/config";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";
import { memoryLogger } from "../support/memory-logger";
import { errorMessageOf } from "./bad-upstream";

// Issue 27, item 1: what one body costs the event loop grows with its JSON values, not its bytes —
// 32 MB of two-word turns once held every client of the default gateway for up to 0.9 s
// (scripts/event-loop-hold.ts). A body that might hold more than TURNPIKE_MAX_BODY_VALUES is
// parsed and counted on a worker thread first; one over the limit is a 413 in the caller's
// format, and the server's thread parses only bodies within it.

const MB = 1024 * 1024;

/** `n` conversation turns of a few words, each four JSON values (object, role, content, and the member count). */
const turns = (n: number, chat = true) =>
  Array.from({ length: n }, (_, i) =>
    chat
      ? { role: i % 2 ? "assistant" : "user", content: `turn ${i}` }
      : { role: i % 2 ? "assistant" : "user", content: [{ type: "text", text: `turn ${i}` }] },
  );

/** The error a promise is refused with (a GatewayError's status, type and message). */
async function refusal(p: Promise<unknown>): Promise<{ status?: number; type?: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return e as { status?: number; type?: string; message: string };
  }
  throw new Error("expected a refusal");
}

describe("the census", () => {
  test("counts every value, the root and object members included", () => {
    expect(countValues(1)).toBe(1);
    expect(countValues([])).toBe(1);
    expect(countValues({ a: 1, b: [1, 2, { c: null }] })).toBe(7);
    expect(countValues(turns(1000))).toBe(3001);
    // The worker's scan counts the same, building nothing.
    for (const v of [{ a: 1, b: [1, 2, { c: null }] }, turns(1000), [], [[]], { s: 'a:b,[c]{"' }, [1, [2, [3, {}]]]])
      expect(scanValues(JSON.stringify(v, null, 1), 128)).toEqual({
        values: countValues(v),
        deeper: false,
        broken: false,
      });
  });

  test("a body shorter than two characters a value cannot hold more than the limit, and skips the worker", () => {
    const tightest = `[${Array.from({ length: 999 }, () => "0").join(",")}]`; // 1,000 values in 1,999 characters
    expect(countValues(JSON.parse(tightest))).toBe(1000);
    expect(mightExceed(tightest, 1000)).toBe(false);
    expect(mightExceed(`${tightest}  `, 1000)).toBe(true);
  });

  test("says why a body is not acceptable: not JSON, or nested too deep (naming the field)", () => {
    expect(takeCensus({ id: 1, text: '{"a":', maxDepth: 128 }).notJson).toBeString();
    expect(takeCensus({ id: 4, text: '{"a":"[{\\"", "b":[]}', maxDepth: 128 })).toEqual({ id: 4, values: 3 });
    const deep = `{"tools":${"[".repeat(200)}${"]".repeat(200)}}`;
    expect(takeCensus({ id: 2, text: deep, maxDepth: 128 }).tooDeep?.message).toContain(
      "tools: JSON nests deeper than the limit of 128 levels",
    );
    expect(takeCensus({ id: 3, text: '{"a":[1,2]}', maxDepth: 128 })).toEqual({ id: 3, values: 4 });
  });

  test("on the worker: a body within the limit comes back parsed; over it, a 413; malformed or deep, a 400", async () => {
    const within = JSON.stringify({ messages: turns(600) }); // 1,802 values, over 2,000 characters
    expect(mightExceed(within, 2000)).toBe(true);
    expect(await parseJsonWithin(within, 2000)).toEqual({ messages: turns(600) });
    const over = await refusal(parseJsonWithin(JSON.stringify({ messages: turns(700) }), 2000));
    expect([over.status, over.type]).toEqual([413, "request_too_large"]);
    expect(over.message).toContain("Request body holds 2102 JSON values; this gateway takes at most 2000");
    expect((await refusal(parseJsonWithin(`${within.slice(0, -1)},`, 2000))).status).toBe(400);
    const deep = await refusal(parseJsonWithin(`{"tools":${"[".repeat(3000)}${"]".repeat(3000)}}`, 2000));
    expect(deep.status).toBe(400);
    expect(deep.message).toContain("tools: JSON nests deeper than the limit of 128 levels");
  });

  test("a 30 MB body of two million values is counted off the event loop: a request sent after it is answered first", async () => {
    const h = await startHarness();
    try {
      const big = JSON.stringify({ model: "beta-5", messages: turns(720_000) });
      expect(big.length).toBeGreaterThan(30 * 1e6);
      expect(big.length).toBeLessThan(32 * MB);
      const order: string[] = [];
      const census = parseJsonWithin(big, DEFAULT_MAX_BODY_VALUES).then(
        () => order.push("big parsed"),
        (e: { status?: number }) => order.push(`big refused ${e.status}`),
      );
      const health = await fetch(`${h.url}/health`);
      order.push(`health ${health.status}`);
      await census;
      expect(order).toEqual(["health 200", "big refused 413"]);
    } finally {
      await h.close();
    }
  });

  test("TURNPIKE_MAX_BODY_VALUES: 50,000 by default; a setting under 1,000 or not a number is refused", () => {
    expect(loadConfig({}).maxBodyValues).toBe(50_000);
    expect(loadConfig({ TURNPIKE_MAX_BODY_VALUES: "5000" }).maxBodyValues).toBe(5000);
    for (const bad of ["10", "lots", "1.5e3x"])
      expect(() => loadConfig({ TURNPIKE_MAX_BODY_VALUES: bad })).toThrow("TURNPIKE_MAX_BODY_VALUES must be");
  });
});

describe("a body over TURNPIKE_MAX_BODY_VALUES on every route that reads one", () => {
  let h: Harness;
  const logger = memoryLogger();
  beforeAll(async () => {
    h = await startHarness({ TURNPIKE_MAX_BODY_VALUES: "5000" }, { logger });
  });
  afterAll(() => h.close());

  const overChat = () => JSON.stringify({ model: "beta-5", max_tokens: 10, messages: turns(2001) });
  const overMessages = () => JSON.stringify({ model: "alpha-haiku-4-5", max_tokens: 10, messages: turns(1001, false) });

  const cases: {
    name: string;
    path: string;
    dialect: "messages" | "chat";
    body: () => string;
    headers?: Record<string, string>;
  }[] = [
    { name: "messages", path: "/v1/messages", dialect: "messages", body: overMessages },
    { name: "count_tokens", path: "/v1/messages/count_tokens", dialect: "messages", body: overMessages },
    { name: "chat", path: "/v1/chat/completions", dialect: "chat", body: overChat },
    {
      name: "responses",
      path: "/v1/responses",
      dialect: "chat",
      body: () => JSON.stringify({ model: "beta-5", input: turns(2001) }),
    },
    {
      name: "responses input_tokens",
      path: "/v1/responses/input_tokens",
      dialect: "chat",
      body: () => JSON.stringify({ model: "beta-5", input: turns(2001) }),
    },
    {
      name: "embeddings",
      path: "/v1/embeddings",
      dialect: "chat",
      body: () => JSON.stringify({ model: "beta-embedding-3-small", input: turns(6000).map((t) => t.content) }),
    },
    {
      name: "messages batches",
      path: "/v1/messages/batches",
      dialect: "messages",
      body: () =>
        JSON.stringify({
          requests: Array.from({ length: 600 }, (_, i) => ({
            custom_id: `r${i}`,
            params: { model: "alpha-haiku-4-5", max_tokens: 8, messages: [{ role: "user", content: "hi" }] },
          })),
        }),
    },
  ];

  for (const c of cases) {
    test(`${c.name}: 413 request_too_large in the ${c.dialect} envelope, with one log line saying why`, async () => {
      const res = await h.call(c.path, { method: "POST", dialect: c.dialect, body: c.body() });
      expect(res.status).toBe(413);
      const body = (await res.json()) as any;
      expect(errorMessageOf(c.dialect, body)).toMatch(
        /^Request body holds \d+ JSON values; this gateway takes at most 5000 in one body \(TURNPIKE_MAX_BODY_VALUES\)\.$/,
      );
      const id = res.headers.get("x-request-id") ?? res.headers.get("request-id");
      expect(id).toStartWith("req_");
      expect(logger.lines.filter((l) => l.includes(id!) && l.includes("JSON values"))).toHaveLength(1);
    });
  }

  test("generateContent: 413 in its envelope", async () => {
    const res = await fetch(`${h.url}/v1beta/models/gamma-3-flash:generateContent`, {
      method: "POST",
      headers: { "x-goog-api-key": h.key, "content-type": "application/json" },
      body: JSON.stringify({ contents: turns(2001).map((t) => ({ role: "user", parts: [{ text: t.content }] })) }),
    });
    expect(res.status).toBe(413);
    const body = (await res.json()) as any;
    expect(body.error.code).toBe(413);
    expect(body.error.message).toContain("TURNPIKE_MAX_BODY_VALUES");
  });

  test("admin bodies: 413 in the admin envelope", async () => {
    const res = await fetch(`${h.url}/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "x", pad: turns(2001) }),
    });
    expect(res.status).toBe(413);
    expect(await res.text()).toContain("TURNPIKE_MAX_BODY_VALUES");
  });

  test("MCP: a JSON-RPC 413", async () => {
    const res = await h.call("/mcp", {
      method: "POST",
      headers: { accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { pad: turns(2001) } }),
    });
    expect(res.status).toBe(413);
    const body = (await res.json()) as any;
    expect(body.error.message).toContain("TURNPIKE_MAX_BODY_VALUES");
  });

  test("a Responses WebSocket frame: an error frame with status 413", async () => {
    const ws = new WebSocket(`${h.url.replace("http", "ws")}/v1/responses`, {
      headers: { authorization: `Bearer ${h.key}` },
    } as unknown as string[]); // Bun's WebSocket takes headers; the DOM type does not
    const frame = await new Promise<any>((resolve, reject) => {
      ws.onopen = () => ws.send(JSON.stringify({ type: "response.create", model: "beta-5", input: turns(2001) }));
      ws.onmessage = (e) => resolve(JSON.parse(String(e.data)));
      ws.onerror = () => reject(new Error("websocket error"));
    });
    ws.close();
    expect(frame.type).toBe("error");
    expect(frame.status).toBe(413);
    expect(JSON.stringify(frame)).toContain("TURNPIKE_MAX_BODY_VALUES");
  });

  test("a body within the limit but long enough for the worker is served", async () => {
    const body = JSON.stringify({
      model: "beta-5",
      max_tokens: 10,
      messages: [...turns(1200), { role: "user", content: "end" }],
    });
    expect(body.length).toBeGreaterThan(2 * 5000);
    const res = await h.call("/v1/chat/completions", { method: "POST", dialect: "chat", body });
    expect(res.status).toBe(200);
  });
});
