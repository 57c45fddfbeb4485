/**
 * The description document: valid OpenAPI 3.1 by a real validator, every route of the app in it,
 * and real replies of a running gateway — JSON, stream events, errors, admin — conforming to the
 * document's own schemas.
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_KEY, CATALOG_IDS, LISTED_IDS, readSSE, startHarness, type Harness } from "../harness";
import { Contract } from "./contract";

let h: Harness;
let doc: Record<string, any>; // the parsed document, checked by the validator below
let contract: Contract;

beforeAll(async () => {
  h = await startHarness();
  const res = await fetch(`${h.url}/openapi.json`);
  expect(res.headers.get("content-type")).toContain("application/json");
  doc = await res.json();
  contract = new Contract(doc);
});
afterAll(() => h.close());

const admin = (path: string, init: RequestInit = {}) =>
  fetch(h.url + path, {
    ...init,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json", ...init.headers },
  });

/** A reply checked against the document: its status's schema for its media type. */
async function conforms(path: string, method: string, res: Response): Promise<unknown> {
  const body = await res.json();
  expect({
    path,
    status: res.status,
    errors: contract.check(path, method, res.status, "application/json", body),
  }).toEqual({ path, status: res.status, errors: [] });
  return body;
}

/** Every `data:` frame of a stream checked against the document's event schema. */
async function streamConforms(path: string, res: Response): Promise<number> {
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  const frames = (await readSSE(res)).filter((f) => f.data !== "[DONE]");
  for (const f of frames)
    expect(contract.check(path, "post", 200, "text/event-stream", JSON.parse(f.data))).toEqual([]);
  return frames.length;
}

describe("GET /openapi.json", () => {
  test("is valid OpenAPI 3.1 (checked by an OpenAPI validator), version 1.0.0", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    expect(doc.info.version).toBe("1.0.0");
  });

  test("describes every route the app serves", () => {
    const served = h.gw.app.routes
      .filter((r) => r.method !== "HEAD")
      // Parameters compare by place, not name; a trailing-slash alias is its route's own.
      .map(
        (r) =>
          `${r.method.toLowerCase()} ${r.path
            .replace(/:(\w+)/g, "{}")
            .replace(/\/\*$/, "/{}")
            .replace(/(.)\/$/, "$1")}`,
      );
    const described = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item as object)
        .filter((k) => k !== "parameters")
        .map((m) => `${m} ${path.replace(/\{\w+\}/g, "{}")}`),
    );
    expect(served.length).toBeGreaterThan(20);
    expect(served.filter((r) => !described.includes(r))).toEqual([]);
    expect(described.filter((r) => !served.includes(r))).toEqual([]);
  });

  test("both key schemes for inference, the admin key for admin routes; model values from the catalog", () => {
    expect(doc.components.securitySchemes.apiKey).toEqual(
      expect.objectContaining({ type: "apiKey", in: "header", name: "x-api-key" }),
    );
    expect(doc.components.securitySchemes.bearer).toEqual(expect.objectContaining({ type: "http", scheme: "bearer" }));
    expect(doc.paths["/v1/messages"].post.security).toEqual([{ apiKey: [] }, { bearer: [] }]);
    expect(doc.paths["/admin/keys"].post.security).toEqual([{ admin: [] }]);
    const ids = doc.components.schemas.ModelId.anyOf.map((s: { const: string }) => s.const);
    expect(ids.sort()).toEqual([...h.gw.deps.catalog.all().map((e) => e.id)].sort());
    expect(ids).toEqual(expect.arrayContaining([...CATALOG_IDS]));
    // A model the catalog lacks is refused by the document's request schema.
    expect(contract.checkComponent("ModelId", "no-such-model")).not.toEqual([]);
    expect(contract.checkComponent("ModelId", "beta-5.5")).toEqual([]);
  });

  test("request schemas are the validators' own: what the gateway refuses, the document refuses", async () => {
    const body = { model: "beta-5.5", messages: [{ role: "user", content: "hi" }], temperature: 3 };
    const res = await h.call("/v1/chat/completions", { method: "POST", body: JSON.stringify(body) });
    expect(res.status).toBe(400);
    expect(contract.checkComponent("ChatRequest", body)).not.toEqual([]);
    expect(contract.checkComponent("ChatRequest", { ...body, temperature: 1 })).toEqual([]);
  });
});

