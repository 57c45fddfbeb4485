/**
 * Batches through the official clients: the chat family's files + batches (chat completions,
 * Responses and embeddings lines, mixed models, a malformed line, cancellation) and the
 * messages format's message batches (any catalog model per request, results, cancellation),
 * with every line in the ledger at its price. Lines for the vendors whose protocol has a batch
 * API go to it (the simulator serves those APIs); the others run through Turnpike's queue.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI, { toFile } from "openai";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";
import { until } from "./until";

let h: Harness;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  // gamma's batch mode switched off: its lines show Turnpike's own queue beside the upstream batch APIs.
  h = await startHarness({ TURNPIKE_BATCH_UPSTREAM_OFF: "gamma" });
  openai = new OpenAI({ apiKey: h.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: h.key, baseURL: h.url, maxRetries: 0 });
});
afterAll(() => h.close());

/** Polls until `done` says so (bounded). */

async function usage(keyId: string): Promise<any[]> {
  const res = await fetch(`${h.url}/admin/usage?key_id=${keyId}&limit=10000`, {
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  return ((await res.json()) as any).data;
}

/** The upstream calls the simulator received since `from`, as "METHOD path". */
const upstreamCalls = (from = 0) =>
  h.gw.simulator!.requests.slice(from).map((r) => `${r.method} ${r.path.split("?")[0]}`);

/** Sets the simulator's batch knobs (how long its batches run; whether new ones fail). */
const simBatches = (knobs: { ms?: number; fail?: boolean } | null) =>
  fetch(`${h.gw.simulator!.url}/_sim/batches`, {
    method: knobs ? "POST" : "DELETE",
    ...(knobs ? { body: JSON.stringify(knobs) } : {}),
  });

const jsonl = (rows: unknown[]) => rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n");

describe("chat family: files + batches", () => {
  test("chat lines on three vendors and a malformed line run to completion; output and error files", async () => {
    const lines = [
      {
        custom_id: "a",
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: "beta-5", messages: [{ role: "user", content: 'Say one. [sim text="one"]' }] },
      },
      {
        custom_id: "b",
        method: "POST",
        url: "/v1/chat/completions",
        body: {
          model: "alpha-haiku-4-5",
          max_tokens: 20,
          messages: [{ role: "user", content: 'Say two. [sim text="two"]' }],
        },
      },
      "{ not json",
      {
        custom_id: "c",
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: "gamma-3-flash", messages: [{ role: "user", content: 'Say three. [sim text="three"]' }] },
      },
      {
        custom_id: "d",
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: "no-such-model", messages: [{ role: "user", content: "hi" }] },
      },
    ];
    const file = await openai.files.create({
      file: await toFile(Buffer.from(jsonl(lines)), "input.jsonl"),
      purpose: "batch",
    });
    expect(file.purpose).toBe("batch");
    const seen = h.gw.simulator!.requests.length;
    const batch = await openai.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
      metadata: { job: "nightly" },
    });
    expect(batch.status).toBe("in_progress");
    expect(batch.request_counts?.total).toBe(5);
    const done = await until(
      () => openai.batches.retrieve(batch.id),
      (b) => b.status === "completed",
    );
    expect(done.status).toBe("completed");
    expect(done.request_counts).toEqual({ total: 5, completed: 3, failed: 2 });
    expect(done.metadata).toEqual({ job: "nightly" });
    const out = (await (await openai.files.content(done.output_file_id!)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(out.map((o) => o.custom_id)).toEqual(["a", "b", "c"]);
    expect(out.map((o) => o.response.body.choices[0].message.content)).toEqual(["one", "two", "three"]);
    expect(out.map((o) => o.response.body.model)).toEqual(["beta-5", "alpha-haiku-4-5", "gamma-3-flash"]);
    const errs = (await (await openai.files.content(done.error_file_id!)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(errs.map((e) => e.custom_id)).toEqual(["line-3", "d"]);
    expect(errs[0].error.message).toContain("not valid JSON");
    expect(errs[1].response.status_code).toBe(404);
    // beta-5 went to the chat family's batch API, alpha-haiku-4-5 to the messages one (translated
    // from the chat line), gamma-3-flash through Turnpike's queue (its batch mode switched off here).
    const calls = upstreamCalls(seen);
    expect(calls).toContain("POST /v1/files");
    expect(calls).toContain("POST /v1/batches");
    expect(calls).toContain("POST /v1/messages/batches");
    expect(calls.filter((c) => c.startsWith("POST /v1beta/models/gamma-3-flash"))).toHaveLength(1);
    expect(calls).not.toContain("POST /v1/chat/completions");
    const sentToMessages = h.gw.simulator!.requests.slice(seen).find((r) => r.path === "/v1/messages/batches")!
      .body as any;
    expect(sentToMessages.requests).toHaveLength(1);
    expect(sentToMessages.requests[0].params.model).toBe("alpha-haiku-4-5");
    expect(sentToMessages.requests[0].params.messages[0].content[0].text).toContain("Say two.");
    // Every line that ran is in the ledger under its own request id.
    const rows = await usage(h.keyId);
    for (const o of out) {
      const row = rows.find((r) => r.request_id === o.response.request_id);
      expect(row).toMatchObject({ model: o.response.body.model, endpoint: "chat", status: 200 });
      expect(row.cost_usd).toBeGreaterThan(0);
    }
    const listed = await openai.batches.list({ limit: 10 });
    expect(listed.data.some((b) => b.id === batch.id)).toBe(true);
  });

  test("Responses and embeddings lines", async () => {
    const resp = await openai.files.create({
      file: await toFile(
        Buffer.from(
          jsonl([
            {
              custom_id: "r1",
              method: "POST",
              url: "/v1/responses",
              body: { model: "delta-m3", input: 'Say hi. [sim text="hi"]' },
            },
          ]),
        ),
        "r.jsonl",
      ),
      purpose: "batch",
    });
    const emb = await openai.files.create({
      file: await toFile(
        Buffer.from(
          jsonl([
            {
              custom_id: "e1",
              method: "POST",
              url: "/v1/embeddings",
              body: { model: "beta-embedding-3-small", input: "vector me", encoding_format: "float" },
            },
          ]),
        ),
        "e.jsonl",
      ),
      purpose: "batch",
    });
    const rb = await openai.batches.create({
      input_file_id: resp.id,
      endpoint: "/v1/responses",
      completion_window: "24h",
    });
    const eb = await openai.batches.create({
      input_file_id: emb.id,
      endpoint: "/v1/embeddings",
      completion_window: "24h",
    });
    const r = await until(
      () => openai.batches.retrieve(rb.id),
      (b) => b.status === "completed",
    );
    const e = await until(
      () => openai.batches.retrieve(eb.id),
      (b) => b.status === "completed",
    );
    const rOut = JSON.parse((await (await openai.files.content(r.output_file_id!)).text()).trim());
    expect(rOut.response.body.output_text ?? rOut.response.body.output[0].content[0].text).toBe("hi");
    const eOut = JSON.parse((await (await openai.files.content(e.output_file_id!)).text()).trim());
    const direct = await openai.embeddings.create({
      model: "beta-embedding-3-small",
      input: "vector me",
      encoding_format: "float",
    });
    expect(eOut.response.body.data[0].embedding).toEqual(direct.data[0]!.embedding);
    const row = (await usage(h.keyId)).find((x) => x.request_id === eOut.response.request_id);
    expect(row).toMatchObject({ endpoint: "embeddings", model: "beta-embedding-3-small" });
  });

  test("input limits: a wrong endpoint, an unknown file, a bad purpose", async () => {
    const bad = await openai.batches
      .create({ input_file_id: "file-nope", endpoint: "/v1/chat/completions", completion_window: "24h" })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.NotFoundError);
    const wrong = await openai.batches
      .create({
        input_file_id: "file-nope",
        endpoint: "/v1/completions" as "/v1/chat/completions",
        completion_window: "24h",
      })
      .catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(OpenAI.BadRequestError);
    const purpose = await openai.files
      .create({ file: await toFile(Buffer.from("{}"), "x.jsonl"), purpose: "assistants" })
      .catch((e: unknown) => e);
    expect(purpose).toBeInstanceOf(OpenAI.BadRequestError);
  });
});

