import { describe, expect, test } from "bun:test";
import type { MessageBatchIndividualResponse } from "@turnpike/schema";
import { BASE, useMockGateway } from "../test/use-mock-gateway.js";
import { NotFoundError } from "./index.js";

const { turnpike, client } = useMockGateway();

const params = (content: string) => ({
  model: "alpha-haiku-4-5",
  max_tokens: 32,
  messages: [{ role: "user" as const, content }],
});

async function collect(it: AsyncIterable<MessageBatchIndividualResponse>) {
  const out: MessageBatchIndividualResponse[] = [];
  for await (const r of it) out.push(r);
  return out;
}

describe("messages.batches", () => {
  test("create → retrieve (ended) → results in request order; list", async () => {
    turnpike.reply({ text: "first" }, { endpoint: "messages" });
    turnpike.fail(400, { message: "bad request two" }, { endpoint: "messages" });
    const created = await client().messages.batches.create({
      requests: [
        { custom_id: "one", params: params("1") },
        { custom_id: "two", params: params("2") },
      ],
    });
    expect(turnpike.lastRequest()?.url).toBe(`${BASE}/v1/messages/batches`);
    expect(created).toMatchObject({ type: "message_batch", processing_status: "in_progress", results_url: null });
    const ended = await client().messages.batches.retrieve(created.id);
    expect(ended.processing_status).toBe("ended");
    expect(ended.request_counts).toMatchObject({ succeeded: 1, errored: 1 });
    const results = await collect(await client().messages.batches.results(created.id));
    expect(results.map((r) => r.custom_id)).toEqual(["one", "two"]);
    expect(results[0]!.result).toMatchObject({
      type: "succeeded",
      message: { content: [{ type: "text", text: "first" }] },
    });
    expect(results[1]!.result).toMatchObject({
      type: "errored",
      error: { type: "error", error: { message: "bad request two" } },
    });
    const page = await client().messages.batches.list();
    expect(page.data.map((b) => b.id)).toEqual([created.id]);
  });

  test("cancel: canceling, then ended with every request canceled", async () => {
    const created = await client().messages.batches.create({ requests: [{ custom_id: "c", params: params("x") }] });
    expect((await client().messages.batches.cancel(created.id)).processing_status).toBe("canceling");
    const results = await collect(await client().messages.batches.results(created.id));
    expect(results).toEqual([{ custom_id: "c", result: { type: "canceled" } }]);
    expect(turnpike.bodies("messages")).toHaveLength(0);
    expect(
      await client()
        .messages.batches.retrieve("msgbatch_none")
        .catch((e: unknown) => e),
    ).toBeInstanceOf(NotFoundError);
  });

  test("list pages with after_id", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await client().messages.batches.create({ requests: [{ custom_id: "p", params: params("p") }] })).id);
    const seen: string[] = [];
    for await (const b of client().messages.batches.list({ limit: 2 })) seen.push(b.id);
    expect(seen).toEqual([...ids].reverse());
  });
});
