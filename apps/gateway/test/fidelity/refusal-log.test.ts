/**
 * Every refusal explains itself in the log: each 4xx and 5xx the gateway answers writes one line
 * with the request id, the route, the model when known, the status, the error type and the
 * message the client was sent. Read from the gateway's own JSON log output.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bootGateway, type Gateway } from "../../src/boot";
import { loadConfig } from "../../src/config/config";
import { SqliteStore } from "../../src/storage/sqlite-store";
import { ADMIN_KEY } from "../harness";

const lines: Record<string, unknown>[] = [];
let gw: Gateway;
let url: string;
let key: string;

beforeAll(async () => {
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    TURNPIKE_ADMIN_KEY: ADMIN_KEY,
    TURNPIKE_DB: ":memory:",
    TURNPIKE_LOG_LEVEL: "warn",
    TURNPIKE_LOG_FORMAT: "json",
  });
  const destination = { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) };
  gw = await bootGateway(config, { store: new SqliteStore(":memory:"), firstKey: false, logDestination: destination });
  gw.app.listen({ port: 0, hostname: "127.0.0.1" });
  url = `http://127.0.0.1:${gw.app.server!.port}`;
  const created = await fetch(`${url}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "t" }),
  });
  key = ((await created.json()) as { key: string }).key;
});
afterAll(async () => {
  await gw.close();
});

/** The refusal lines written for one request id. */
const refusals = (requestId: string | null) => lines.filter((l) => l.msg === "refused" && l.request_id === requestId);

/** The one line of a refused call, checked against what the client got. */
async function oneLine(res: Response): Promise<Record<string, unknown>> {
  const body = (await res.json()) as { error: { type: string; message: string } };
  const found = refusals(res.headers.get("x-request-id"));
  expect(found).toHaveLength(1);
  const line = found[0]!;
  expect(line).toMatchObject({ status: res.status, error_type: body.error.type, message: body.error.message });
  return line;
}

describe("refusals in the log", () => {
  test("a 400 names the route, the model, the type and the very message", async () => {
    const res = await fetch(`${url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model: "alpha-haiku-4-5", messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(res.status).toBe(400);
    const line = await oneLine(res);
    expect(line).toMatchObject({
      level: "warn",
      route: "POST /v1/messages",
      model: "alpha-haiku-4-5",
      error_type: "invalid_request_error",
    });
    expect(String(line.message)).toStartWith("max_tokens: required integer");
  });

  test("a 401 before the body is read: no model", async () => {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer sk-wrong", "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(401);
    const line = await oneLine(res);
    expect(line).toMatchObject({ route: "POST /v1/chat/completions", error_type: "invalid_request_error" });
    expect(line.model).toBeUndefined();
  });

  test("a 404 for a model that is not in the catalog names the model", async () => {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "no-such-model", messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(res.status).toBe(404);
    expect(await oneLine(res)).toMatchObject({ model: "no-such-model", route: "POST /v1/chat/completions" });
  });

  test("a 404 for an unknown route", async () => {
    const res = await fetch(`${url}/v1/no/such/route`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(404);
    // A call that names no format is answered in the chat format's words (invalid_request_error).
    expect(await oneLine(res)).toMatchObject({
      route: "GET /v1/no/such/route",
      error_code: "unknown_route",
      message: "No route for GET /v1/no/such/route.",
    });
  });

  test("an admin route's 401", async () => {
    const admin = await fetch(`${url}/admin/keys`, { headers: { authorization: "Bearer nope" } });
    expect(admin.status).toBe(401);
    // Its message names the key's variable after "Bearer", which the log's secret scrubber masks.
    const found = refusals(admin.headers.get("x-request-id"));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ route: "GET /admin/keys", status: 401, error_type: "invalid_request_error" });
    expect(String(found[0]!.message)).toStartWith("Admin API: send `Authorization: Bearer");
  });
});
