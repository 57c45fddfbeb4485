import { describe, expect, test } from "bun:test";
import { mockVector } from "@turnpike/mocks";
import { BASE, useMockGateway } from "../test/use-mock-gateway.js";
import { NotFoundError } from "./index.js";

const { turnpike, client } = useMockGateway();

const line = (customId: string, body: Record<string, unknown>, url = "/v1/chat/completions") =>
  JSON.stringify({ custom_id: customId, method: "POST", url, body });

describe("files", () => {
  test("create (text or Blob) uploads multipart to {base}/v1/files; retrieve and content read it back", async () => {
    const text = `${line("a", { model: "beta-5", messages: [{ role: "user", content: "hi" }] })}\n`;
    const file = await client().files.create({ file: text, purpose: "batch" });
    expect(turnpike.lastRequest()?.url).toBe(`${BASE}/v1/files`);
    expect(turnpike.lastRequest()?.headers["content-type"]).toStartWith("multipart/form-data; boundary=");
    expect(file).toMatchObject({ object: "file", purpose: "batch", filename: "batch.jsonl", bytes: text.length });
    expect(await client().files.retrieve(file.id)).toEqual(file);
    expect(await client().files.content(file.id)).toBe(text);
    const named = await client().files.create({
      file: new File([text], "mine.jsonl", { type: "application/jsonl" }),
      purpose: "batch",
    });
    expect(named.filename).toBe("mine.jsonl");
    expect(
      await client()
        .files.retrieve("file-none")
        .catch((e: unknown) => e),
    ).toBeInstanceOf(NotFoundError);
  });
});

describe("batches", () => {
  test("create → retrieve → output file; list pages; cancel", async () => {
    turnpike.reply({ text: "batched" }, { endpoint: "chat" });
    const input = await client().files.create({
      file: [
        line("q1", { model: "beta-5", messages: [{ role: "user", content: "one" }] }),
        line("q2", { model: "nope", messages: [{ role: "user", content: "two" }] }),
      ].join("\n"),
      purpose: "batch",
    });
    const created = await client().batches.create({
      input_file_id: input.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    expect(created.status).toBe("in_progress");
    const done = await client().batches.retrieve(created.id);
    expect(done).toMatchObject({ status: "completed", request_counts: { total: 2, completed: 1, failed: 1 } });
    const [out] = (await client().files.content(done.output_file_id!))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(out.custom_id).toBe("q1");
    expect(out.response.body.choices[0].message.content).toBe("batched");
    const [err] = (await client().files.content(done.error_file_id!))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(err.response.status_code).toBe(404);

    const second = await client().batches.create({
      input_file_id: input.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    expect((await client().batches.cancel(second.id)).status).toBe("cancelling");
    const page = await client().batches.list({ limit: 1 });
    expect(page.data.map((b) => b.id)).toEqual([second.id]);
    expect(page.has_more).toBe(true);
    const all: string[] = [];
    for await (const b of client().batches.list({ limit: 1 })) all.push(`${b.id}:${b.status}`);
    expect(all).toEqual([`${second.id}:cancelled`, `${created.id}:completed`]);
  });

  test("embeddings lines", async () => {
    const input = await client().files.create({
      file: line(
        "e",
        { model: "gamma-embedding-1", input: "x", dimensions: 8, encoding_format: "float" },
        "/v1/embeddings",
      ),
      purpose: "batch",
    });
    const b = await client().batches.create({
      input_file_id: input.id,
      endpoint: "/v1/embeddings",
      completion_window: "24h",
    });
    const done = await client().batches.retrieve(b.id);
    const out = JSON.parse((await client().files.content(done.output_file_id!)).trim());
    expect(out.response.body.data[0].embedding).toEqual(mockVector("x", 8));
  });
});
