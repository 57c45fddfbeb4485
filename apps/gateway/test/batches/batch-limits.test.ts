/**
 * Batch prices and limits: a line billed at the catalog's `batch_discount` beside the same call
 * made directly, the input limits (file size, lines, line size) refused with clear errors, and
 * a job that runs past its window ending `expired` with its unsent lines.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI, { toFile } from "openai";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";
import { until } from "./until";

let h: Harness;
let openai: OpenAI;
let clock = Date.now();

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "turnpike-batch-"));
  const config = join(dir, "config.json");
  // beta-5 at half price in batches; the other models keep their price.
  writeFileSync(
    config,
    JSON.stringify({
      models: [
        {
          id: "beta-5",
          owned_by: "beta",
          input_per_mtok: 1.25,
          output_per_mtok: 6.25,
          context_window: 400000,
          batch_discount: 0.5,
        },
      ],
    }),
  );
  h = await startHarness(
    {
      TURNPIKE_CONFIG: config,
      // gamma's batch mode off: its lines run through Turnpike's queue (the queue's expiry below).
      TURNPIKE_BATCH_UPSTREAM_OFF: "gamma",
      TURNPIKE_BATCH_MAX_LINES: "3",
      TURNPIKE_BATCH_MAX_LINE_KB: "1",
      TURNPIKE_BATCH_MAX_FILE_MB: "0.01",
    },
    { now: () => clock },
  );
  openai = new OpenAI({ apiKey: h.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
});
afterAll(() => h.close());

async function ledgerRow(requestId: string): Promise<any> {
  for (let i = 0; i < 200; i++) {
    const res = await fetch(`${h.url}/admin/usage?key_id=${h.keyId}&limit=1000`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    const row = ((await res.json()) as any).data.find((r: any) => r.request_id === requestId);
    if (row) return row;
    await Bun.sleep(20);
  }
  throw new Error(`no ledger row for ${requestId}`);
}

const upload = async (text: string) =>
  openai.files.create({ file: await toFile(Buffer.from(text), "in.jsonl"), purpose: "batch" });
const chatLine = (id: string, model: string) =>
  JSON.stringify({
    custom_id: id,
    method: "POST",
    url: "/v1/chat/completions",
    body: { model, messages: [{ role: "user", content: 'Price me. [sim text="priced"]' }] },
  });

describe("batch prices", () => {
  test("a line is billed at 1 − batch_discount of the same call made directly; a model without one at its full price", async () => {
    const direct = await openai.chat.completions
      .create({ model: "beta-5", messages: [{ role: "user", content: 'Price me. [sim text="priced"]' }] })
      .withResponse();
    const directRow = await ledgerRow(direct.response.headers.get("x-request-id")!);
    const deltaDirect = await openai.chat.completions
      .create({ model: "delta-m3", messages: [{ role: "user", content: 'Price me. [sim text="priced"]' }] })
      .withResponse();
    const deltaRow = await ledgerRow(deltaDirect.response.headers.get("x-request-id")!);
    const file = await upload([chatLine("half", "beta-5"), chatLine("full", "delta-m3")].join("\n"));
    const batch = await openai.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const done = await until(
      () => openai.batches.retrieve(batch.id),
      (b) => b.status === "completed",
    );
    const out = (await (await openai.files.content(done.output_file_id!)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const half = await ledgerRow(out[0].response.request_id);
    const full = await ledgerRow(out[1].response.request_id);
    expect(half.input_tokens).toBe(directRow.input_tokens);
    expect(half.output_tokens).toBe(directRow.output_tokens);
    expect(directRow.cost_usd).toBeGreaterThan(0);
    expect(half.cost_usd).toBeCloseTo(directRow.cost_usd * 0.5, 9);
    expect(full.cost_usd).toBeCloseTo(deltaRow.cost_usd, 9);
  });
});

describe("input limits", () => {
  test("too many lines, a line too long, a file too big: 400 / 413 saying which limit", async () => {
    const lines = await upload([1, 2, 3, 4].map((i) => chatLine(`l${i}`, "beta-5")).join("\n"));
    const many = await openai.batches
      .create({ input_file_id: lines.id, endpoint: "/v1/chat/completions", completion_window: "24h" })
      .catch((e: unknown) => e);
    expect(many).toBeInstanceOf(OpenAI.BadRequestError);
    expect((many as Error).message).toContain("at most 3");
    const long = await upload(
      JSON.stringify({
        custom_id: "x",
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: "beta-5", messages: [{ role: "user", content: "y".repeat(2000) }] },
      }),
    );
    const tooLong = await openai.batches
      .create({ input_file_id: long.id, endpoint: "/v1/chat/completions", completion_window: "24h" })
      .catch((e: unknown) => e);
    expect(tooLong).toBeInstanceOf(OpenAI.BadRequestError);
    expect((tooLong as Error).message).toContain("Line 1");
    const big = await upload("z".repeat(20_000)).catch((e: unknown) => e);
    expect(big).toBeInstanceOf(OpenAI.APIError);
    expect((big as InstanceType<typeof OpenAI.APIError>).status).toBe(413);
    const anthropic = new Anthropic({ apiKey: h.key, baseURL: h.url, maxRetries: 0 });
    const params = { model: "beta-5", max_tokens: 5, messages: [{ role: "user" as const, content: "hi" }] };
    const tooMany = await anthropic.messages.batches
      .create({ requests: [1, 2, 3, 4].map((i) => ({ custom_id: `m${i}`, params })) })
      .catch((e: unknown) => e);
    expect(tooMany).toBeInstanceOf(Anthropic.BadRequestError);
    const dup = await anthropic.messages.batches
      .create({
        requests: [
          { custom_id: "same", params },
          { custom_id: "same", params },
        ],
      })
      .catch((e: unknown) => e);
    expect(dup).toBeInstanceOf(Anthropic.BadRequestError);
  });
});

describe("expiry", () => {
  test("a batch on Turnpike's queue still running after its 24 h window ends expired; its unsent lines are not sent", async () => {
    const slow = (id: string) =>
      JSON.stringify({
        custom_id: id,
        method: "POST",
        url: "/v1/chat/completions",
        // gamma-3-flash: its batch mode is off here, so Turnpike's queue runs it.
        body: { model: "gamma-3-flash", messages: [{ role: "user", content: "slow [sim first_byte=1500]" }] },
      });
    const file = await upload([slow("e1"), slow("e2"), slow("e3")].join("\n"));
    const batch = await openai.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    // The window passes while the first line is in flight.
    clock += 25 * 3600 * 1000;
    const ended = await until(
      () => openai.batches.retrieve(batch.id),
      (b) => b.status === "expired",
    );
    expect(ended.status).toBe("expired");
    expect(ended.request_counts!.completed).toBeLessThanOrEqual(1);
    const errs = (await (await openai.files.content(ended.error_file_id!)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(errs.length).toBe(3 - ended.request_counts!.completed);
    expect(errs.every((e) => e.error.code === "batch_expired")).toBe(true);
  });

  test("a batch whose upstream batch still runs after the window: the upstream batch is cancelled, every line expired", async () => {
    const sim = h.gw.simulator!;
    await fetch(`${sim.url}/_sim/batches`, { method: "POST", body: JSON.stringify({ ms: 600_000 }) });
    try {
      const file = await upload([chatLine("u1", "beta-5"), chatLine("u2", "beta-5")].join("\n"));
      const seen = sim.requests.length;
      const batch = await openai.batches.create({
        input_file_id: file.id,
        endpoint: "/v1/chat/completions",
        completion_window: "24h",
      });
      const calls = () => sim.requests.slice(seen).map((r) => `${r.method} ${r.path}`);
      await until(
        async () => calls(),
        (c) => c.includes("POST /v1/batches"),
      );
      clock += 25 * 3600 * 1000;
      const ended = await until(
        () => openai.batches.retrieve(batch.id),
        (b) => b.status === "expired",
      );
      expect(ended.status).toBe("expired");
      expect(calls().some((c) => c.endsWith("/cancel"))).toBe(true);
      expect(ended.request_counts).toEqual({ total: 2, completed: 0, failed: 0 });
      const errs = (await (await openai.files.content(ended.error_file_id!)).text())
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(errs.map((e) => [e.custom_id, e.error.code])).toEqual([
        ["u1", "batch_expired"],
        ["u2", "batch_expired"],
      ]);
    } finally {
      await fetch(`${sim.url}/_sim/batches`, { method: "DELETE" });
    }
  });
});