describe("messages format: message batches", () => {
  test("requests on every vendor to results; a malformed request errored; ledger rows", async () => {
    const params = (model: string, text: string) => ({
      model,
      max_tokens: 20,
      messages: [{ role: "user" as const, content: `Say it. [sim text="${text}"]` }],
    });
    const created = await anthropic.messages.batches.create({
      requests: [
        { custom_id: "alpha", params: params("alpha-sonnet-4-6", "a") },
        { custom_id: "beta", params: params("beta-5.5", "b") },
        { custom_id: "gamma", params: params("gamma-3-pro", "g") },
        { custom_id: "bad", params: { max_tokens: 5 } as unknown as Anthropic.MessageCreateParamsNonStreaming },
      ],
    });
    expect(created.processing_status).toBe("in_progress");
    const ended = await until(
      () => anthropic.messages.batches.retrieve(created.id),
      (b) => b.processing_status === "ended",
    );
    expect(ended.request_counts).toEqual({ processing: 0, succeeded: 3, errored: 1, canceled: 0, expired: 0 });
    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const r of await anthropic.messages.batches.results(created.id)) results.push(r);
    expect(results.map((r) => r.custom_id)).toEqual(["alpha", "beta", "gamma", "bad"]);
    const texts = results
      .slice(0, 3)
      .map((r) =>
        r.result.type === "succeeded" && r.result.message.content[0]?.type === "text"
          ? r.result.message.content[0].text
          : "",
      );
    expect(texts).toEqual(["a", "b", "g"]);
    expect(results[3]!.result.type).toBe("errored");
    const list = await anthropic.messages.batches.list({ limit: 5 });
    expect(list.data.some((b) => b.id === created.id)).toBe(true);
  });
});

