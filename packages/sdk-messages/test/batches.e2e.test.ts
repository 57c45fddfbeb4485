/**
 * End to end: the SDKs' files, batches and message batches against the real gateway (spawned,
 * simulator upstreams), each object checked against the schema the SDKs are typed from.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import ChatClient from "@turnpike/chat";
import {
  Batch,
  BatchResultLine,
  explainErrors,
  FileObject,
  MessageBatch,
  MessageBatchIndividualResponse,
} from "@turnpike/schema";
import MessagesClient from "../src/index.js";
import { spawnGateway, type Gateway } from "@turnpike/gateway/spawn";

let gateway: Gateway;
let key: string;
beforeAll(async () => {
  gateway = await spawnGateway();
  key = await gateway.createKey({ name: "sdk-batches-e2e" });
}, 40_000);
afterAll(async () => {
  await gateway?.stop();
});

const messages = () => new MessagesClient({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
const chat = () => new ChatClient({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });

/** Polls until `done` holds (at most 30 s: the gateway's worker runs the lines in the background). */
async function until<T>(get: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const v = await get();
    if (done(v)) return v;
    await Bun.sleep(50);
  }
  throw new Error("the batch did not end within 30 s");
}

const lines = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join("\n");

describe("@turnpike/chat: files and batches", () => {
  test("chat lines on two vendors and a malformed line, to the output and error files", async () => {
    const input = await chat().files.create({
      file: `${lines([
        {
          custom_id: "alpha",
          method: "POST",
          url: "/v1/chat/completions",
          body: { model: "alpha-haiku-4-5", messages: [{ role: "user", content: 'Hi [sim text="from alpha"]' }] },
        },
        {
          custom_id: "beta",
          method: "POST",
          url: "/v1/chat/completions",
          body: { model: "beta-5", messages: [{ role: "user", content: 'Hi [sim text="from beta"]' }] },
        },
      ])}\n{not json`,
      purpose: "batch",
    });
    expect(explainErrors(FileObject, input)).toEqual([]);
    const created = await chat().batches.create({
      input_file_id: input.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
      metadata: { run: "e2e" },
    });
    expect(explainErrors(Batch, created)).toEqual([]);
    const done = await until(
      () => chat().batches.retrieve(created.id),
      (b) => b.status === "completed",
    );
    expect(explainErrors(Batch, done)).toEqual([]);
    expect(done.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
    const out = (await chat().files.content(done.output_file_id!))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as BatchResultLine);
    for (const l of out) expect(explainErrors(BatchResultLine, l)).toEqual([]);
    const byId = Object.fromEntries(out.map((l) => [l.custom_id, l.response?.body as any]));
    expect(byId.alpha.choices[0].message.content).toBe("from alpha");
    expect(byId.beta.choices[0].message.content).toBe("from beta");
    const errors = (await chat().files.content(done.error_file_id!)).trim().split("\n");
    expect(errors).toHaveLength(1);
    const listed: string[] = [];
    for await (const b of chat().batches.list({ limit: 1 })) listed.push(b.id);
    expect(listed).toContain(created.id);
  });

  test("embeddings lines", async () => {
    const input = await chat().files.create({
      file: lines([
        {
          custom_id: "e",
          method: "POST",
          url: "/v1/embeddings",
          body: { model: "beta-embedding-3-small", input: "batched text", encoding_format: "float" },
        },
      ]),
      purpose: "batch",
    });
    const b = await chat().batches.create({
      input_file_id: input.id,
      endpoint: "/v1/embeddings",
      completion_window: "24h",
    });
    const done = await until(
      () => chat().batches.retrieve(b.id),
      (x) => x.status === "completed",
    );
    const line = JSON.parse((await chat().files.content(done.output_file_id!)).trim()) as BatchResultLine;
    const direct = await chat().embeddings.create({
      model: "beta-embedding-3-small",
      input: "batched text",
      encoding_format: "float",
    });
    expect((line.response!.body as any).data[0].embedding).toEqual(direct.data[0]!.embedding);
  });
});

describe("@turnpike/messages: messages.batches", () => {
  test("create → ended → results on two vendors; list", async () => {
    const created = await messages().messages.batches.create({
      requests: [
        {
          custom_id: "one",
          params: {
            model: "alpha-haiku-4-5",
            max_tokens: 32,
            messages: [{ role: "user", content: 'x [sim text="one"]' }],
          },
        },
        {
          custom_id: "two",
          params: { model: "gamma-3-pro", max_tokens: 32, messages: [{ role: "user", content: 'x [sim text="two"]' }] },
        },
      ],
    });
    expect(explainErrors(MessageBatch, created)).toEqual([]);
    const ended = await until(
      () => messages().messages.batches.retrieve(created.id),
      (b) => b.processing_status === "ended",
    );
    expect(explainErrors(MessageBatch, ended)).toEqual([]);
    expect(ended.request_counts.succeeded).toBe(2);
    const results: MessageBatchIndividualResponse[] = [];
    for await (const r of await messages().messages.batches.results(created.id)) results.push(r);
    for (const r of results) expect(explainErrors(MessageBatchIndividualResponse, r)).toEqual([]);
    expect(results.map((r) => r.custom_id)).toEqual(["one", "two"]);
    expect(
      results.map((r) => (r.result.type === "succeeded" ? (r.result.message as any).content[0].text : r.result.type)),
    ).toEqual(["one", "two"]);
    const listed: string[] = [];
    for await (const b of messages().messages.batches.list()) listed.push(b.id);
    expect(listed).toContain(created.id);
  });
});
