import { GatewayError } from "@turnpike/providers";
import type { CatalogEntry } from "../vocabulary/target";
import { worstCaseUsd, worstInputTokens } from "./worst-case";
import { type BudgetCheck, nextMonthStart, type Reserved } from "./spend-store";
import { teamSpendId } from "../storage/spend-ids";
import type { BucketCheck } from "./limiter-store";
import type { Admission } from "../vocabulary/admission";
import type { KeyRecord } from "../storage/store";
import type { RequestContext } from "../request/context";
import { HEADER } from "../http/headers";
import type { Catalog } from "../dispatch/catalog";
import type { InflightBook } from "./inflight";
import type { LimiterStore } from "./limiter-store";
import type { SpendStore } from "./spend-store";
import type { Logger } from "../log/logger";

/** What this step needs of the gateway (wiring/deps.ts `GatewayDeps` is one). */
export interface AdmitDeps {
  catalog: Catalog;
  /** Requests admitted and not yet recorded, where other instances see them (PostgreSQL only). */
  inflight?: InflightBook;
  limiter: LimiterStore;
  spend: SpendStore;
  logger: Logger;
  now: () => number;
}

/** A request let in: the limit headers its reply carries, and how to settle what it used. */
export interface Admitted {
  limitHeaders: Record<string, string>;
  /**
   * Charges the real token count against the buckets that admitted the estimate, and replaces
   * the budget's reservation by the real cost. `recorded`: a usage record was made (it takes the
   * request out of the shared book of requests in flight when it lands, if its entry was written
   * at all); otherwise the entry is deleted here. At most once.
   */
  settle(actualTokens: number, actualUsd?: number, recorded?: boolean): void;
  /**
   * The budget reservation (USD) held in the shared spend store (Redis), which outlives this
   * process; 0 when none is, or it is held in this process's memory (gone with it).
   */
  readonly sharedReserveUsd?: number;
}

/** What admission needs to know of a request that will be billed (count-tokens calls are not). */
export interface Billable {
  requestId: string;
  stream: boolean;
  /** The output cap the body asks for, if any. */
  outputCap?: number;
  /** An embeddings call: the model's window bounds each input, not the body (limits/worst-case.ts). */
  embeddings?: boolean;
  /** The characters its input is read from, when more than its body's (a stored conversation it continues). */
  inputChars?: number;
  /**
   * `false`: not written to the shared book of requests in flight (a batch line sent to an
   * upstream's batch API, answered hours later: the book would bill it as lost).
   */
  book?: false;
  /** The multiplier of the row's prices at the service tier the request asks for (1: the default tier). */
  priceFactor?: number;
}

export function rateLimited(a: Admission, limitHeaders: Record<string, string>, model?: string): GatewayError {
  const what = a.limitedBy === "tokens" ? "tokens per minute" : "requests per minute";
  const limit = (a.limitedBy === "tokens" ? a.tokens : a.requests)?.limit;
  return new GatewayError({
    status: 429,
    // The chat format names the limit that refused (`requests` | `tokens`); the messages format
    // renders any 429 as `rate_limit_error`.
    type: a.limitedBy ?? "requests",
    code: "rate_limit_exceeded",
    message: `Rate limit reached for this key${model ? ` on ${model}` : ""}: ${limit} ${what}. Retry after ${a.retryAfterS} s.`,
    headers: {
      ...limitHeaders,
      [HEADER.retryAfter]: String(a.retryAfterS),
      [HEADER.retryAfterMs]: String(a.retryAfterS * 1000),
    },
  });
}

/**
 * A request whose estimated input alone is more than a tokens-per-minute limit can never be
 * admitted, however long it waits: refused at once, saying why, and told not to retry (a
 * retry-after would be a lie — the bucket never holds that much).
 */
function neverFits(estimate: number, tpm: number, model?: string): GatewayError {
  return new GatewayError({
    status: 429,
    type: "tokens",
    code: "rate_limit_exceeded",
    message: `This request's input (about ${estimate} tokens, estimated at 4 characters a token) is more than this key's limit of ${tpm} tokens per minute${model ? ` on ${model}` : ""}; it cannot be admitted. Send a shorter request or raise the key's tpm.`,
    headers: { [HEADER.shouldRetry]: "false" },
  });
}

