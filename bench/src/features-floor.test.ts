import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSimulator } from "@turnpike/simulator";
import { startFeaturesFloor } from "../features-floor/src/main";
import { preflight } from "./preflight";
import { SCENARIOS, UPSTREAM_KEY, gatewayRequest } from "./scenarios";

// The features floor is a reference the benchmark measures Turnpike against: it must do the work
// it claims (bench/README.md), or the comparison says nothing.
const ADMIN = "sk-admin-features-floor-test-0123456789";
const dir = mkdtempSync(join(tmpdir(), "features-floor-"));
const dbPath = join(dir, "usage.db");
let sim: Awaited<ReturnType<typeof startSimulator>>;
let floor: ReturnType<typeof startFeaturesFloor>;
let url: string;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  floor = startFeaturesFloor({
    PORT: "0",
    TURNPIKE_DB: dbPath,
    TURNPIKE_ADMIN_KEY: ADMIN,
    ALPHA_BASE_URL: sim.url,
    ALPHA_API_KEY: UPSTREAM_KEY,
  });
  url = `http://127.0.0.1:${floor.port}`;
});

afterAll(async () => {
  await floor?.stop(true);
  await sim?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function newKey(limits: { rpm?: number; tpm?: number }): Promise<string> {
  const res = await fetch(`${url}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: JSON.stringify(limits),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { key: string }).key;
}

const scenario = (name: string) => SCENARIOS.find((s) => s.name === name)!;

/** The usage rows of a request, once its group commit has written them (waited for up to a second). */
async function usageRows(requestId: string): Promise<Record<string, unknown>[]> {
  for (let i = 0; ; i++) {
    const db = new Database(dbPath, { readonly: true });
    let rows: Record<string, unknown>[];
    try {
      rows = db.query("SELECT * FROM usage WHERE request_id = ?").all(requestId) as Record<string, unknown>[];
    } finally {
      db.close();
    }
    if (rows.length > 0 || i >= 100) return rows;
    await Bun.sleep(10);
  }
}

test("answers both messages scenarios from the simulator in the client's format", async () => {
  const key = await newKey({ rpm: 1000, tpm: 1_000_000 });
  for (const name of ["messages passthrough", "stream messages passthrough"]) {
    expect(await preflight(url, gatewayRequest(scenario(name), key), "messages")).toBeUndefined();
  }
});

test("a JSON reply carries the route and limit headers, and its usage row is written with its price", async () => {
  const key = await newKey({ rpm: 1000, tpm: 1_000_000 });
  const req = gatewayRequest(scenario("messages passthrough"), key);
  const res = await fetch(url + req.path, { method: "POST", headers: req.headers, body: req.body });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { usage: { input_tokens: number; output_tokens: number } };
  const id = res.headers.get("request-id")!;
  expect(id).toStartWith("req_");
  expect(res.headers.get("x-turnpike-model")).toBe("alpha-haiku-4-5");
  expect(res.headers.get("anthropic-ratelimit-requests-limit")).toBe("1000");
  expect(res.headers.get("anthropic-ratelimit-requests-remaining")).toBe("999");
  const rows = await usageRows(id);
  expect(rows).toHaveLength(1);
  expect(rows[0]!.input_tokens).toBe(body.usage.input_tokens);
  expect(rows[0]!.output_tokens).toBe(body.usage.output_tokens);
  expect(rows[0]!.cost_usd).toBeCloseTo(body.usage.input_tokens * 1e-6 + body.usage.output_tokens * 5e-6, 12);
});

test("a stream's usage is read from its chunks and written when it ends", async () => {
  const key = await newKey({ rpm: 1000, tpm: 1_000_000 });
  const req = gatewayRequest(scenario("stream messages passthrough"), key);
  const res = await fetch(url + req.path, { method: "POST", headers: req.headers, body: req.body });
  const text = await res.text();
  const output = Number(/"output_tokens":\s*(\d+)/g.exec(text.slice(text.lastIndexOf("message_delta")))?.[1]);
  expect(output).toBeGreaterThan(0);
  const id = res.headers.get("request-id")!;
  const rows = await usageRows(id);
  expect(rows).toHaveLength(1);
  expect(rows[0]!.stream).toBe(1);
  expect(rows[0]!.output_tokens).toBe(output);
});

test("refuses a wrong key, a body without a model and a key past its requests a minute", async () => {
  const key = await newKey({ rpm: 1, tpm: 1_000_000 });
  const req = gatewayRequest(scenario("messages passthrough"), key);
  const send = (headers: Record<string, string>, body: string) =>
    fetch(url + req.path, { method: "POST", headers, body }).then(async (r) => [r.status, await r.text()] as const);
  expect((await send({ ...req.headers, "x-api-key": "sk-wrong" }, req.body))[0]).toBe(401);
  const [status, text] = await send(req.headers, JSON.stringify({ max_tokens: 8, messages: [] }));
  expect(status).toBe(400);
  expect(text).toContain("model");
  expect((await send(req.headers, req.body))[0]).toBe(200);
  expect((await send(req.headers, req.body))[0]).toBe(429);
});
