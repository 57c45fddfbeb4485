import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LISTED_IDS, startHarness, type Harness } from "./harness";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe("GET /v1/models", () => {
  test("lists every catalog model in one shape both client libraries parse", async () => {
    const res = await h.call("/v1/models");
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.object).toBe("list");
    expect(body.has_more).toBe(false);
    const ids = body.data.map((m: any) => m.id);
    expect([...ids].sort()).toEqual([...LISTED_IDS].sort());
    expect(body.first_id).toBe(ids[0]);
    expect(body.last_id).toBe(ids.at(-1));
    // The models to chat with; the embedding models are checked in embeddings/embeddings.test.ts.
    for (const m of body.data.filter((d: any) => !d.embeds)) {
      expect(m.object).toBe("model");
      expect(m.type).toBe("model");
      expect(["alpha", "beta", "gamma", "delta"]).toContain(m.owned_by);
      expect(typeof m.display_name).toBe("string");
      expect(Number.isInteger(m.created)).toBe(true);
      expect(new Date(m.created_at).getTime() / 1000).toBe(m.created);
      expect(m.context_window).toBeGreaterThan(100_000);
      // Output is priced at 4–5× input.
      const ratio = m.pricing.output_per_mtok / m.pricing.input_per_mtok;
      expect(ratio).toBeGreaterThanOrEqual(3.75);
      expect(ratio).toBeLessThanOrEqual(5);
    }
    const opus = body.data.find((m: any) => m.id === "alpha-opus-4-8");
    expect(opus.owned_by).toBe("alpha");
    const delta = body.data.find((m: any) => m.id === "delta-m3");
    expect(delta.owned_by).toBe("delta");
  });

  test("each entry publishes its catalog row: OpenRouter's fields, the messages format's, Turnpike's tier and batch prices", async () => {
    const body = (await (await h.call("/v1/models")).json()) as any;
    const beta = body.data.find((m: any) => m.id === "beta-5");
    const entry = h.gw.deps.catalog.get("beta-5")!;
    // OpenRouter's model object, from the row that prices the ledger.
    expect(beta.context_length).toBe(entry.context_window);
    expect(beta.top_provider).toMatchObject({ context_length: 400_000, max_completion_tokens: 128_000 });
    expect(beta.pricing).toMatchObject({
      prompt: "0.00000125",
      completion: "0.00000625",
      input_cache_read: "0.000000125",
      input_cache_write: "0.00000125",
      // Turnpike's own per-million numbers, as before, beside them.
      input_per_mtok: 1.25,
      output_per_mtok: 6.25,
    });
    expect(beta.architecture).toMatchObject({
      input_modalities: ["text", "image", "file"],
      output_modalities: ["text"],
    });
    expect(beta.supported_parameters).toEqual(expect.arrayContaining(["tools", "tool_choice", "reasoning", "seed"]));
    // The messages format's own fields.
    expect([beta.max_input_tokens, beta.max_tokens]).toEqual([400_000, 128_000]);
    // Tiers and batch: the row's prices times its multipliers.
    expect(beta.turnpike.service_tiers.default).toMatchObject({
      multiplier: 1,
      input_per_mtok: 1.25,
      output_per_mtok: 6.25,
    });
    expect(beta.turnpike.service_tiers.priority).toMatchObject({
      multiplier: 2,
      input_per_mtok: 2.5,
      output_per_mtok: 12.5,
    });
    expect(beta.turnpike.service_tiers.flex).toMatchObject({ multiplier: 0.5, input_per_mtok: 0.625 });
    expect(beta.turnpike.batch).toMatchObject({ multiplier: 0.5, input_per_mtok: 0.625, output_per_mtok: 3.125 });
    // A row that sells no tier and has no batch price says so.
    const delta = body.data.find((m: any) => m.id === "delta-m3");
    expect(Object.keys(delta.turnpike.service_tiers)).toEqual(["default"]);
    expect(delta.turnpike.batch).toBeNull();
    expect(delta.pricing.prompt).toBe("0.0000003");
    // The messages protocol carries no penalties: not listed for its models.
    const alpha = body.data.find((m: any) => m.id === "alpha-haiku-4-5");
    expect(alpha.supported_parameters).not.toContain("presence_penalty");
    expect(alpha.supported_parameters).toContain("top_k");
    // An embedding model: text in, embeddings out, no output cap.
    const emb = body.data.find((m: any) => m.id === "beta-embedding-3-small");
    expect(emb.architecture.output_modalities).toEqual(["embeddings"]);
    expect(emb.top_provider.max_completion_tokens).toBeNull();
    // The generateContent format's own listing says the same of the window and the output cap.
    const g = (await (
      await h.call("/v1beta/models/gamma-3-pro", { headers: { "x-goog-api-key": h.key } })
    ).json()) as any;
    expect(g).toMatchObject({ inputTokenLimit: 1_048_576, outputTokenLimit: 65_536, thinking: true });
  });

  test("retrieves one model, including an id with spaces and parentheses", async () => {
    const res = await h.call(`/v1/models/${encodeURIComponent("alpha-sonnet-4-6 (context-1m beta)")}`);
    expect(res.status).toBe(200);
    const m = (await res.json()) as any;
    expect(m.id).toBe("alpha-sonnet-4-6 (context-1m beta)");
    expect(m.context_window).toBe(1_000_000);
    const g = await h.call("/v1/models/gamma-3-pro");
    expect(((await g.json()) as any).owned_by).toBe("gamma");
  });

  test("an unknown id is 404 model_not_found", async () => {
    const res = await h.call("/v1/models/nope");
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.code).toBe("model_not_found");
  });
});

describe("context-1m entry", () => {
  test("goes upstream as alpha-sonnet-4-6 with the beta header, and answers with the id asked for", async () => {
    const id = "alpha-sonnet-4-6 (context-1m beta)";
    const res = await h.call("/v1/messages", {
      method: "POST",
      dialect: "messages",
      headers: { "anthropic-beta": "interleaved-thinking-2025-05-14" },
      body: JSON.stringify({ model: id, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).model).toBe(id);
    const sent = h.gw.simulator!.requests.at(-1)!;
    expect((sent.body as any).model).toBe("alpha-sonnet-4-6");
    const beta = String(sent.headers["anthropic-beta"]);
    expect(beta).toContain("context-1m-2025-08-07");
    expect(beta).toContain("interleaved-thinking-2025-05-14");
  });
});
