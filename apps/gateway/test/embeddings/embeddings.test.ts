/**
 * `POST /v1/embeddings` through the official chat-family client, on every embedding model of
 * the catalog (chat protocol's `/embeddings`, generateContent's `embedContent` /
 * `batchEmbedContents`): float and base64 vectors, `dimensions`, arrays of texts and of token
 * ids, the ledger, limits and budgets, and the refusals.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CATALOG_MODEL_IDS, EMBEDDING_MODEL_IDS } from "@turnpike/schema";
import OpenAI from "openai";
import { vectorOfBase64 } from "../../src/embeddings/vectors";
import { teamSpendId } from "../../src/storage/spend-ids";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";

let h: Harness;
let client: OpenAI;

beforeAll(async () => {
  h = await startHarness({ TURNPIKE_METRICS_KEY: "sk-metrics-embeddings-0123456789" });
  client = new OpenAI({ apiKey: h.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
});
afterAll(() => h.close());

const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

async function admin(path: string, method = "GET", body?: unknown) {
  const res = await fetch(h.url + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** The ledger row of a request, waited for (it is written as the reply ends). */
async function ledgerRow(keyId: string, requestId: string): Promise<any> {
  for (let i = 0; i < 200; i++) {
    const { body } = await admin(`/admin/usage?key_id=${keyId}&limit=1000`);
    const row = body.data.find((r: any) => r.request_id === requestId);
    if (row) return row;
    await Bun.sleep(20);
  }
  throw new Error(`no ledger row for ${requestId}`);
}

const DIMENSIONS: Record<string, number> = {
  "beta-embedding-3-small": 1536,
  "beta-embedding-3-large": 3072,
  "gamma-embedding-1": 3072,
};
const PRICE: Record<string, number> = {
  "beta-embedding-3-small": 0.02,
  "beta-embedding-3-large": 0.13,
  "gamma-embedding-1": 0.15,
};

for (const model of EMBEDDING_MODEL_IDS) {
  describe(`${model} through the official client`, () => {
    test("float: a unit vector of the model's size; the same text the same vector, another text another", async () => {
      const a = await client.embeddings.create({ model, input: "The quick brown fox", encoding_format: "float" });
      expect(a.object).toBe("list");
      expect(a.model).toBe(model);
      expect(a.data).toHaveLength(1);
      const v = a.data[0]!.embedding;
      expect(v).toHaveLength(DIMENSIONS[model]!);
      expect(norm(v)).toBeCloseTo(1, 4);
      const again = await client.embeddings.create({ model, input: "The quick brown fox", encoding_format: "float" });
      expect(again.data[0]!.embedding).toEqual(v);
      const other = await client.embeddings.create({ model, input: "A slow green turtle", encoding_format: "float" });
      expect(other.data[0]!.embedding).not.toEqual(v);
      expect(a.usage.prompt_tokens).toBeGreaterThan(0);
      expect(a.usage.total_tokens).toBe(a.usage.prompt_tokens);
    });

    test("base64: explicit (the string, decoded) and the client's default (decoded by the client) equal the floats", async () => {
      const floats = (await client.embeddings.create({ model, input: "base64 check", encoding_format: "float" }))
        .data[0]!.embedding;
      const raw = await client.embeddings.create({ model, input: "base64 check", encoding_format: "base64" });
      const text = raw.data[0]!.embedding as unknown as string; // base64 asked: the wire holds a string
      expect(typeof text).toBe("string");
      expect(vectorOfBase64(text)).toEqual(floats);
      // With no encoding_format the client asks for base64 and decodes it itself.
      const byDefault = await client.embeddings.create({ model, input: "base64 check" });
      expect(byDefault.data[0]!.embedding).toEqual(floats);
    });

    test("dimensions: shorter unit vectors; more than the model makes is a 400", async () => {
      const r = await client.embeddings.create({ model, input: "short", dimensions: 256, encoding_format: "float" });
      expect(r.data[0]!.embedding).toHaveLength(256);
      expect(norm(r.data[0]!.embedding)).toBeCloseTo(1, 4);
      const err = await client.embeddings
        .create({ model, input: "short", dimensions: DIMENSIONS[model]! + 1 })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("dimensions");
    });

    test("an array of texts: one vector each, in input order, each the vector of its text alone", async () => {
      const texts = ["first text", "second text", "third text"];
      const r = await client.embeddings.create({ model, input: texts, encoding_format: "float" });
      expect(r.data.map((d) => d.index)).toEqual([0, 1, 2]);
      for (const [i, t] of texts.entries()) {
        const alone = await client.embeddings.create({ model, input: t, encoding_format: "float" });
        expect(r.data[i]!.embedding).toEqual(alone.data[0]!.embedding);
      }
    });

    test("the ledger: one row, endpoint embeddings, input tokens priced at the model's input price", async () => {
      const { data, response } = await client.embeddings
        .create({ model, input: ["ledger one", "ledger two"], encoding_format: "float" })
        .withResponse();
      const rid = response.headers.get("x-request-id")!;
      const row = await ledgerRow(h.keyId, rid);
      expect(row).toMatchObject({ model, endpoint: "embeddings", stream: false, status: 200, output_tokens: 0 });
      expect(row.input_tokens).toBe(data.usage.prompt_tokens);
      expect(row.cost_usd).toBeCloseTo((row.input_tokens * PRICE[model]!) / 1e6, 9);
    });
  });
}

