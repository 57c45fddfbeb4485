import { GatewayError } from "@turnpike/providers";
import type { ClientFormat } from "../formats/client-format";
import { budgetChecks, budgetRefusal, rateLimited } from "./admit";
import type { KeyRecord } from "../storage/store";
import type { LimiterStore } from "./limiter-store";
import type { SpendStore } from "./spend-store";

/** What this step needs of the gateway (wiring/deps.ts `GatewayDeps` is one). */
export interface AdmitReadDeps {
  limiter: LimiterStore;
  spend: SpendStore;
  now: () => number;
}

/**
 * A call that reads what a key stored and generates nothing (`GET`/`DELETE /v1/responses/{id}`,
 * its `input_items`): one request from the key's `rpm`, no tokens, and no budget (it costs
 * nothing). Counted before the lookup, so probing ids costs requests too. Returns the limit
 * headers its reply carries; a spent rpm is the same 429 an inference call gets.
 */
export async function admitRead(
  deps: Pick<AdmitReadDeps, "limiter" | "now">,
  format: ClientFormat,
  key: KeyRecord,
): Promise<Record<string, string>> {
  const [admission] = await deps.limiter.admit([{ bucket: key.id, limits: key }], 0);
  if (!admission) throw new GatewayError({ status: 500, message: "The limiter answered no admission." });
  const headers = format.limitHeaders(admission, deps.now());
  if (!admission.ok) throw rateLimited(admission, headers);
  return headers;
}

/**
 * An operation that costs nothing of a model but must not run for a key that may not spend (an
 * MCP request: a call, a read, a get or a list): the key's and its team's budgets first (a spent
 * one refuses it, its own 402, as an inference call is refused), then one request from the key's
 * `rpm`. Nothing is reserved (it costs nothing), so there is nothing to settle. Throws the
 * GatewayError the caller renders in its own format.
 */
export async function admitUnpriced(
  deps: Pick<AdmitReadDeps, "limiter" | "spend" | "now">,
  key: KeyRecord,
): Promise<void> {
  const budgets = budgetChecks(key);
  if (budgets.length) {
    const held = await deps.spend.reserve(budgets, 0);
    if (held.refusedBy !== -1) throw budgetRefusal(budgets, held, key, deps.now(), 0);
  }
  const [admission] = await deps.limiter.admit([{ bucket: key.id, limits: { rpm: key.rpm, tpm: null } }], 0);
  if (!admission) throw new GatewayError({ status: 500, message: "The limiter answered no admission." });
  if (!admission.ok) throw rateLimited(admission, {});
}
