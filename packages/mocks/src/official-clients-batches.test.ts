/**
 * Files and batches of both families through the official clients against the mock: a batch is
 * `in_progress` when created and ended at the first look after; its lines are answered by the
 * mock's own routes (scripts and failures apply); cancelled before that look, nothing runs.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI, { toFile } from "openai";
import { setupServer } from "msw/node";
import { createTurnpikeMock, mockVector } from "./index.js";

const BASE = "http://gw-batches.test";
const turnpike = createTurnpikeMock({ baseURL: BASE, apiKey: "sk-official" });
const server = setupServer(...turnpike.handlers);
// The chat-family client probes `fetch('data:,')` once before its first upload: not a gateway call.
beforeAll(() =>
  server.listen({
    onUnhandledRequest: (request, print) => {
      if (!request.url.startsWith("data:")) print.error();
    },
  }),
);
afterEach(() => turnpike.reset());
afterAll(() => server.close());

let anthropic: Anthropic;
let openai: OpenAI;
beforeAll(() => {
  anthropic = new Anthropic({ apiKey: "sk-official", baseURL: BASE, maxRetries: 0 });
  openai = new OpenAI({ apiKey: "sk-official", baseURL: `${BASE}/v1`, maxRetries: 0 });
});

const jsonl = (rows: unknown[]) => `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`;
const parse = (text: string) =>
  text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));

describe("official chat-family client: files and batches", () => {
  test("chat lines on several models, a scripted failure and a malformed line: output and error files", async () => {
    turnpike.reply({ text: "first answer" }, { endpoint: "chat" });
    turnpike.fail(429, { message: "slow down" }, { endpoint: "chat" });
    turnpike.reply({ text: "third answer" }, { endpoint: "chat" });
    const content = `${jsonl([
      {
        custom_id: "a",
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: "beta-5", messages: [{ role: "user", content: "one" }] },
      },
      {
        custom_id: "b",
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: "beta-5", messages: [{ role: "user", content: "two" }] },
      },
      {
        custom_id: "c",
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: "alpha-haiku-4-5", messages: [{ role: "user", content: "three" }] },
      },
    ])}not json\n`;
    const file = await openai.files.create({ file: await toFile(Buffer.from(content), "in.jsonl"), purpose: "batch" });
    expect(file).toMatchObject({
      object: "file",
      purpose: "batch",
      filename: "in.jsonl",
      bytes: Buffer.byteLength(content),
    });
    expect((await openai.files.retrieve(file.id)).id).toBe(file.id);
    expect(await (await openai.files.content(file.id)).text()).toBe(content);

    const created = await openai.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
      metadata: { team: "search" },
    });
    expect(created).toMatchObject({ object: "batch", status: "in_progress", request_counts: { total: 4 } });
    // No line has run yet: the mock runs them at the first look.
    expect(turnpike.bodies("chat")).toHaveLength(0);
    const done = await openai.batches.retrieve(created.id);
    expect(done).toMatchObject({ status: "completed", request_counts: { total: 4, completed: 2, failed: 2 } });
    expect(done.metadata).toEqual({ team: "search" });
    expect(turnpike.bodies("chat").map((b) => b.model)).toEqual(["beta-5", "beta-5", "alpha-haiku-4-5"]);

    const output = parse(await (await openai.files.content(done.output_file_id!)).text());
    expect(output.map((l) => l.custom_id)).toEqual(["a", "c"]);
    expect(output[0].response.status_code).toBe(200);
    expect(output[0].response.body.choices[0].message.content).toBe("first answer");
    expect(output[1].response.body.model).toBe("alpha-haiku-4-5");
    expect(output[1].response.body.choices[0].message.content).toBe("third answer");
    const errors = parse(await (await openai.files.content(done.error_file_id!)).text());
    expect(errors.map((l) => l.custom_id)).toEqual(["b", "line-4"]);
    expect(errors[0].response.status_code).toBe(429);
    expect(errors[0].response.body.error.message).toBe("slow down");
    expect(errors[1]).toMatchObject({ response: null, error: { code: "invalid_request" } });
  });

  test("embeddings lines: the mock's deterministic vectors", async () => {
    const file = await openai.files.create({
      file: await toFile(
        Buffer.from(
          jsonl([
            {
              custom_id: "e1",
              method: "POST",
              url: "/v1/embeddings",
              body: { model: "beta-embedding-3-small", input: "a cat", encoding_format: "float" },
            },
          ]),
        ),
        "e.jsonl",
      ),
      purpose: "batch",
    });
    const batch = await openai.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/embeddings",
      completion_window: "24h",
    });
    const done = await openai.batches.retrieve(batch.id);
    const [line] = parse(await (await openai.files.content(done.output_file_id!)).text());
    expect(line.response.body.data[0].embedding).toEqual(mockVector("a cat", 1536));
  });

  test("list (newest first, paged) and cancel before the first look: cancelled, no line run", async () => {
    const file = await openai.files.create({
      file: await toFile(
        Buffer.from(
          jsonl([
            {
              custom_id: "x",
              method: "POST",
              url: "/v1/chat/completions",
              body: { model: "beta-5", messages: [{ role: "user", content: "hi" }] },
            },
          ]),
        ),
        "x.jsonl",
      ),
      purpose: "batch",
    });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (
          await openai.batches.create({
            input_file_id: file.id,
            endpoint: "/v1/chat/completions",
            completion_window: "24h",
          })
        ).id,
      );
    const cancelling = await openai.batches.cancel(ids[2]!);
    expect(cancelling.status).toBe("cancelling");
    expect((await openai.batches.retrieve(ids[2]!)).status).toBe("cancelled");
    const seen: string[] = [];
    for await (const b of openai.batches.list({ limit: 2 })) seen.push(b.id);
    expect(seen).toEqual([...ids].reverse());
    // Two batches ran their one line; the cancelled one none.
    expect(turnpike.bodies("chat")).toHaveLength(2);
    const err = await openai.batches.retrieve("batch_nope").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
  });

  test("a wrong key is a 401 on files too", async () => {
    const other = new OpenAI({ apiKey: "sk-wrong", baseURL: `${BASE}/v1`, maxRetries: 0 });
    expect(await other.files.retrieve("file-x").catch((e: unknown) => e)).toBeInstanceOf(OpenAI.AuthenticationError);
  });
});

describe("official messages-format client: message batches", () => {
  const params = (content: string, model = "alpha-haiku-4-5") => ({
    model,
    max_tokens: 32,
    messages: [{ role: "user" as const, content }],
  });

  test("create, retrieve, results (succeeded and errored), list", async () => {
    turnpike.reply({ text: "one" }, { endpoint: "messages" });
    turnpike.fail(529, { message: "busy" }, { endpoint: "messages" });
    const created = await anthropic.messages.batches.create({
      requests: [
        { custom_id: "r1", params: params("first") },
        { custom_id: "r2", params: params("second", "alpha-sonnet-4-6") },
      ],
    });
    expect(created).toMatchObject({ type: "message_batch", processing_status: "in_progress" });
    expect(created.request_counts.processing).toBe(2);
    const ended = await anthropic.messages.batches.retrieve(created.id);
    expect(ended.processing_status).toBe("ended");
    expect(ended.request_counts).toEqual({ processing: 0, succeeded: 1, errored: 1, canceled: 0, expired: 0 });
    expect(ended.results_url).toBe(`${BASE}/v1/messages/batches/${created.id}/results`);
    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const r of await anthropic.messages.batches.results(created.id)) results.push(r);
    expect(results.map((r) => [r.custom_id, r.result.type])).toEqual([
      ["r1", "succeeded"],
      ["r2", "errored"],
    ]);
    const first = results[0]!.result;
    if (first.type !== "succeeded") throw new Error("r1 did not succeed");
    expect(first.message.content[0]).toMatchObject({ type: "text", text: "one" });
    expect(turnpike.bodies("messages").map((b) => b.model)).toEqual(["alpha-haiku-4-5", "alpha-sonnet-4-6"]);
    const listed: string[] = [];
    for await (const b of anthropic.messages.batches.list()) listed.push(b.id);
    expect(listed).toEqual([created.id]);
  });

  test("cancel before the first look: every request canceled, none sent", async () => {
    const created = await anthropic.messages.batches.create({ requests: [{ custom_id: "c1", params: params("x") }] });
    const canceling = await anthropic.messages.batches.cancel(created.id);
    expect(canceling.processing_status).toBe("canceling");
    const ended = await anthropic.messages.batches.retrieve(created.id);
    expect(ended.processing_status).toBe("ended");
    expect(ended.request_counts.canceled).toBe(1);
    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const r of await anthropic.messages.batches.results(created.id)) results.push(r);
    expect(results).toEqual([{ custom_id: "c1", result: { type: "canceled" } }]);
    expect(turnpike.bodies("messages")).toHaveLength(0);
  });
});