describe("token ids", () => {
  // Every embedding model its catalog row serves over the chat protocol (the generate one takes text only).
  for (const model of EMBEDDING_MODEL_IDS.filter((m) => m.startsWith("beta-"))) {
    test(`${model}: token ids (one array, or several; base64 too), each counted one token`, async () => {
      const one = await client.embeddings.create({ model, input: [1, 2, 3, 4], encoding_format: "float" });
      expect(one.data).toHaveLength(1);
      expect(one.data[0]!.embedding).toHaveLength(DIMENSIONS[model]!);
      expect(one.usage.prompt_tokens).toBe(4);
      const many = await client.embeddings.create({
        model,
        input: [
          [1, 2, 3, 4],
          [5, 6],
        ],
        encoding_format: "float",
      });
      expect(many.data.map((d) => d.index)).toEqual([0, 1]);
      expect(many.data[0]!.embedding).toEqual(one.data[0]!.embedding);
      expect(many.data[1]!.embedding).not.toEqual(one.data[0]!.embedding);
      expect(many.usage.prompt_tokens).toBe(6);
      // The client's default (base64, decoded by the client) and a shortened size, on token ids too.
      const short = await client.embeddings.create({ model, input: [[1, 2, 3, 4]], dimensions: 64 });
      expect(short.data[0]!.embedding).toHaveLength(64);
      expect(norm(short.data[0]!.embedding)).toBeCloseTo(1, 4);
    });
  }

  test("the generateContent protocol takes text only: token ids are a 400 naming the input", async () => {
    const err = await client.embeddings
      .create({ model: "gamma-embedding-1", input: [[1, 2, 3]] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain("takes text only");
  });
});

describe("generateContent: embedContent for one input, batchEmbedContents for several, the task type carried", () => {
  test("the upstream calls and the task type", async () => {
    const sim = h.gw.simulator!;
    await h.call("/v1/embeddings", {
      method: "POST",
      body: JSON.stringify({
        model: "gamma-embedding-1",
        input: "query text",
        task_type: "RETRIEVAL_QUERY",
        dimensions: 64,
      }),
    });
    const single = sim.requests.at(-1)!;
    expect(single.path).toBe("/v1beta/models/gamma-embedding-1:embedContent");
    expect(single.body).toEqual({
      content: { parts: [{ text: "query text" }] },
      taskType: "RETRIEVAL_QUERY",
      outputDimensionality: 64,
    });
    await h.call("/v1/embeddings", {
      method: "POST",
      body: JSON.stringify({ model: "gamma-embedding-1", input: ["a", "b"], task_type: "RETRIEVAL_DOCUMENT" }),
    });
    const batch = sim.requests.at(-1)!;
    expect(batch.path).toBe("/v1beta/models/gamma-embedding-1:batchEmbedContents");
    expect((batch.body as any).requests.map((r: any) => [r.model, r.taskType])).toEqual([
      ["models/gamma-embedding-1", "RETRIEVAL_DOCUMENT"],
      ["models/gamma-embedding-1", "RETRIEVAL_DOCUMENT"],
    ]);
    // A query and a document of the same text are embedded for different tasks.
    const vec = async (task: string) =>
      (
        (await (
          await h.call("/v1/embeddings", {
            method: "POST",
            body: JSON.stringify({ model: "gamma-embedding-1", input: "same", task_type: task }),
          })
        ).json()) as any
      ).data[0].embedding;
    expect(await vec("RETRIEVAL_QUERY")).not.toEqual(await vec("RETRIEVAL_DOCUMENT"));
    const bad = await h.call("/v1/embeddings", {
      method: "POST",
      body: JSON.stringify({ model: "gamma-embedding-1", input: "x", task_type: "NOPE" }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.param).toBe("task_type");
  });
});

describe("refusals", () => {
  test("a chat model on /v1/embeddings, and an embedding model on every inference route, are 400s naming the model", async () => {
    const err = await client.embeddings.create({ model: "beta-5", input: "x" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("model_not_supported");
    const chat = await client.chat.completions
      .create({ model: "beta-embedding-3-small", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
    expect((chat as Error).message).toContain("is an embedding model");
    const responses = await client.responses
      .create({ model: "gamma-embedding-1", input: "hi" })
      .catch((e: unknown) => e);
    expect(responses).toBeInstanceOf(OpenAI.BadRequestError);
    const messages = await h.call("/v1/messages", {
      method: "POST",
      dialect: "messages",
      body: JSON.stringify({
        model: "beta-embedding-3-large",
        max_tokens: 5,
        messages: [{ role: "user", content: "hi" }],
      }),
    });
    expect(messages.status).toBe(400);
    expect(((await messages.json()) as any).error.type).toBe("invalid_request_error");
  });

  test("unknown model 404; bad input 400 naming the field; a bad key 401", async () => {
    expect(await client.embeddings.create({ model: "nope", input: "x" }).catch((e: unknown) => e)).toBeInstanceOf(
      OpenAI.NotFoundError,
    );
    for (const [body, param] of [
      [{ model: "beta-embedding-3-small", input: "" }, "input"],
      [{ model: "beta-embedding-3-small", input: [] }, "input"],
      [{ model: "beta-embedding-3-small", input: [1.5] }, "input"],
      [{ model: "beta-embedding-3-small", input: "x", encoding_format: "hex" }, "encoding_format"],
      [{ model: "beta-embedding-3-small", input: "x", dimensions: 0 }, "dimensions"],
      [{ input: "x" }, "model"],
    ] as const) {
      const res = await h.call("/v1/embeddings", { method: "POST", body: JSON.stringify(body) });
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error.param).toBe(param);
    }
    const res = await fetch(`${h.url}/v1/embeddings`, {
      method: "POST",
      headers: { authorization: "Bearer sk-wrong", "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(401);
  });
});

describe("limits and budgets", () => {
  test("the key's rpm limit refuses the next call with 429", async () => {
    const { body: k } = await admin("/admin/keys", "POST", { name: "emb-rpm", rpm: 1 });
    const limited = new OpenAI({ apiKey: k.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
    await limited.embeddings.create({ model: "beta-embedding-3-small", input: "one" });
    const err = await limited.embeddings
      .create({ model: "beta-embedding-3-small", input: "two" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
  });

  test("a spent budget refuses embeddings too (insufficient_quota)", async () => {
    const { body: k } = await admin("/admin/keys", "POST", { name: "emb-budget", budget_usd: 1 });
    const spent = new OpenAI({ apiKey: k.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
    const { response } = await spent.embeddings
      .create({ model: "gamma-embedding-1", input: "a text long enough to cost something".repeat(5) })
      .withResponse();
    const row = await ledgerRow(k.id, response.headers.get("x-request-id")!);
    // Lowered to exactly what was spent: spent.
    expect((await admin(`/admin/keys/${k.id}`, "PATCH", { budget_usd: row.cost_usd })).status).toBe(200);
    const err = await spent.embeddings.create({ model: "gamma-embedding-1", input: "again" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).code).toBe("insufficient_quota");
    expect((err as Error).message).toContain("is spent");
  });

  // Issue 41, item 11: one call of 100 inputs once spent 60× a $0.0001 budget (embeddings held no
  // reservation, and a budget with any room admitted anything). Now its worst case — one token per
  // character of the body — must fit what is left.
  test("a call whose worst case does not fit the budget is refused before any spend; one that fits is billed within it", async () => {
    const { body: k } = await admin("/admin/keys", "POST", { name: "emb-worst", budget_usd: 0.0001 });
    const client = new OpenAI({ apiKey: k.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
    const inputs = Array.from({ length: 100 }, (_, i) => `input number ${i}: ${"some words to embed ".repeat(20)}`);
    const err = await client.embeddings.create({ model: "gamma-embedding-1", input: inputs }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).code).toBe("insufficient_quota");
    expect((err as Error).message).toContain("has $0.0001 left");
    expect((err as Error).message).toContain("less than this request's worst case of $0.006");
    expect((await admin(`/admin/keys/${k.id}`)).body.spent_this_month_usd).toBe(0);
    // A few inputs fit ($0.15 a million tokens: $0.0001 is some 660 characters at one token each).
    const { response } = await client.embeddings
      .create({ model: "gamma-embedding-1", input: ["one short text", "another"] })
      .withResponse();
    const row = await ledgerRow(k.id, response.headers.get("x-request-id")!);
    expect(row.cost_usd).toBeGreaterThan(0);
    const after = await h.gw.deps.spend.spent(k.id);
    expect(after).toBeCloseTo(row.cost_usd, 12);
    expect(after).toBeLessThanOrEqual(0.0001);
  });

  test("an embeddings call counts under its key's team too (the team's budget holds it)", async () => {
    const team = (await admin("/admin/teams", "POST", { name: "emb-team", budget_usd: 0.0001 })).body as { id: string };
    const { body: k } = await admin("/admin/keys", "POST", { name: "emb-team-key", team_id: team.id });
    const client = new OpenAI({ apiKey: k.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
    const big = Array.from({ length: 100 }, () => "some words to embed ".repeat(20));
    const err = await client.embeddings.create({ model: "gamma-embedding-1", input: big }).catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).code).toBe("insufficient_quota");
    expect((err as Error).message).toContain("This key's team's monthly budget of $0.0001");
    const { response } = await client.embeddings
      .create({ model: "gamma-embedding-1", input: "a short one" })
      .withResponse();
    const row = await ledgerRow(k.id, response.headers.get("x-request-id")!);
    expect(row.cost_usd).toBeGreaterThan(0);
    expect(await h.gw.deps.spend.spent(teamSpendId(team.id))).toBeCloseTo(row.cost_usd, 12);
  });
});

describe("metrics", () => {
  test("embeddings are counted under endpoint embeddings", async () => {
    await client.embeddings.create({ model: "beta-embedding-3-large", input: "counted" });
    const text = await (
      await fetch(`${h.url}/metrics`, { headers: { authorization: "Bearer sk-metrics-embeddings-0123456789" } })
    ).text();
    const line = text
      .split("\n")
      .find(
        (l) =>
          l.startsWith("turnpike_requests_total{") &&
          l.includes('turnpike_endpoint="embeddings"') &&
          l.includes('gen_ai_request_model="beta-embedding-3-large"') &&
          l.includes('http_response_status_code="200"'),
      );
    expect(line).toBeDefined();
    expect(Number(line!.split(" ").at(-1))).toBeGreaterThanOrEqual(1);
  });
});

describe("GET /v1/models", () => {
  test("marks the embedding models; coding agents are not shown them", async () => {
    const body = (await (await h.call("/v1/models")).json()) as any;
    const embeds = body.data.filter((m: any) => m.embeds).map((m: any) => m.id);
    expect(embeds.sort()).toEqual([...EMBEDDING_MODEL_IDS].sort());
    expect(body.data.find((m: any) => m.id === "beta-embedding-3-large").embedding_dimensions).toBe(3072);
    expect(body.data.find((m: any) => m.id === "beta-5").embeds).toBe(false);
    // The agents' own metadata never lists them.
    expect(body.models.map((m: any) => m.slug).sort()).toEqual([...CATALOG_MODEL_IDS].sort());
    const codex = (await (await h.call("/v1/models?client_version=0.169.0")).json()) as any;
    expect(codex.data.map((m: any) => m.id).sort()).toEqual([...CATALOG_MODEL_IDS].sort());
    const picker = (await (
      await h.call("/v1/models", {
        dialect: "messages",
        headers: { "user-agent": "claude-cli/2.1.331 (external, cli)" },
      })
    ).json()) as any;
    expect(picker.data.some((m: any) => m.id.includes("embedding"))).toBe(false);
  });
});
