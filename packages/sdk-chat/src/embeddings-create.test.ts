import { describe, expect, test } from "bun:test";
import { mockVector } from "@turnpike/mocks";
import { BASE, useMockGateway } from "../test/use-mock-gateway.js";
import { BadRequestError } from "./index.js";

const { turnpike, client } = useMockGateway();

describe("embeddings.create", () => {
  test("goes to {base}/v1/embeddings; with no encoding_format asks for base64 and hands back numbers", async () => {
    const r = await client().embeddings.create({ model: "beta-embedding-3-small", input: ["a cat", "a dog"] });
    expect(turnpike.lastRequest()?.url).toBe(`${BASE}/v1/embeddings`);
    expect(turnpike.bodies("embeddings").at(-1)?.encoding_format).toBe("base64");
    expect(r.data.map((d) => d.index)).toEqual([0, 1]);
    expect(r.data[0]?.embedding).toEqual(mockVector("a cat", 1536));
    expect(r.data[1]?.embedding).toEqual(mockVector("a dog", 1536));
    expect(r.usage.prompt_tokens).toBeGreaterThan(0);
  });

  test("float as sent; base64 strings kept; dimensions shorten", async () => {
    const floats = await client().embeddings.create({
      model: "gamma-embedding-1",
      input: "x",
      encoding_format: "float",
      dimensions: 8,
    });
    expect(floats.data[0]?.embedding).toEqual(mockVector("x", 8));
    const b64 = await client().embeddings.create({
      model: "gamma-embedding-1",
      input: "x",
      encoding_format: "base64",
      dimensions: 8,
    });
    expect(typeof b64.data[0]?.embedding).toBe("string");
    const { data, requestId } = await client()
      .embeddings.create({ model: "gamma-embedding-1", input: "x", dimensions: 8 })
      .withResponse();
    expect(data.data[0]?.embedding).toEqual(floats.data[0]?.embedding);
    expect(requestId).toBeString();
  });

  test("a chat model is a BadRequestError naming the model", async () => {
    const err = await client()
      .embeddings.create({ model: "beta-5", input: "x" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).message).toContain("not an embedding model");
  });
});
