/**
 * `GET /metrics` after a known set of requests: every counter matches the requests made, and the
 * token and cost totals match the usage records the ledger kept for them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_KEY, startHarness, type Harness } from "../harness";
import { parsePrometheus, sampleValue, samplesOf, type Sample } from "./prom-text";

const METRICS_KEY = "metrics-secret-0123456789";
let h: Harness;

beforeAll(async () => {
  // delta points at a port nothing listens on (with a key set, so it is not simulated): unreachable.
  h = await startHarness({
    TURNPIKE_METRICS_KEY: METRICS_KEY,
    DELTA_API_KEY: "sk-fake-delta-0123456789",
    DELTA_BASE_URL: "http://127.0.0.1:9/v1",
  });
});
afterAll(() => h.close());

/** The sum of a metric's samples whose labels include all of `labels` (the others summed over). */
function sumOf(m: Sample[], name: string, labels: Record<string, string>): number {
  return samplesOf(m, name)
    .filter((s) => Object.entries(labels).every(([k, v]) => (s.labels[k] ?? "") === v))
    .reduce((n, s) => n + s.value, 0);
}

async function scrape(): Promise<Sample[]> {
  const res = await fetch(`${h.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_KEY}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  return parsePrometheus(await res.text());
}

const chat = (model: string, content = "hi", extra: Record<string, unknown> = {}, key?: string) =>
  h.call("/v1/chat/completions", {
    method: "POST",
    ...(key ? { headers: { authorization: `Bearer ${key}` } } : {}),
    body: JSON.stringify({ model, messages: [{ role: "user", content }], ...extra }),
  });
const messages = (model: string, content = "hi") =>
  h.call("/v1/messages", {
    method: "POST",
    dialect: "messages",
    body: JSON.stringify({ model, max_tokens: 64, messages: [{ role: "user", content }] }),
  });

interface UsageRow {
  key_id: string;
  model: string;
  endpoint: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
}

describe("GET /metrics", () => {
  test("behind TURNPIKE_METRICS_KEY: refused without it, in the chat error shape", async () => {
    const res = await fetch(`${h.url}/metrics`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("TURNPIKE_METRICS_KEY");
    expect((await fetch(`${h.url}/metrics`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
  });

  test("after a known set of requests, every counter matches them exactly", async () => {
    const limited = (await (
      await fetch(`${h.url}/admin/keys`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "one a minute", rpm: 1 }),
      })
    ).json()) as { key: string; id: string };
    const statuses = [
      (await chat("beta-5.5")).status,
      (await chat("beta-5.5", "again")).status,
      await chat("beta-5.5", "a stream", { stream: true }).then(async (r) => (await r.text(), r.status)),
      (await messages("alpha-haiku-4-5")).status,
      (await messages("alpha-haiku-4-5", "fail [sim error=529]")).status,
      await chat("beta-5.5", "breaks [sim midstream_error]", { stream: true }).then(
        async (r) => (await r.text(), r.status),
      ),
      (await chat("delta-m3")).status,
      (await chat("beta-5.5", "hi", {}, "sk-tp-not-a-key-0123456789")).status,
      (await chat("no-such-model")).status,
      (await chat("beta-5.5", "hi", {}, limited.key)).status,
      (await chat("beta-5.5", "hi", {}, limited.key)).status,
      (
        await h.call("/v1/messages/count_tokens", {
          method: "POST",
          dialect: "messages",
          body: JSON.stringify({ model: "alpha-haiku-4-5", messages: [{ role: "user", content: "hi" }] }),
        })
      ).status,
    ];
    expect(statuses).toEqual([200, 200, 200, 200, 529, 200, 502, 401, 404, 200, 429, 200]);
    const m = await scrape();

    const requests = Object.fromEntries(
      samplesOf(m, "turnpike_requests_total").map((s) => [
        `${s.labels.turnpike_endpoint} ${s.labels.gen_ai_request_model} ${s.labels.http_response_status_code}`,
        s.value,
      ]),
    );
    expect(requests).toEqual({
      "chat beta-5.5 200": 4,
      "messages alpha-haiku-4-5 200": 1,
      "messages alpha-haiku-4-5 529": 1,
      // The broken stream: the client saw it end in an in-band error, recorded as a 502.
      "chat beta-5.5 502": 1,
      "chat delta-m3 502": 1,
      // Refused before a model was chosen: no model label.
      "chat  401": 1,
      "chat  404": 1,
      "chat  429": 1,
      "count_tokens  200": 1,
    });
    const errors = Object.fromEntries(
      samplesOf(m, "turnpike_upstream_errors_total").map((s) => [
        `${s.labels.gen_ai_provider_name} ${s.labels.turnpike_vendor} ${s.labels.error_type}`,
        s.value,
      ]),
    );
    // Simulated vendors and a self-hosted one have no well-known provider name: their own id stands in.
    expect(errors).toEqual({ "alpha alpha server": 1, "beta beta malformed": 1, "delta delta unreachable": 1 });
    expect(samplesOf(m, "turnpike_rate_limited_total").map((s) => [s.labels, s.value])).toEqual([
      [{ turnpike_endpoint: "chat", turnpike_key_id: limited.id }, 1],
    ]);
    expect(sampleValue(m, "turnpike_open_streams")).toBe(0);
    expect(sampleValue(m, "turnpike_ledger_pending")).toBe(0);
    // Both streams were timed to their first piece; only the whole one gives a pace per token.
    const beta = {
      gen_ai_operation_name: "chat",
      gen_ai_provider_name: "beta",
      gen_ai_request_model: "beta-5.5",
      gen_ai_response_model: "beta-5.5",
      turnpike_endpoint: "chat",
    };
    expect(sumOf(m, "gen_ai_server_time_to_first_token_seconds_count", beta)).toBe(2);
    expect(sumOf(m, "gen_ai_server_time_per_output_token_seconds_count", beta)).toBe(1);
    // Latency and first token by the deployment that served (the usage record's).
    const served = { ...beta, turnpike_deployment: "beta" };
    expect(sumOf(m, "gen_ai_server_time_to_first_token_seconds_count", served)).toBe(2);
    expect(sumOf(m, "gen_ai_server_request_duration_seconds_count", { ...served, error_type: "" })).toBe(4);
    // Four whole replies, and the broken stream, its error.type the 502 the client saw.
    expect(sumOf(m, "gen_ai_server_request_duration_seconds_count", { ...beta, error_type: "" })).toBe(4);
    expect(sumOf(m, "gen_ai_server_request_duration_seconds_count", { ...beta, error_type: "502" })).toBe(1);
    expect(
      sumOf(m, "gen_ai_server_request_duration_seconds_count", { gen_ai_request_model: "", turnpike_endpoint: "chat" }),
    ).toBe(3);
    const refused = samplesOf(m, "gen_ai_server_request_duration_seconds_count").filter(
      (s) => s.labels.gen_ai_request_model === "" && s.labels.turnpike_endpoint === "chat",
    );
    expect(refused.map((s) => s.labels.error_type).sort()).toEqual(["401", "404", "429"]);
    expect(sumOf(m, "gen_ai_server_request_duration_seconds_count", { gen_ai_operation_name: "count_tokens" })).toBe(1);
    // A histogram's +Inf bucket holds every observation.
    expect(sumOf(m, "gen_ai_server_request_duration_seconds_bucket", { ...beta, error_type: "", le: "+Inf" })).toBe(4);
    // The conventions' bucket boundaries (gen_ai.server.request.duration).
    const bounds = [...new Set(samplesOf(m, "gen_ai_server_request_duration_seconds_bucket").map((s) => s.labels.le))];
    expect(bounds).toEqual([
      "0.01",
      "0.02",
      "0.04",
      "0.08",
      "0.16",
      "0.32",
      "0.64",
      "1.28",
      "2.56",
      "5.12",
      "10.24",
      "20.48",
      "40.96",
      "81.92",
      "+Inf",
    ]);

    // Tokens and cost: the sums of the usage records the ledger kept.
    const rows = (
      (await (await fetch(`${h.url}/admin/usage`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json()) as {
        data: UsageRow[];
      }
    ).data;
    expect(rows.length).toBe(8);
    const vendorOf: Record<string, string> = { "beta-5.5": "beta", "alpha-haiku-4-5": "alpha", "delta-m3": "delta" };
    const tokenSums = new Map<string, { sum: number; count: number }>();
    const add = (type: string, row: UsageRow, n: number) => {
      const k = `${type} ${row.model} ${vendorOf[row.model]}`;
      const t = tokenSums.get(k) ?? { sum: 0, count: 0 };
      tokenSums.set(k, { sum: t.sum + n, count: t.count + 1 });
    };
    for (const r of rows) {
      add("input", r, r.input_tokens);
      add("output", r, r.output_tokens);
      if (r.cache_read_tokens) add("cache_read", r, r.cache_read_tokens);
      if (r.cache_write_tokens) add("cache_write", r, r.cache_write_tokens);
    }
    const byType = (name: string) => {
      const out: Record<string, number> = {};
      for (const s of samplesOf(m, name)) {
        const k = `${s.labels.gen_ai_token_type} ${s.labels.gen_ai_request_model} ${s.labels.gen_ai_provider_name}`;
        out[k] = (out[k] ?? 0) + s.value;
      }
      return out;
    };
    const sums = byType("gen_ai_client_token_usage_sum");
    const counts = byType("gen_ai_client_token_usage_count");
    expect(
      samplesOf(m, "gen_ai_client_token_usage_count").every((s) => s.labels.gen_ai_operation_name === "chat"),
    ).toBe(true);
    expect(sums).toEqual(Object.fromEntries([...tokenSums].map(([k, v]) => [k, v.sum])));
    expect(counts).toEqual(Object.fromEntries([...tokenSums].map(([k, v]) => [k, v.count])));
    expect(sums["output beta-5.5 beta"]).toBeGreaterThan(0);

    const costs = samplesOf(m, "turnpike_cost_usd_total");
    const expected = new Map<string, number>();
    for (const r of rows)
      if (r.cost_usd > 0)
        expected.set(`${r.model} ${r.key_id}`, (expected.get(`${r.model} ${r.key_id}`) ?? 0) + r.cost_usd);
    expect(costs.map((s) => `${s.labels.gen_ai_request_model} ${s.labels.turnpike_key_id}`).sort()).toEqual(
      [...expected.keys()].sort(),
    );
    expect(expected.has(`beta-5.5 ${limited.id}`)).toBe(true);
    for (const s of costs)
      expect(s.value).toBeCloseTo(expected.get(`${s.labels.gen_ai_request_model} ${s.labels.turnpike_key_id}`)!, 12);
  });

  test("cost by team, each budget's limit and spend, and a spent budget counted by the status the client saw", async () => {
    const post = async (path: string, body: unknown) =>
      (await (
        await fetch(`${h.url}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        })
      ).json()) as { id: string; key: string };
    const team = await post("/admin/teams", { name: "metered", budget_usd: 50 });
    const k = await post("/admin/keys", { name: "tiny budget", team_id: team.id, budget_usd: 0.001 });
    // A call whose worst case fits the budget (a small output cap) is let in.
    expect((await chat("beta-5.5", "hi", { max_tokens: 5 }, k.key)).status).toBe(200);
    // One whose worst case (no cap: the model's own) does not fit what is left is refused: a chat
    // client sees a 429 (the messages format's would be its 402).
    expect((await chat("beta-5.5", "hi", {}, k.key)).status).toBe(429);
    const m = await scrape();
    const spent = (
      (await (
        await fetch(`${h.url}/admin/usage?key_id=${k.id}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
      ).json()) as { data: UsageRow[] }
    ).data.reduce((n, r) => n + r.cost_usd, 0);
    expect(spent).toBeGreaterThan(0);
    expect(sumOf(m, "turnpike_cost_usd_total", { turnpike_key_id: k.id, turnpike_team: team.id })).toBeCloseTo(
      spent,
      12,
    );
    // Every other cost is under its key's team (the harness's key is in the default team).
    expect(samplesOf(m, "turnpike_cost_usd_total").every((s) => s.labels.turnpike_team !== "")).toBe(true);
    const budget = (name: string, scope: string, keyId: string, teamId: string) =>
      samplesOf(m, name).filter(
        (s) =>
          s.labels.turnpike_budget_scope === scope &&
          (s.labels.turnpike_key_id ?? "") === keyId &&
          s.labels.turnpike_team === teamId,
      );
    expect(budget("turnpike_budget_limit_usd", "key", k.id, team.id).map((s) => s.value)).toEqual([0.001]);
    expect(budget("turnpike_budget_spent_usd", "key", k.id, team.id)[0]?.value).toBeCloseTo(spent, 12);
    expect(budget("turnpike_budget_limit_usd", "team", "", team.id).map((s) => s.value)).toEqual([50]);
    expect(budget("turnpike_budget_spent_usd", "team", "", team.id)[0]?.value).toBeCloseTo(spent, 12);
    // Keys without a budget have no budget series.
    expect(samplesOf(m, "turnpike_budget_limit_usd").length).toBe(2);
    // The refusal: counted as the 429 the client saw, never as a 402.
    const statuses = samplesOf(m, "turnpike_requests_total").map((s) => s.labels.http_response_status_code);
    expect(statuses).not.toContain("402");
    // Refused before an upstream was chosen (no model label): the first test's rate-limited one and this one.
    expect(sumOf(m, "turnpike_requests_total", { turnpike_endpoint: "chat", http_response_status_code: "429" })).toBe(
      2,
    );
  });

  test("an open stream is counted while it flows, and no longer once it ends", async () => {
    const res = await chat("beta-5.5", "slow [sim chunks=6 latency=250]", { stream: true });
    const reader = res.body!.getReader();
    await reader.read();
    expect(sampleValue(await scrape(), "turnpike_open_streams")).toBe(1);
    while (!(await reader.read()).done) {}
    expect(sampleValue(await scrape(), "turnpike_open_streams")).toBe(0);
  });

  test("the runtime's own metrics are there too, the heap in use never more than the heap's size", async () => {
    const hold: string[] = [];
    for (let i = 0; i < 5; i++) {
      // Allocate between scrapes, so that a figure cached from the last collection would fall behind.
      for (let j = 0; j < 20_000; j++) hold.push(`${i}-${j}`.repeat(4));
      const m = await scrape();
      expect(sampleValue(m, "process_resident_memory_bytes")).toBeGreaterThan(0);
      const used = sampleValue(m, "nodejs_heap_size_used_bytes")!;
      expect(used).toBeGreaterThan(0);
      expect(used).toBeLessThanOrEqual(sampleValue(m, "nodejs_heap_size_total_bytes")!);
    }
    expect(hold.length).toBe(100_000);
  });
});

describe("the breaker seam", () => {
  test("each registered deployment's breaker state, read at scrape time", async () => {
    let state: "closed" | "open" = "closed";
    h.gw.deps.metrics.watchBreakers(() => [{ deployment: "beta-eu", model: "beta-5.5", state }]);
    const read = async () =>
      Object.fromEntries(
        samplesOf(await scrape(), "turnpike_deployment_breaker_state").map((s) => [
          s.labels.turnpike_breaker_state,
          s.value,
        ]),
      );
    expect(await read()).toEqual({ closed: 1, half_open: 0, open: 0 });
    state = "open";
    expect(await read()).toEqual({ closed: 0, half_open: 0, open: 1 });
  });
});
