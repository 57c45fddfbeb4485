import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI, { toFile } from "openai";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";
import { admin, type Instance, removeDir, startInstance } from "../scaleout/cluster";
import { freshDatabase, freshPrefix, postgresUp, redisUp, TEST_REDIS_URL } from "../scaleout/servers";

// Issue 41, item 6: inputs that once answered 500 answer a clear 4xx in the caller's format — a
// batch line nested 60,000 levels (it parsed, then overflowed the stack when the line was
// written back as JSON), and a user's email changed to another user's (the store's unique
// constraint; creating such a user already answered 409).

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

/** A chat batch line whose body holds `depth` nested arrays (built without recursion). */
const deepLine = (depth: number) =>
  `{"custom_id":"deep","method":"POST","url":"/v1/chat/completions","body":{"model":"beta-5","messages":[{"role":"user","content":"hi"}],"metadata":${"[".repeat(depth)}${"]".repeat(depth)}}}`;
const fineLine = JSON.stringify({
  custom_id: "fine",
  method: "POST",
  url: "/v1/chat/completions",
  body: { model: "beta-5", messages: [{ role: "user", content: "hi" }] },
});

describe("a batch line nested 60,000 levels", () => {
  test("POST /v1/batches: 400 in the chat format naming the line and the limit; a shallow file still runs", async () => {
    const openai = new OpenAI({ apiKey: h.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
    const file = await openai.files.create({
      file: await toFile(Buffer.from(`${fineLine}\n${deepLine(60_000)}\n`), "deep.jsonl"),
      purpose: "batch",
    });
    const res = await h.call("/v1/batches", {
      method: "POST",
      dialect: "chat",
      body: JSON.stringify({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { type: string; message: string; param: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toBe("Line 2 of the input file nests deeper than the limit of 128 levels of JSON.");
    expect(body.error.param).toBe("input_file_id");

    const shallow = await openai.files.create({
      file: await toFile(Buffer.from(`${fineLine}\n`), "fine.jsonl"),
      purpose: "batch",
    });
    const made = await openai.batches.create({
      input_file_id: shallow.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    expect(made.request_counts?.total).toBe(1);
  });

  test("a messages batch nested as deep: 400 in the messages format, from the body reader", async () => {
    const params = `{"model":"beta-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"metadata":${"[".repeat(60_000)}${"]".repeat(60_000)}}`;
    const res = await h.call("/v1/messages/batches", {
      method: "POST",
      dialect: "messages",
      body: `{"requests":[{"custom_id":"deep","params":${params}}]}`,
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain("JSON nests deeper than the limit of 128 levels");
    // The Anthropic client reads it as the error it is.
    const anthropic = new Anthropic({ apiKey: h.key, baseURL: h.url, maxRetries: 0 });
    const ok = await anthropic.messages.batches.create({
      requests: [
        { custom_id: "fine", params: { model: "beta-5", max_tokens: 5, messages: [{ role: "user", content: "hi" }] } },
      ],
    });
    expect(ok.request_counts.processing).toBe(1);
  });
});

describe("the other JSON entry points, 60,000 levels deep", () => {
  const deep = `${"[".repeat(60_000)}${"]".repeat(60_000)}`;
  const cases: [string, string, Record<string, string>][] = [
    ["/v1/embeddings", `{"model":"beta-embedding-3-small","input":"x","user":${deep}}`, {}],
    ["/v1/responses", `{"model":"beta-5","input":"x","metadata":${deep}}`, {}],
    [
      "/v1/messages/count_tokens",
      `{"model":"beta-5","messages":[{"role":"user","content":"x"}],"metadata":${deep}}`,
      {},
    ],
    ["/v1beta/models/beta-5:generateContent", `{"contents":[{"parts":[{"text":"x"}]}],"labels":${deep}}`, {}],
    ["/admin/keys", `{"name":"deep","models":${deep}}`, { authorization: `Bearer ${ADMIN_KEY}` }],
    ["/admin/teams", `{"name":"deep","models":${deep}}`, { authorization: `Bearer ${ADMIN_KEY}` }],
  ];
  for (const [path, body, headers] of cases)
    test(`POST ${path}: 400 naming the nesting limit`, async () => {
      const res = await h.call(path, {
        method: "POST",
        body,
        headers: { "content-type": "application/json", ...headers },
      });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("JSON nests deeper than the limit of 128 levels");
    });
});

/** Two users, then the second's email changed to the first's: 409 naming the email; the second unchanged. */
async function emailTaken(base: string, call: typeof admin): Promise<void> {
  const tag = crypto.randomUUID().slice(0, 8);
  const first = await call(base, "POST", "/admin/users", { email: `first-${tag}@example.com` });
  expect(first.status).toBe(201);
  const second = (await (await call(base, "POST", "/admin/users", { email: `second-${tag}@example.com` })).json()) as {
    id: string;
  };
  const again = await call(base, "POST", "/admin/users", { email: `first-${tag}@example.com` });
  expect(again.status).toBe(409);
  const patched = await call(base, "PATCH", `/admin/users/${second.id}`, { email: `first-${tag}@example.com` });
  expect(patched.status).toBe(409);
  expect(((await patched.json()) as { error: { code: string; message: string } }).error).toMatchObject({
    code: "conflict",
    message: `A user with email "first-${tag}@example.com" exists.`,
  });
  const kept = (await (await call(base, "GET", `/admin/users/${second.id}`)).json()) as { email: string };
  expect(kept.email).toBe(`second-${tag}@example.com`);
  // A user may keep its own email in a change, and take one nobody has.
  expect((await call(base, "PATCH", `/admin/users/${second.id}`, { email: `second-${tag}@example.com` })).status).toBe(
    200,
  );
  expect((await call(base, "PATCH", `/admin/users/${second.id}`, { email: `third-${tag}@example.com` })).status).toBe(
    200,
  );
}

describe("PATCH /admin/users/{id} to another user's email", () => {
  test("SQLite: 409 like POST, the user unchanged", async () => {
    await emailTaken(h.url, (base, method, path, body) =>
      fetch(base + path, {
        method,
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
  });

  test.skipIf(!postgresUp || !redisUp)(
    "PostgreSQL and Redis: 409 like POST, the user unchanged",
    async () => {
      const db = await freshDatabase();
      const prefix = freshPrefix();
      let gw: Instance | undefined;
      try {
        gw = await startInstance({
          TURNPIKE_DATABASE_URL: db.url,
          TURNPIKE_REDIS_URL: TEST_REDIS_URL,
          TURNPIKE_REDIS_PREFIX: prefix.prefix,
        });
        await emailTaken(gw.url, admin);
      } finally {
        await gw?.stop();
        if (gw) removeDir(gw.journalDir);
        await db.drop();
        await prefix.drop();
      }
    },
    120_000,
  );
});