/**
 * A spent monthly budget: not a rate limit (waiting a minute will not help), so its own error —
 * a 402 `billing_error`, which the chat format renders as its 429 `insufficient_quota` — with
 * `x-should-retry: false` so that clients do not retry in vain (docs/protocols.md §4.8).
 */
function budgetExhausted(
  budget: number,
  resetsAt: string,
  whose = "This key's",
  room?: { left: number; worst: number },
): GatewayError {
  // Room left, but less than this request's worst case: said so, with what would make it fit.
  const why =
    room && room.left > 0
      ? `has $${dollars(room.left)} left (less what requests in flight hold), less than this request's worst case of $${dollars(room.worst)} (its input at one token a character and its output cap at the model's prices): ask for fewer output tokens, or wait until it resets at ${resetsAt}.`
      : `is spent; it resets at ${resetsAt}.`;
  return new GatewayError({
    status: 402,
    type: "billing_error",
    code: "insufficient_quota",
    message: `${whose} monthly budget of $${budget} ${why}`,
    headers: { [HEADER.shouldRetry]: "false" },
  });
}

/** Dollars to a ten-thousandth of a cent, rounded down, without float noise or exponents (3e-7 → "0"). */
const dollars = (usd: number) => (Math.floor(usd * 1_000_000 + 1e-6) / 1_000_000).toFixed(6).replace(/\.?0+$/, "");

/** A budget that is not one: spend counted under an id with no cap of its own. */
const NO_CAP = Number.MAX_SAFE_INTEGER;

/** The ids a key's spend counts under: its own, and its team's (one counter per team, not a sum over its keys). */
function spendIds(key: KeyRecord): string[] {
  return key.team_id ? [key.id, teamSpendId(key.team_id)] : [key.id];
}

const NO_BUDGETS: readonly BudgetCheck[] = Object.freeze([]);

/**
 * What a request of this key is held against: nothing when neither the key nor its team has a
 * budget; else one check per id of {@link spendIds}, in its order, so that the reservation,
 * its settlement and the book of requests in flight all name the same ids (the one without a
 * budget with no cap). Key and team are held in one atomic step, so two keys of one team racing
 * for its last dollars overspend it by at most one reservation, as one key does its own.
 */
export function budgetChecks(key: KeyRecord): readonly BudgetCheck[] {
  const teamBudget = key.team?.budget_usd ?? null;
  if (key.budget_usd === null && teamBudget === null) return NO_BUDGETS;
  const checks: BudgetCheck[] = [{ id: key.id, budget: key.budget_usd ?? NO_CAP }];
  if (key.team_id) checks.push({ id: teamSpendId(key.team_id), budget: teamBudget ?? NO_CAP });
  return checks;
}

/** The refusal of the budget at `index` of {@link budgetChecks}: the key's (0) or its team's (1). */
export function budgetRefusal(
  checks: readonly BudgetCheck[],
  held: Reserved,
  key: KeyRecord,
  now: number,
  worst: number,
): GatewayError {
  const check = checks[held.refusedBy] ?? checks[0];
  return budgetExhausted(
    check?.budget ?? 0,
    nextMonthStart(now),
    check && check.id !== key.id ? "This key's team's" : "This key's",
    held.left === undefined ? undefined : { left: held.left, worst },
  );
}

/** A key's own bucket check (most keys have no per-model limits): made once per key record, not per request. */
const ownChecks = new WeakMap<KeyRecord, BucketCheck[]>();

function bucketChecks(key: KeyRecord, entry: CatalogEntry): BucketCheck[] {
  const perModel = key.model_limits?.[entry.id];
  if (perModel)
    return [
      { bucket: key.id, limits: key },
      { bucket: `${key.id}|${entry.id}`, limits: { rpm: perModel.rpm ?? null, tpm: perModel.tpm ?? null } },
    ];
  let own = ownChecks.get(key);
  if (!own) {
    own = [{ bucket: key.id, limits: key }];
    ownChecks.set(key, own);
  }
  return own;
}

