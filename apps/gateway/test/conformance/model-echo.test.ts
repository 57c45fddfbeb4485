/**
 * Every reply names the catalog model the client asked for — the JSON reply, `message_start`,
 * every chat chunk — through every client format × upstream protocol pair, passthrough included,
 * when the vendor answers with its own dated snapshot name. The vendor's string goes to the
 * `x-turnpike-upstream-model` header of a JSON reply.
 */
import { startSimulator, type Simulator } from "@turnpike/simulator";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_KEY, readSSE, startHarness, type Harness } from "../harness";

/** Each vendor's snapshot style (docs/protocols.md §1.4, §2.4, §3.3). */
const SNAPSHOT: Record<string, string> = {
  alpha: "-20250929",
  beta: "-2025-04-14",
  gamma: "-001",
  delta: "-2025-04-14",
};
const dated = (upstreamModel: string) => upstreamModel + SNAPSHOT[upstreamModel.split("-")[0]!]!;

let sim: Simulator;
let h: Harness;
beforeAll(async () => {
  sim = await startSimulator({ port: 0, answerModel: dated });
  // The four vendors as "real" upstreams (keys set), all served by a simulator that answers dated names.
  h = await startHarness({
    ALPHA_BASE_URL: sim.url,
    ALPHA_API_KEY: "sk-vendor",
    BETA_BASE_URL: `${sim.url}/v1`,
    BETA_API_KEY: "sk-vendor",
    GAMMA_BASE_URL: sim.url,
    GAMMA_API_KEY: "sk-vendor",
    DELTA_BASE_URL: `${sim.url}/v1`,
    DELTA_API_KEY: "sk-vendor",
  });
});
afterAll(async () => {
  await h.close();
  await sim.stop();
});

const CASES = [
  { model: "alpha-haiku-4-5", upstream: "alpha-haiku-4-5" },
  { model: "alpha-sonnet-4-6 (context-1m beta)", upstream: "alpha-sonnet-4-6" },
  { model: "beta-5", upstream: "beta-5" },
  { model: "gamma-3-flash", upstream: "gamma-3-flash" },
  { model: "delta-m3", upstream: "delta-m3" },
];

const messagesBody = (model: string, stream: boolean) =>
  JSON.stringify({ model, max_tokens: 64, stream, messages: [{ role: "user", content: "Hello" }] });
const chatBody = (model: string, stream: boolean, includeUsage = false) =>
  JSON.stringify({
    model,
    stream,
    ...(stream && includeUsage ? { stream_options: { include_usage: true } } : {}),
    messages: [{ role: "user", content: "Hello" }],
  });

describe("replies name the catalog model, not the vendor's snapshot", () => {
  for (const { model, upstream } of CASES) {
    const vendorName = dated(upstream);

    test(`${model}: messages client, JSON and stream`, async () => {
      const res = await h.call("/v1/messages", {
        method: "POST",
        dialect: "messages",
        body: messagesBody(model, false),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-turnpike-upstream-model")).toBe(vendorName);
      const text = await res.text();
      expect(JSON.parse(text).model).toBe(model);
      expect(text).not.toContain(vendorName);

      const streamed = await h.call("/v1/messages", {
        method: "POST",
        dialect: "messages",
        body: messagesBody(model, true),
      });
      expect(streamed.headers.get("x-turnpike-upstream-model")).toBe(upstream);
      const frames = await readSSE(streamed);
      const start = JSON.parse(frames.find((f) => f.event === "message_start")!.data);
      expect(start.message.model).toBe(model);
      expect(frames.map((f) => f.data).join("\n")).not.toContain(vendorName);
      expect(frames.at(-1)?.event).toBe("message_stop");
    });

    test(`${model}: chat client, JSON and stream (with and without include_usage)`, async () => {
      const res = await h.call("/v1/chat/completions", { method: "POST", body: chatBody(model, false) });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-turnpike-upstream-model")).toBe(vendorName);
      expect((await res.json()).model).toBe(model);

      for (const includeUsage of [false, true]) {
        const streamed = await h.call("/v1/chat/completions", {
          method: "POST",
          body: chatBody(model, true, includeUsage),
        });
        const chunks = (await readSSE(streamed)).filter((f) => f.data !== "[DONE]").map((f) => JSON.parse(f.data));
        expect(chunks.length).toBeGreaterThan(2);
        expect(new Set(chunks.map((c) => c.model))).toEqual(new Set([model]));
        expect(chunks.some((c) => c.usage)).toBe(includeUsage);
      }
    });
  }
});

describe("the ledger keeps the vendor's own model name", () => {
  const newest = async (n: number) => {
    const res = await fetch(`${h.url}/admin/usage?key_id=${h.keyId}&limit=${n}`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    return ((await res.json()) as { data: { model: string; upstream_model: string | null }[] }).data;
  };

  test("a JSON reply's and a passthrough stream's model string; the catalog id stays the record's model", async () => {
    await h.call("/v1/messages", { method: "POST", dialect: "messages", body: messagesBody("alpha-haiku-4-5", false) });
    await (
      await h.call("/v1/messages", { method: "POST", dialect: "messages", body: messagesBody("alpha-haiku-4-5", true) })
    ).text();
    await h.call("/v1/chat/completions", { method: "POST", body: chatBody("gamma-3-flash", false) });
    const [gamma, stream, json] = await newest(3);
    expect(json).toMatchObject({ model: "alpha-haiku-4-5", upstream_model: "alpha-haiku-4-5-20250929" });
    expect(stream).toMatchObject({ model: "alpha-haiku-4-5", upstream_model: "alpha-haiku-4-5-20250929" });
    expect(gamma).toMatchObject({ model: "gamma-3-flash", upstream_model: "gamma-3-flash-001" });
  });

  test("a translated stream's model string, from its first event that names one", async () => {
    await (
      await h.call("/v1/messages", { method: "POST", dialect: "messages", body: messagesBody("gamma-3-flash", true) })
    ).text();
    await (await h.call("/v1/chat/completions", { method: "POST", body: chatBody("alpha-haiku-4-5", true) })).text();
    await (
      await h.call("/v1/messages", { method: "POST", dialect: "messages", body: messagesBody("delta-m3", true) })
    ).text();
    const [delta, alpha, gamma] = await newest(3);
    expect(gamma).toMatchObject({ model: "gamma-3-flash", upstream_model: "gamma-3-flash-001" });
    expect(alpha).toMatchObject({ model: "alpha-haiku-4-5", upstream_model: "alpha-haiku-4-5-20250929" });
    expect(delta).toMatchObject({ model: "delta-m3", upstream_model: "delta-m3-2025-04-14" });
  });
});