describe("real replies conform to the document", () => {
  test("chat completions: JSON, stream chunks, an error", async () => {
    const body = { model: "beta-5.5", messages: [{ role: "user", content: "hi" }] };
    await conforms(
      "/v1/chat/completions",
      "post",
      await h.call("/v1/chat/completions", { method: "POST", body: JSON.stringify(body) }),
    );
    const chunks = await streamConforms(
      "/v1/chat/completions",
      await h.call("/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
      }),
    );
    expect(chunks).toBeGreaterThan(2);
    const bad = await h.call("/v1/chat/completions", {
      method: "POST",
      headers: { authorization: "Bearer sk-tp-wrong" },
      body: JSON.stringify(body),
    });
    expect(bad.status).toBe(401);
    await conforms("/v1/chat/completions", "post", bad);
  });

  test("messages: JSON from a translated vendor, stream events, count_tokens, an upstream error", async () => {
    const body = { model: "beta-5.5", max_tokens: 64, messages: [{ role: "user", content: "hi" }] };
    await conforms(
      "/v1/messages",
      "post",
      await h.call("/v1/messages", { method: "POST", dialect: "messages", body: JSON.stringify(body) }),
    );
    const events = await streamConforms(
      "/v1/messages",
      await h.call("/v1/messages", {
        method: "POST",
        dialect: "messages",
        body: JSON.stringify({ ...body, model: "alpha-haiku-4-5", stream: true }),
      }),
    );
    expect(events).toBeGreaterThan(4);
    const counted = await conforms(
      "/v1/messages/count_tokens",
      "post",
      await h.call("/v1/messages/count_tokens", {
        method: "POST",
        dialect: "messages",
        body: JSON.stringify({ model: "alpha-haiku-4-5", messages: body.messages }),
      }),
    );
    expect((counted as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
    const failed = await h.call("/v1/messages", {
      method: "POST",
      dialect: "messages",
      body: JSON.stringify({
        ...body,
        model: "alpha-haiku-4-5",
        messages: [{ role: "user", content: "fail [sim error=529]" }],
      }),
    });
    expect(failed.status).toBe(529);
    await conforms("/v1/messages", "post", failed);
  });

  test("responses: JSON, stream events, input_tokens, the stored response routes", async () => {
    const body = { model: "alpha-haiku-4-5", input: "hi", store: true };
    const created = (await conforms(
      "/v1/responses",
      "post",
      await h.call("/v1/responses", { method: "POST", body: JSON.stringify(body) }),
    )) as { id: string };
    const events = await streamConforms(
      "/v1/responses",
      await h.call("/v1/responses", { method: "POST", body: JSON.stringify({ ...body, stream: true }) }),
    );
    expect(events).toBeGreaterThan(4);
    await conforms(
      "/v1/responses/input_tokens",
      "post",
      await h.call("/v1/responses/input_tokens", {
        method: "POST",
        body: JSON.stringify({ model: "beta-5.5", input: "hi" }),
      }),
    );
    await conforms("/v1/responses/{id}", "get", await h.call(`/v1/responses/${created.id}`));
    await conforms("/v1/responses/{id}/input_items", "get", await h.call(`/v1/responses/${created.id}/input_items`));
    await conforms("/v1/responses/{id}", "delete", await h.call(`/v1/responses/${created.id}`, { method: "DELETE" }));
    const gone = await h.call(`/v1/responses/${created.id}`);
    expect(gone.status).toBe(404);
    await conforms("/v1/responses/{id}", "get", gone);
  });

  test("the check can fail: a chat reply is not a messages reply, nor a chat chunk", async () => {
    const res = await h.call("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({ model: "beta-5.5", messages: [{ role: "user", content: "hi" }] }),
    });
    const reply = await res.json();
    expect(contract.check("/v1/chat/completions", "post", 200, "application/json", reply)).toEqual([]);
    expect(contract.check("/v1/messages", "post", 200, "application/json", reply).length).toBeGreaterThan(0);
    expect(contract.check("/v1/chat/completions", "post", 200, "text/event-stream", reply).length).toBeGreaterThan(0);
  });

  test("models, health, ready", async () => {
    const list = (await conforms("/v1/models", "get", await h.call("/v1/models"))) as { data: unknown[] };
    expect(list.data.length).toBe(LISTED_IDS.length);
    await conforms("/v1/models/{id}", "get", await h.call("/v1/models/beta-5.5"));
    await conforms("/v1/models/{id}", "get", await h.call("/v1/models/no-such-model"));
    await conforms("/health", "get", await fetch(`${h.url}/health`));
    await conforms("/ready", "get", await fetch(`${h.url}/ready`));
  });

  test("admin: create, list, get, change, rotate, revoke, usage records and totals, a refused admin key", async () => {
    const created = (await conforms(
      "/admin/keys",
      "post",
      await admin("/admin/keys", {
        method: "POST",
        body: JSON.stringify({ name: "doc", rpm: 10, models: ["beta-*"], budget_usd: 5 }),
      }),
    )) as { id: string };
    await conforms("/admin/keys", "get", await admin("/admin/keys"));
    await conforms("/admin/keys/{id}", "get", await admin(`/admin/keys/${created.id}`));
    await conforms(
      "/admin/keys/{id}",
      "patch",
      await admin(`/admin/keys/${created.id}`, {
        method: "PATCH",
        body: JSON.stringify({ tpm: 1000, model_limits: { "beta-5.5": { rpm: 2 } } }),
      }),
    );
    await conforms(
      "/admin/keys/{id}/rotate",
      "post",
      await admin(`/admin/keys/${created.id}/rotate`, { method: "POST", body: JSON.stringify({ grace_seconds: 60 }) }),
    );
    await conforms("/admin/keys/{id}", "delete", await admin(`/admin/keys/${created.id}`, { method: "DELETE" }));
    const page = (await conforms("/admin/usage", "get", await admin("/admin/usage?limit=5"))) as { data: unknown[] };
    expect(page.data.length).toBe(5);
    await conforms("/admin/usage", "get", await admin("/admin/usage?group_by=model,day"));
    // The dashboard's feeds.
    const daily = (await conforms("/admin/usage/daily", "get", await admin("/admin/usage/daily?by=key"))) as {
      days: string[];
      series: unknown[];
    };
    expect(daily.days).toHaveLength(14);
    expect(daily.series.length).toBeGreaterThan(0);
    const log = (await conforms("/admin/requests", "get", await admin("/admin/requests?limit=3"))) as {
      data: unknown[];
    };
    expect(log.data).toHaveLength(3);
    const models = (await conforms("/admin/models", "get", await admin("/admin/models"))) as { data: unknown[] };
    const deployments = (await conforms("/admin/deployments", "get", await admin("/admin/deployments"))) as {
      data: unknown[];
    };
    expect(deployments.data.length).toBe(models.data.length);
    expect(models.data.length).toBeGreaterThanOrEqual(10);
    const refused = await fetch(`${h.url}/admin/keys`, { headers: { authorization: "Bearer sk-admin-wrong" } });
    expect(refused.status).toBe(401);
    await conforms("/admin/keys", "get", refused);
  });

  test("GET /docs is a page that renders the document with the renderer the gateway serves itself", async () => {
    const res = await fetch(`${h.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    expect(html).toContain('url: "openapi.json"');
    // No script, style or font from another host: the page must work without internet.
    expect(html.match(/(src|href)="https?:/g)).toBeNull();
    const script = await fetch(`${h.url}/docs/api-reference.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toContain("javascript");
    expect((await script.text()).length).toBeGreaterThan(100_000);
  });
});
