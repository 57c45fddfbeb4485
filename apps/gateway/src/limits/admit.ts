import { GatewayError } from "@turnpike/providers";
import type { GatewayDeps } from "../deps";
import type { CatalogEntry } from "../dispatch/catalog";
import { nextMonthStart } from "./spend-store";
import type { Admission, BucketCheck } from "./limiter-store";
import type { KeyRecord } from "../storage/store";
import type { RequestContext } from "../pipeline/context";
import { HEADER } from "../http/headers";

/** A request let in: the limit headers its reply carries, and how to settle what it used. */
export interface Admitted {
  limitHeaders: Record<string, string>;
  /** Charges the real token count against the buckets that admitted the estimate. */
  settle(actualTokens: number): void;
}

function rateLimited(a: Admission, limitHeaders: Record<string, string>, model?: string): GatewayError {
  const what = a.limitedBy === "tokens" ? "tokens per minute" : "requests per minute";
  const limit = (a.limitedBy === "tokens" ? a.tokens : a.requests)?.limit;
  return new GatewayError({
    status: 429,
    // The chat format names the limit that refused (`requests` | `tokens`); the messages format
    // renders any 429 as `rate_limit_error`.
    type: a.limitedBy ?? "requests",
    code: "rate_limit_exceeded",
    message: `Rate limit reached for this key${model ? ` on ${model}` : ""}: ${limit} ${what}. Retry after ${a.retryAfterS} s.`,
    headers: { ...limitHeaders, [HEADER.retryAfter]: String(a.retryAfterS), [HEADER.retryAfterMs]: String(a.retryAfterS * 1000) },
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
function budgetExhausted(budget: number, resetsAt: string, whose = "This key's"): GatewayError {
  return new GatewayError({
    status: 402,
    type: "billing_error",
    code: "insufficient_quota",
    message: `${whose} monthly budget of $${budget} is spent; it resets at ${resetsAt}.`,
    headers: { [HEADER.shouldRetry]: "false" },
  });
}

/**
 * Step 4: the key's monthly budget (its own error), then its limits and the model's. The input
 * is estimated up front at ~4 characters a token; {@link Admitted.settle} corrects it with the
 * real count.
 */
export async function admit(deps: GatewayDeps, ctx: Pick<RequestContext, "format">, key: KeyRecord, entry: CatalogEntry, bodySize: number): Promise<Admitted> {
  if (key.budget_usd !== null && (await deps.spend.spent(key.id)) >= key.budget_usd) throw budgetExhausted(key.budget_usd, nextMonthStart(deps.now()));
  // The team's budget caps the sum of its keys' spend, each read from the same spend store.
  const team = key.team;
  if (team && team.budget_usd !== null) {
    const members = (await deps.keys.list()).filter((k) => k.team_id === team.id);
    const spent = (await Promise.all(members.map((k) => deps.spend.spent(k.id)))).reduce((a, b) => a + b, 0);
    if (spent >= team.budget_usd) throw budgetExhausted(team.budget_usd, nextMonthStart(deps.now()), "This key's team's");
  }
  const estimate = Math.ceil(bodySize / 4);
  const perModel = key.model_limits?.[entry.id];
  if (key.tpm !== null && estimate > key.tpm) throw neverFits(estimate, key.tpm);
  if (perModel?.tpm != null && estimate > perModel.tpm) throw neverFits(estimate, perModel.tpm, entry.id);
  const checks: BucketCheck[] = [{ bucket: key.id, limits: key }];
  if (perModel) checks.push({ bucket: `${key.id}|${entry.id}`, limits: { rpm: perModel.rpm ?? null, tpm: perModel.tpm ?? null } });
  // All buckets at once: a request the model's limit refuses takes nothing from the key's.
  const [admission, modelAdmission] = await deps.limiter.admit(checks, estimate);
  if (!admission) throw new GatewayError({ status: 500, message: "The limiter answered no admission." });
  if (!admission.ok) throw rateLimited(admission, ctx.format.limitHeaders(admission, deps.now()));
  if (modelAdmission && !modelAdmission.ok) throw rateLimited(modelAdmission, ctx.format.limitHeaders(modelAdmission, deps.now()), entry.id);
  return {
    limitHeaders: ctx.format.limitHeaders(admission, deps.now()),
    settle(actual) {
      deps.limiter.settle(checks, estimate, actual).catch((e) => deps.logger.error("limiter settle failed", { key_id: key.id }, e));
    },
  };
}