/**
 * Step 4: the key's and its team's monthly budgets (their own error), then its limits and the model's. The input
 * is estimated up front at ~4 characters a token; {@link Admitted.settle} corrects it with the
 * real count. A billable request's worst-case cost is reserved against its budgets in the same
 * step that checks them, and written to the shared book of requests in flight.
 */
export async function admit(...args: Parameters<typeof admitNow>): Promise<Admitted> {
  return admitNow(...args);
}

/**
 * {@link admit}, at once where nothing must be waited for — a key and team without a budget, and
 * limits held in this process (the embedded gateway's every request): no promise, no async frame.
 */
export function admitNow(
  deps: AdmitDeps,
  ctx: Pick<RequestContext, "format">,
  key: KeyRecord,
  entry: CatalogEntry,
  bodySize: number,
  billable?: Billable,
): Admitted | Promise<Admitted> {
  const estimate = Math.ceil(bodySize / 4);
  const checks = bucketChecks(key, entry);
  const budgets = budgetChecks(key);
  // The worst case is held against the budgets until the request is settled (docs/design.md, step
  // 4 "admit"); a key and team without a budget hold nothing, so it is not worked out for them.
  const reserve =
    billable && budgets.length > 0
      ? worstCaseUsd(
          entry,
          worstInputTokens(entry, billable.inputChars ?? bodySize, billable.embeddings),
          billable.outputCap,
          billable.priceFactor,
        )
      : 0;
  if (budgets.length > 0 || !deps.limiter.admitNow)
    return admitWaiting(deps, ctx, key, entry, estimate, reserve, checks, budgets, billable);
  fits(key, entry, checks, estimate);
  const admissions = deps.limiter.admitNow(checks, estimate);
  return admitted(deps, ctx, key, entry, estimate, reserve, undefined, checks, admissions, billable);
}

/** Admission through the shared stores: the budgets' reservation first, then the buckets. */
async function admitWaiting(
  deps: AdmitDeps,
  ctx: Pick<RequestContext, "format">,
  key: KeyRecord,
  entry: CatalogEntry,
  estimate: number,
  reserve: number,
  checks: BucketCheck[],
  budgets: readonly BudgetCheck[],
  billable: Billable | undefined,
): Promise<Admitted> {
  const held = budgets.length ? await deps.spend.reserve(budgets, reserve) : undefined;
  if (held && held.refusedBy !== -1) throw budgetRefusal(budgets, held, key, deps.now(), reserve);
  let admissions: Admission[];
  try {
    fits(key, entry, checks, estimate);
    // All buckets at once: a request the model's limit refuses takes nothing from the key's.
    admissions = await deps.limiter.admit(checks, estimate);
  } catch (e) {
    release(deps, key, reserve, held);
    throw e;
  }
  return admitted(deps, ctx, key, entry, estimate, reserve, held, checks, admissions, billable);
}

/** A request whose estimated input alone is over a tokens-per-minute limit is refused at once. */
function fits(key: KeyRecord, entry: CatalogEntry, checks: readonly BucketCheck[], estimate: number): void {
  if (key.tpm !== null && estimate > key.tpm) throw neverFits(estimate, key.tpm);
  const perModel = checks.length > 1 ? checks[1]!.limits : undefined;
  if (perModel?.tpm != null && estimate > perModel.tpm) throw neverFits(estimate, perModel.tpm, entry.id);
}

/** Gives back a budget reservation of a request refused after it was made. */
function release(deps: AdmitDeps, key: KeyRecord, reserve: number, held: Held | undefined): void {
  if (held)
    deps.spend
      .settle(spendIds(key), reserve, 0, held.shared)
      .catch((e) => deps.logger.error("budget release failed", { key_id: key.id }, e));
}

type Held = Awaited<ReturnType<AdmitDeps["spend"]["reserve"]>>;

