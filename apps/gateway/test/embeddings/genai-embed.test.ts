/**
 * The generateContent format's embeddings actions, `:embedContent` and `:batchEmbedContents`,
 * through the same embeddings path as `/v1/embeddings`: the official GenAI SDK's
 * `models.embedContent` pointed at Turnpike, on every embedding model of the catalog, with the
 * vectors `/v1/embeddings` gives for the same text, one ledger row each, and the format's errors.
 */
import { ApiError, GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EMBEDDING_MODEL_IDS } from "@turnpike/schema";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";

let h: Harness;
let ai: GoogleGenAI;
beforeAll(async () => {
  h = await startHarness();
  ai = new GoogleGenAI({ apiKey: h.key, httpOptions: { baseUrl: h.url } });
});
afterAll(() => h.close());

const viaEmbeddings = async (model: string, input: string | string[], extra: Record<string, unknown> = {}) => {
  const res = await h.call("/v1/embeddings", { method: "POST", body: JSON.stringify({ model, input, ...extra }) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { embedding: number[] }[] }).data.map((d) => d.embedding);
};

const usageRows = async () => {
  const res = await fetch(`${h.url}/admin/usage?key_id=${h.keyId}&limit=1000`, {
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  return ((await res.json()) as { data: { endpoint: string; model: string; request_id: string }[] }).data;
};

describe("GenAI SDK models.embedContent", () => {
  for (const model of EMBEDDING_MODEL_IDS) {
    test(`${model}: one text and several, the vectors of /v1/embeddings, one ledger row each`, async () => {
      const before = (await usageRows()).length;
      const one = await ai.models.embedContent({ model, contents: "The quick brown fox" });
      expect(one.embeddings).toHaveLength(1);
      expect(one.embeddings![0]!.values).toEqual((await viaEmbeddings(model, "The quick brown fox"))[0]!);
      const many = await ai.models.embedContent({ model, contents: ["alpha", "beta", "gamma"] });
      expect(many.embeddings!.map((e) => e.values)).toEqual(await viaEmbeddings(model, ["alpha", "beta", "gamma"]));
      const rows = await usageRows();
      // Two SDK calls and two /v1/embeddings calls: four rows, each an embeddings row of the model.
      expect(rows.length - before).toBe(4);
      for (const r of rows.slice(0, 4)) expect(r).toMatchObject({ endpoint: "embeddings", model });
    });
  }

  test("outputDimensionality and taskType are carried as /v1/embeddings carries them", async () => {
    const got = await ai.models.embedContent({
      model: "gamma-embedding-1",
      contents: "sized",
      config: { outputDimensionality: 8, taskType: "RETRIEVAL_QUERY" },
    });
    expect(got.embeddings![0]!.values).toHaveLength(8);
    expect(got.embeddings![0]!.values).toEqual(
      (await viaEmbeddings("gamma-embedding-1", "sized", { dimensions: 8, task_type: "RETRIEVAL_QUERY" }))[0]!,
    );
  });

  test(":embedContent over HTTP; errors in the format's envelope (unknown model, bad body, a chat model)", async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${h.url}${path}`, {
        method: "POST",
        headers: { "x-goog-api-key": h.key, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const one = await post("/v1beta/models/gamma-embedding-1:embedContent", { content: { parts: [{ text: "hi" }] } });
    expect(one.status).toBe(200);
    const body = (await one.json()) as { embedding: { values: number[] } };
    expect(body.embedding.values).toEqual((await viaEmbeddings("gamma-embedding-1", "hi"))[0]!);
    expect(one.headers.get("x-request-id")).toMatch(/^req_/);

    const unknown = await post("/v1beta/models/no-such-model:embedContent", { content: { parts: [{ text: "x" }] } });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { status: string } }).error.status).toBe("NOT_FOUND");
    const bad = await post("/v1beta/models/gamma-embedding-1:embedContent", {
      content: { parts: [{ inlineData: {} }] },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { status: string; message: string } }).error).toMatchObject({
      status: "INVALID_ARGUMENT",
    });
    const mixed = await post("/v1beta/models/gamma-embedding-1:batchEmbedContents", {
      requests: [
        { model: "models/gamma-embedding-1", content: { parts: [{ text: "a" }] } },
        { model: "models/beta-embedding-3-small", content: { parts: [{ text: "b" }] } },
      ],
    });
    expect(mixed.status).toBe(400);
    // A key that may not call the model: the SDK raises its ApiError with the status.
    const made = await fetch(`${h.url}/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "no-embed", models: ["beta-5"] }),
    });
    const { key } = (await made.json()) as { key: string };
    const narrow = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: h.url } });
    try {
      await narrow.models.embedContent({ model: "gamma-embedding-1", contents: "x" });
      throw new Error("not refused");
    } catch (e) {
      expect(e).toBeInstanceOf(ApiError);
      expect([403, 404]).toContain((e as ApiError).status);
    }
  });
});
