import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { FORMATS } from "../formats";
import type { KeyRecord, UsageRecord } from "../storage/store";
import { admit, type Admitted } from "../limits/admit";
import type { RequestContext } from "../request/context";
import type { PipelineHooks } from "../request/events";
import { meter, meterOnce, type MeteredCall } from "./meter";
import { testContext, testDeps, type TestDeps } from "../../test/support/test-deps";
import { UsageTally } from "./usage-tally";

let t: TestDeps;
let key: KeyRecord;
let settled: number[];
let finished: { ctx: RequestContext; status: number; record: UsageRecord | undefined }[];

beforeEach(async () => {
  finished = [];
  const hooks: PipelineHooks[] = [{ onFinish: (ctx, status, record) => finished.push({ ctx, status, record }) }];
  t = await testDeps({ hooks });
  key = (await t.addKey()).record;
  settled = [];
});
afterEach(() => t.close());

function call(tally: UsageTally, extra: Partial<MeteredCall> = {}): MeteredCall {
  const entry = t.deps.catalog.get("alpha-opus-4-8")!; // $5 in, $25 out per million
  const admitted: Admitted = { limitHeaders: {}, settle: (n) => settled.push(n) };
  return {
    ctx: testContext({ format: FORMATS.chat, id: "req_meter01" }),
    key,
    target: { entry, upstream: t.deps.upstreams.get("alpha")! },
    stream: true,
    tally,
    admitted,
    countPrompt: () => 77,
    ...extra,
  };
}

const rows = () => t.store.queryUsage({ key_id: key.id });

