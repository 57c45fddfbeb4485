import type { Target } from "../protocols";
import type { KeyRecord, UsageRecord } from "../storage/store";
import type { Admitted } from "../limits/admit";
import type { RequestContext } from "../request/context";
import { fanout } from "../request/events";
import { type TallyAttempt, UsageTally } from "./usage-tally";
import type { TokenCounts } from "../vocabulary/usage-sink";
import { guardrailNote, type GuardrailRun } from "../guardrails/run";
import type { ServiceTier } from "../vocabulary/target";
import type { Catalog } from "../dispatch/catalog";
import type { PipelineHooks } from "../request/events";
import type { Ledger } from "./ledger";
import { nanoDollars } from "../vocabulary/money";

/** What this step needs of the gateway (wiring/deps.ts `GatewayDeps` is one). */
export interface MeterDeps {
  catalog: Catalog;
  countText: (text: string) => number;
  hooks: readonly PipelineHooks[];
  ledger: Ledger;
  now: () => number;
}

/** What the meter knows of a request that reached an upstream. */
export interface MeteredCall {
  ctx: RequestContext;
  key: KeyRecord;
  target: Target;
  stream: boolean;
  tally: UsageTally;
  admitted: Admitted;
  /** Turnpike's count of the prompt (used only if nothing reported the input). */
  countPrompt: () => number;
  /** Where it was served: the deployment, the attempts made and the catalog id asked for. */
  route?: {
    deployment: string;
    attempts: number;
    requested: string;
    cacheResetFrom?: string | undefined;
    /** How many times the stream was continued after a cut (relay/continuing-tap.ts). */
    continuations?: number;
  };
  /** The share of the catalog price billed (a batch line: 1 − the model's batch discount). */
  costFactor?: number;
  /** The request's guardrails, whose findings the record notes (docs/guardrails.md). */
  guard?: GuardrailRun | undefined;
  /** The tier the call was served at (dispatch/service-tier.ts): priced at the row's price for it. */
  serviceTier?: ServiceTier | undefined;
}

export interface Ending {
  /** The status the client saw (a stream that started: 200, or 502 if it then failed with an in-band error). */
  status: number;
  /** The upstream's HTTP status; 0 when no answer came. */
  upstreamStatus: number;
  /** The client went away before the reply ended. */
  aborted?: boolean;
  /**
   * The upstream refused or failed before any output: recorded, and billed nothing (a vendor
   * does not bill a request it refused), whatever the route or format.
   */
  unbilled?: boolean;
}

/**
 * Step 8: the usage record of one request, built from its tally: the key's token buckets and
 * monthly spend are settled with it, subscribers are told, and the promise settles when the
 * ledger has it durably. Called once per request that reached an upstream, however it ended.
 */
export function meter(deps: MeterDeps, call: MeteredCall, end: Ending): Promise<void> {
  // Unbilled: whatever the upstream said before it failed (a stream's input count) is not billed.
  const { counts, estimated, attempts } = end.unbilled
    ? new UsageTally().settle(
        () => 0,
        () => 0,
      )
    : call.tally.settle(deps.countText, call.countPrompt);
  const { entry } = call.target;
  const input = counts.input_tokens + counts.cache_read_input_tokens + counts.cache_creation_input_tokens;
  const hour = Math.min(counts.cache_creation_1h_input_tokens ?? 0, counts.cache_creation_input_tokens);
  const record: UsageRecord = {
    request_id: call.ctx.id,
    key_id: call.key.id,
    model: entry.id,
    endpoint: call.ctx.format.endpoint,
    stream: call.stream,
    input_tokens: input,
    output_tokens: counts.output_tokens,
    cache_read_tokens: counts.cache_read_input_tokens,
    cache_write_tokens: counts.cache_creation_input_tokens,
    reasoning_tokens: counts.reasoning_tokens,
    cost_usd: cost(deps.catalog, call, counts, attempts),
    // The vendor's own name where a reply said it, else the id Turnpike asked it for.
    upstream_model: call.tally.upstreamModel ?? entry.upstream_model,
    status: end.status,
    upstream_status: end.upstreamStatus,
    latency_ms: Math.round((performance.now() - call.ctx.started) * 100) / 100,
    aborted: end.aborted ?? false,
    estimated,
    created_at: new Date(deps.now()).toISOString(),
  };
  // The optional fields set where they apply (not spread from objects made for the purpose).
  // Present only when there are one-hour writes, as the stores read it back.
  if (hour > 0) record.cache_write_1h_tokens = hour;
  const route = call.route;
  if (route) {
    record.deployment = route.deployment;
    record.attempts = route.attempts;
    record.continuations = route.continuations ?? 0;
    // Present only when a fallback served: `model` is the one that served (began the reply, for a
    // continued stream: a continuation on another model is priced at its own row, not named here).
    if (route.requested !== entry.id) record.requested_model = route.requested;
    // Present only on a session's first turn after it moved to another deployment.
    if (route.cacheResetFrom) record.cache_reset_from = route.cacheResetFrom;
  }
  const found = call.guard?.summary();
  if (found) record.guardrail = guardrailNote(found);
  // The budget's reservation is replaced by the real cost; the record takes the request out of the book in flight.
  call.admitted.settle(record.input_tokens + record.output_tokens, record.cost_usd, true);
  fanout(deps.hooks).onFinish?.(call.ctx, end.status, record, () => call.tally.finishReason());
  return deps.ledger.record(record);
}

/**
 * The USD a request costs at the catalog's prices. A continued stream's attempts are each
 * priced at the row (and tier) of the model that served it — a continuation on a fallback model
 * at the fallback's price — and summed; any other request at its target's, in one sum.
 */
function cost(catalog: Catalog, call: MeteredCall, counts: TokenCounts, attempts: readonly TallyAttempt[] | undefined) {
  let usd: number;
  if (!attempts) usd = catalog.cost(call.target.entry, { ...counts, service_tier: call.serviceTier });
  else {
    usd = 0;
    for (const { counts: c, server } of attempts)
      usd += server
        ? catalog.cost(server.entry, { ...c, service_tier: server.serviceTier })
        : catalog.cost(call.target.entry, { ...c, service_tier: call.serviceTier });
    usd = nanoDollars(usd); // as one call's cost is (catalog.ts): the sum of roundings, rounded
  }
  // A batch line's share of the price.
  return call.costFactor === undefined ? usd : nanoDollars(usd * call.costFactor);
}

/** {@link meter}, at most once: the first ending of a request is the one recorded. */
export function meterOnce(deps: MeterDeps, call: MeteredCall): (end: Ending) => Promise<void> {
  let done: Promise<void> | undefined;
  return (end) => (done ??= meter(deps, call, end));
}
