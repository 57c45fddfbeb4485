/**
 * `GET /v1/models` as the coding agents read it: the Responses-format agent's own model catalog
 * (a top-level `models` array) beside the list the official clients parse, and the messages-format
 * agent's picker shown ids it keeps — which then work as model ids.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { ADMIN_KEY, CATALOG_IDS, LISTED_IDS, startHarness, type Harness } from "./harness";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** The fields the Responses-format agent's decoder (release 0.169) requires of each model, and their JSON types. */
const REQUIRED: Record<string, string> = {
  slug: "string",
  display_name: "string",
  supported_reasoning_levels: "array",
  shell_type: "string",
  visibility: "string",
  supported_in_api: "boolean",
  priority: "number",
  base_instructions: "string",
  supports_reasoning_summaries: "boolean",
  support_verbosity: "boolean",
  truncation_policy: "object",
  supports_parallel_tool_calls: "boolean",
  experimental_supported_tools: "array",
};
const typeOf = (v: unknown) => (Array.isArray(v) ? "array" : v === null ? "null" : typeof v);

describe("the Responses-format agent's model catalog", () => {
  test("a top-level models array: one entry per listed model, with its window, reasoning levels and a free-form patch tool", async () => {
    const res = await h.call("/v1/models?client_version=0.169.0");
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.models.map((m: any) => m.slug)).toEqual(body.data.map((m: any) => m.id));
    expect(typeof body.etag).toBe("string");
    for (const m of body.models) {
      for (const [field, type] of Object.entries(REQUIRED))
        expect({ slug: m.slug, field, type: typeOf(m[field]) }).toEqual({ slug: m.slug, field, type });
      const listed = body.data.find((d: any) => d.id === m.slug);
      expect(m.context_window).toBe(listed.context_window);
      expect(m.display_name).toBe(listed.display_name);
      expect(m.apply_patch_tool_type).toBe("freeform");
      expect(m.visibility).toBe("list");
      expect(m.supported_reasoning_levels.map((l: any) => l.effort)).toEqual(["low", "medium", "high"]);
      expect(m.supported_reasoning_levels.map((l: any) => l.effort)).toContain(m.default_reasoning_level);
      expect(m.base_instructions).toContain("apply_patch");
      expect(m.truncation_policy).toEqual({ mode: "tokens", limit: 10_000 });
    }
    // Priorities order the agent's picker as the list is ordered.
    expect(body.models.map((m: any) => m.priority)).toEqual(body.models.map((_: unknown, i: number) => i + 1));
  });

  test("a key limited to some models gets only those, in both lists; the version changes with the list", async () => {
    const created = await fetch(`${h.url}/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      body: JSON.stringify({ name: "two", models: ["beta-5", "delta-m3"] }),
    });
    const k = (await created.json()) as { key: string };
    const body = (await (
      await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${k.key}` } })
    ).json()) as any;
    expect(body.models.map((m: any) => m.slug).sort()).toEqual(["beta-5", "delta-m3"]);
    expect(body.data.map((m: any) => m.id).sort()).toEqual(["beta-5", "delta-m3"]);
    const all = (await (await h.call("/v1/models")).json()) as any;
    expect(body.etag).not.toBe(all.etag);
  });

  test("the official clients' model lists are unchanged", async () => {
    const openai = new OpenAI({ apiKey: h.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
    const ids: string[] = [];
    for await (const m of openai.models.list()) ids.push(m.id);
    expect(ids.sort()).toEqual([...LISTED_IDS].sort());
    const anthropic = new Anthropic({ apiKey: h.key, baseURL: h.url, maxRetries: 0 });
    const names: string[] = [];
    for await (const m of anthropic.models.list()) names.push(m.id);
    expect(names.sort()).toEqual([...LISTED_IDS].sort());
    expect((await openai.models.retrieve("beta-5")).id).toBe("beta-5");
  });
});

describe("the messages-format agent's model picker", () => {
  const discovery = (extra: Record<string, string> = {}) =>
    h.call("/v1/models?limit=1000", {
      dialect: "messages",
      headers: { "user-agent": "claude-cli/2.1.331 (external, cli)", ...extra },
    });

  test("its discovery gets every model under an id its picker keeps (ids that name its vendor)", async () => {
    const res = await discovery();
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    const ids: string[] = body.data.map((m: any) => m.id);
    expect(ids).toHaveLength(CATALOG_IDS.length);
    for (const id of ids) expect(id).toMatch(/(claude|anthropic)/i);
    expect(ids).toContain("claude-code/gamma-3-pro");
    expect(body.data.find((m: any) => m.id === "claude-code/gamma-3-pro").display_name).toBe(
      body.models.find((m: any) => m.slug === "gamma-3-pro").display_name,
    );
  });

  test("a picked alias is the catalog model: served, metered and counted under its own id", async () => {
    const res = await h.call("/v1/messages", {
      method: "POST",
      dialect: "messages",
      body: JSON.stringify({
        model: "claude-code/gamma-3-pro",
        max_tokens: 50,
        messages: [{ role: "user", content: "hi" }],
      }),
    });
    expect(res.status).toBe(200);
    const rid = res.headers.get("request-id") ?? res.headers.get("x-request-id");
    const count = await h.call("/v1/messages/count_tokens", {
      method: "POST",
      dialect: "messages",
      body: JSON.stringify({ model: "claude-code/beta-5", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(count.status).toBe(200);
    expect(((await count.json()) as any).input_tokens).toBeGreaterThan(0);
    const one = await h.call("/v1/models/claude-code%2Fdelta-m3");
    expect(((await one.json()) as any).id).toBe("delta-m3");
    let row: any;
    for (let i = 0; i < 100 && !row; i++) {
      const usage = (await (
        await fetch(`${h.url}/admin/usage?key_id=${h.keyId}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
      ).json()) as any;
      row = usage.data.find((r: any) => r.request_id === rid);
      if (!row) await Bun.sleep(20);
    }
    expect(row.model).toBe("gamma-3-pro");
    // An alias of no catalog model is the usual 404, naming what was asked.
    const missing = await h.call("/v1/messages", {
      method: "POST",
      dialect: "messages",
      body: JSON.stringify({ model: "claude-code/nope", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error.message).toContain("claude-code/nope");
  });
});