describe("meter", () => {
  test("a record from the upstream's numbers: input includes cache, cost from the catalog's prices", async () => {
    const tally = new UsageTally();
    tally.report(
      {
        input_tokens: 1000,
        output_tokens: 200,
        cache_read_input_tokens: 300,
        cache_creation_input_tokens: 100,
        reasoning_tokens: 50,
      },
      true,
    );
    await meter(t.deps, call(tally), { status: 200, upstreamStatus: 200 });
    const [row] = await rows();
    expect(row).toMatchObject({
      request_id: "req_meter01",
      key_id: key.id,
      model: "alpha-opus-4-8",
      endpoint: "chat",
      stream: true,
      input_tokens: 1400,
      output_tokens: 200,
      cache_read_tokens: 300,
      cache_write_tokens: 100,
      reasoning_tokens: 50,
      // (1400 × 5 + 200 × 25) / 1e6
      // Each class at its price: 1000 × $5 + 300 read × $0.50 + 100 written × $6.25 + 200 out × $25, per million.
      cost_usd: 0.010775,
      status: 200,
      upstream_status: 200,
      aborted: false,
      estimated: false,
    });
    expect(row!.latency_ms).toBeGreaterThanOrEqual(0);
    expect(Date.parse(row!.created_at)).not.toBeNaN();
  });

  test("settles the limiter with input + output and adds the cost to the key's spend", async () => {
    const tally = new UsageTally();
    tally.report(
      { input_tokens: 1000, output_tokens: 200, cache_read_input_tokens: 300, cache_creation_input_tokens: 100 },
      true,
    );
    const entry = t.deps.catalog.get("alpha-opus-4-8")!;
    const admitted = (id: string) =>
      admit(t.deps, { format: FORMATS.chat }, key, entry, 400, { requestId: id, stream: true });
    await meter(t.deps, call(tally, { admitted: await admitted("req_meter01") }), { status: 200, upstreamStatus: 200 });
    expect(await t.deps.spend.spent(key.id)).toBeCloseTo(0.010775, 9);
    await meter(
      t.deps,
      { ...call(tally, { admitted: await admitted("req_meter02") }), ctx: testContext({ id: "req_meter02" }) },
      { status: 200, upstreamStatus: 200 },
    );
    expect(await t.deps.spend.spent(key.id)).toBeCloseTo(0.02155, 9);
  });

  test("hands the admission the record's tokens and cost, as recorded", async () => {
    const tally = new UsageTally();
    tally.report(
      { input_tokens: 1000, output_tokens: 200, cache_read_input_tokens: 300, cache_creation_input_tokens: 100 },
      true,
    );
    const seen: unknown[] = [];
    await meter(t.deps, call(tally, { admitted: { limitHeaders: {}, settle: (...a) => seen.push(a) } }), {
      status: 200,
      upstreamStatus: 200,
    });
    expect(seen).toEqual([[1600, 0.010775, true]]);
  });

  test("nothing final reported: the relayed text and the prompt are counted, flagged estimated", async () => {
    const tally = new UsageTally();
    const text = "The quick brown fox jumps over the lazy dog.";
    tally.relayed(text);
    await meter(t.deps, call(tally), { status: 200, upstreamStatus: 200, aborted: true });
    const [row] = await rows();
    expect(row!.input_tokens).toBe(77);
    expect(row!.output_tokens).toBe(t.deps.countText(text));
    expect(row!.output_tokens).toBeGreaterThan(0);
    expect(row!.estimated).toBe(true);
    expect(row!.aborted).toBe(true);
    expect(row!.cost_usd).toBeCloseTo((77 * 5 + row!.output_tokens * 25) / 1e6, 9);
  });

  test("input reported without a final output: the prompt is not counted", async () => {
    const tally = new UsageTally();
    tally.report({ input_tokens: 30 }, false);
    await meter(t.deps, call(tally, { countPrompt: () => 999 }), { status: 502, upstreamStatus: 0 });
    const [row] = await rows();
    expect(row!.input_tokens).toBe(30);
    expect(row!.output_tokens).toBe(0);
    expect(row!.status).toBe(502);
    expect(row!.upstream_status).toBe(0);
  });

  test("a stream continued on a fallback model: each attempt at its own model's price and tier, summed", async () => {
    const beta = t.deps.catalog.get("beta-5")!; // $1.25 in, $6.25 out per million; priority: twice
    const tally = new UsageTally();
    // The cut attempt on the call's target (alpha-opus-4-8): 1000 in, 40 out.
    tally.report({ input_tokens: 1000, output_tokens: 40 }, true);
    tally.carry(t.deps.countText, () => 0);
    // The continuation on the fallback, at the priority tier: 1200 in, 300 out.
    tally.servedBy(beta, "priority");
    tally.report({ input_tokens: 1200, output_tokens: 300 }, true);
    const seen: unknown[] = [];
    await meter(
      t.deps,
      call(tally, {
        admitted: { limitHeaders: {}, settle: (...a) => seen.push(a) },
        route: { deployment: "default", attempts: 2, requested: "alpha-opus-4-8", continuations: 1 },
      }),
      { status: 200, upstreamStatus: 200 },
    );
    const [row] = await rows();
    const cost = (1000 * 5 + 40 * 25) / 1e6 + (2 * (1200 * 1.25 + 300 * 6.25)) / 1e6;
    expect(row).toMatchObject({ model: "alpha-opus-4-8", input_tokens: 2200, output_tokens: 340, continuations: 1 });
    expect(row!.requested_model).toBeUndefined();
    expect(row!.cost_usd).toBeCloseTo(cost, 9);
    // Not the first model's price for all of it.
    expect(row!.cost_usd).not.toBeCloseTo((2200 * 5 + 340 * 25) / 1e6, 6);
    // The budget settles that sum.
    expect(seen).toEqual([[2540, row!.cost_usd, true]]);
  });

  test("onFinish receives the client's status and the very record the ledger keeps", async () => {
    const tally = new UsageTally();
    tally.report({ input_tokens: 12, output_tokens: 3 }, true);
    const c = call(tally);
    await meter(t.deps, c, { status: 200, upstreamStatus: 200 });
    expect(finished).toHaveLength(1);
    expect(finished[0]!.ctx).toBe(c.ctx);
    expect(finished[0]!.status).toBe(200);
    expect(finished[0]!.record).toEqual((await rows())[0]!);
  });
});

describe("meterOnce", () => {
  test("the first ending is recorded; later ones return the same promise and record nothing", async () => {
    const tally = new UsageTally();
    tally.report({ input_tokens: 12, output_tokens: 3 }, true);
    const finish = meterOnce(t.deps, call(tally));
    const first = finish({ status: 200, upstreamStatus: 200 });
    const second = finish({ status: 499, upstreamStatus: 0, aborted: true });
    expect(second).toBe(first);
    await first;
    const all = await rows();
    expect(all).toHaveLength(1);
    expect(all[0]!.status).toBe(200);
    expect(all[0]!.aborted).toBe(false);
    expect(settled).toEqual([15]);
    expect(finished).toHaveLength(1);
  });
});