describe("cancellation", () => {
  test("a batch cancelled while its upstream batch runs: the upstream batch is cancelled, no line billed", async () => {
    await simBatches({ ms: 600_000 });
    try {
      const line = (id: string) => ({
        custom_id: id,
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: "beta-5", messages: [{ role: "user", content: `line ${id}` }] },
      });
      const file = await openai.files.create({
        file: await toFile(Buffer.from(jsonl([line("s1"), line("s2"), line("s3")])), "up.jsonl"),
        purpose: "batch",
      });
      const seen = h.gw.simulator!.requests.length;
      const batch = await openai.batches.create({
        input_file_id: file.id,
        endpoint: "/v1/chat/completions",
        completion_window: "24h",
      });
      // The upstream has the batch before it is cancelled here.
      await until(
        async () => upstreamCalls(seen),
        (c) => c.includes("POST /v1/batches"),
      );
      const before = (await usage(h.keyId)).length;
      await openai.batches.cancel(batch.id);
      const ended = await until(
        () => openai.batches.retrieve(batch.id),
        (b) => b.status === "cancelled",
      );
      expect(ended.status).toBe("cancelled");
      expect(upstreamCalls(seen).some((c) => /^POST \/v1\/batches\/batch_[0-9a-f]+\/cancel$/.test(c))).toBe(true);
      expect(ended.request_counts).toEqual({ total: 3, completed: 0, failed: 0 });
      const errs = (await (await openai.files.content(ended.error_file_id!)).text())
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(errs.map((e) => [e.custom_id, e.error.code])).toEqual([
        ["s1", "batch_cancelled"],
        ["s2", "batch_cancelled"],
        ["s3", "batch_cancelled"],
      ]);
      expect((await usage(h.keyId)).length).toBe(before);

      const mb = await anthropic.messages.batches.create({
        requests: ["x1", "x2"].map((id) => ({
          custom_id: id,
          params: { model: "alpha-haiku-4-5", max_tokens: 5, messages: [{ role: "user" as const, content: id }] },
        })),
      });
      await until(
        async () => upstreamCalls(seen),
        (c) => c.includes("POST /v1/messages/batches"),
      );
      await anthropic.messages.batches.cancel(mb.id);
      const mEnded = await until(
        () => anthropic.messages.batches.retrieve(mb.id),
        (b) => b.processing_status === "ended",
      );
      expect(mEnded.request_counts).toEqual({ processing: 0, succeeded: 0, errored: 0, canceled: 2, expired: 0 });
      expect(
        upstreamCalls(seen).some((c) => /^POST \/v1\/messages\/batches\/msgbatch_[0-9a-f]+\/cancel$/.test(c)),
      ).toBe(true);
    } finally {
      await simBatches(null);
    }
  });

  test("a cancelled batch on Turnpike's queue stops its unsent lines", async () => {
    // A slow first line holds the worker while the batch is cancelled (gamma-3-flash: its batch mode is off here).
    const slow = (id: string) => ({
      custom_id: id,
      method: "POST",
      url: "/v1/chat/completions",
      body: { model: "gamma-3-flash", messages: [{ role: "user", content: "wait [sim first_byte=1500]" }] },
    });
    const file = await openai.files.create({
      file: await toFile(Buffer.from(jsonl([slow("s1"), slow("s2"), slow("s3"), slow("s4")])), "slow.jsonl"),
      purpose: "batch",
    });
    const batch = await openai.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const cancelling = await openai.batches.cancel(batch.id);
    expect(["cancelling", "cancelled"]).toContain(cancelling.status);
    const ended = await until(
      () => openai.batches.retrieve(batch.id),
      (b) => b.status === "cancelled",
    );
    expect(ended.status).toBe("cancelled");
    // At most the line in flight when the cancel came ran; the rest were never sent.
    expect(ended.request_counts!.completed).toBeLessThanOrEqual(1);
    const errs = (await (await openai.files.content(ended.error_file_id!)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(errs.length).toBe(4 - ended.request_counts!.completed);
    expect(errs.every((e) => e.error.code === "batch_cancelled" && e.response === null)).toBe(true);
  });
});