/** The buckets' answer: a 429 (the reservation given back), or the request let in and written to the book. */
function admitted(
  deps: AdmitDeps,
  ctx: Pick<RequestContext, "format">,
  key: KeyRecord,
  entry: CatalogEntry,
  estimate: number,
  reserve: number,
  held: Held | undefined,
  checks: BucketCheck[],
  [admission, modelAdmission]: Admission[],
  billable: Billable | undefined,
): Admitted {
  try {
    if (!admission) throw new GatewayError({ status: 500, message: "The limiter answered no admission." });
    if (!admission.ok) throw rateLimited(admission, ctx.format.limitHeaders(admission, deps.now()));
    if (modelAdmission && !modelAdmission.ok)
      throw rateLimited(modelAdmission, ctx.format.limitHeaders(modelAdmission, deps.now()), entry.id);
  } catch (e) {
    release(deps, key, reserve, held);
    throw e;
  }
  const book = billable && billable.book !== false && deps.inflight;
  if (billable && book) {
    book.open({
      request_id: billable.requestId,
      key_id: key.id,
      model: entry.id,
      endpoint: billable.embeddings ? "embeddings" : ctx.format.endpoint,
      stream: billable.stream,
      input_tokens: estimate,
      cost_usd: deps.catalog.cost(entry, {
        input_tokens: estimate,
        output_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      }),
      // Only a reservation held in Redis is released there by whoever bills it; the spend counts
      // under the key and its team either way.
      reserved_usd: held?.shared ? reserve : 0,
      budgets: spendIds(key),
      created_at: new Date(deps.now()).toISOString(),
    });
  }
  return new LetIn(
    deps,
    key,
    checks,
    estimate,
    reserve,
    held,
    book ? billable : undefined,
    ctx.format.limitHeaders(admission, deps.now()),
  );
}

/**
 * The admission of a request admitted earlier, elsewhere (a batch line sent to an upstream's
 * batch API by another instance or before a restart, its answer now replayed): nothing is checked
 * or taken again — the upstream already ran it — and its settlement adds what it cost, and gives
 * back `sharedReserveUsd`, what its admission held in the shared spend store (kept with the line).
 */
export function admittedBefore(deps: AdmitDeps, key: KeyRecord, sharedReserveUsd = 0): Admitted {
  const held = sharedReserveUsd > 0 ? { refusedBy: -1, shared: true } : undefined;
  return new LetIn(deps, key, [], 0, sharedReserveUsd, held, undefined, {});
}

/** One admitted request: its limit headers, and its settlement (a class: one object, no closure per request). */
class LetIn implements Admitted {
  private settled = false;

  constructor(
    private readonly deps: AdmitDeps,
    private readonly key: KeyRecord,
    private readonly checks: BucketCheck[],
    private readonly estimate: number,
    private readonly reserve: number,
    private readonly held: Held | undefined,
    /** Set when the request was written to the book of requests in flight. */
    private readonly booked: Billable | undefined,
    readonly limitHeaders: Record<string, string>,
  ) {}

  get sharedReserveUsd(): number {
    return this.held?.shared ? this.reserve : 0;
  }

  settle(actual: number, actualUsd = 0, recorded = false): void {
    if (this.settled) return;
    this.settled = true;
    const { deps, key, held } = this;
    if (deps.limiter.settleNow) deps.limiter.settleNow(this.checks, this.estimate, actual);
    else
      deps.limiter
        .settle(this.checks, this.estimate, actual)
        .catch((e) => deps.logger.error("limiter settle failed", { key_id: key.id }, e));
    const spent = held
      ? deps.spend.settle(spendIds(key), this.reserve, actualUsd, held.shared)
      : actualUsd > 0
        ? deps.spend.settle(spendIds(key), 0, actualUsd, false)
        : undefined;
    spent?.catch((e) => deps.logger.error("spend update failed", { key_id: key.id }, e));
    if (this.booked) deps.inflight?.end(this.booked.requestId, recorded);
  }
}
