import { GatewayError } from "@turnpike/providers";
import type { Target } from "../protocols";
import type { Deployment, Router } from "./deployments";
import type { Outcome, ExecuteDeps } from "./execute";
import type { Plan, PlanDeps } from "./plan";
import type { Catalog } from "./catalog";
import type { AffinityStore } from "./affinity";
import type { Logger } from "../log/logger";
import type { RequestContext } from "../request/context";

/*
 * What every attempt of a request shares, whichever chain its route was compiled to
 * (deployments.ts `Route.direct`): the planned loop over deployments and fallbacks
 * (attempts.ts) or the one deployment's direct attempt (direct-attempt.ts), both through one
 * step (attempt-run.ts); the circuit's verdict is the embeddings attempts' as well.
 */

/** What this step needs of the gateway (wiring/deps.ts `GatewayDeps` is one). */
export interface AttemptsDeps extends PlanDeps, ExecuteDeps {
  affinity: AffinityStore;
  catalog: Catalog;
  logger: Logger;
  now: () => number;
  router: Router;
}

/** What the attempts came to: the last plan and outcome, where it ran, and how many were made. */
export interface Dispatched {
  plan: Plan;
  outcome: Outcome;
  deployment: Deployment;
  attempts: number;
  /** The catalog id the client asked for (differs from the plan's when a fallback served). */
  requested: string;
  /** The deployment this request's agent session moved away from, when this turn is its first served elsewhere. */
  cacheResetFrom?: string | undefined;
}

/** Upstream statuses worth another attempt (0: no answer — refused, reset or timed out). */
export const RETRYABLE = new Set([0, 408, 409, 429, 500, 502, 503, 504, 529]);

/** An upstream's refusal of a prompt longer than the model's window, in any vendor's words. */
const TOO_LONG =
  /context.{0,20}(length|window|limit)|too long|maximum context|too many (input )?tokens|exceeds? the (maximum|context)/i;

export function contextOverflow(o: Outcome): boolean {
  return o.kind === "error" && (o.status === 400 || o.status === 413) && TOO_LONG.test(o.error.message);
}

/** The upstream's `retry-after` in seconds (or `retry-after-ms`), if its error carried one. */
function retryAfterSeconds(error: GatewayError | undefined): number | undefined {
  const h = error?.headers;
  if (!h) return undefined;
  if (h["retry-after-ms"] !== undefined && Number.isFinite(Number(h["retry-after-ms"])))
    return Number(h["retry-after-ms"]) / 1000;
  const s = Number(h["retry-after"]);
  return Number.isFinite(s) && s >= 0 ? s : undefined;
}

/** The deployment's target, with the key's own prompt-cache setting over the model's. */
export function targetOf(d: Deployment, asked: Target): Target {
  const { entry, upstream } = d.target;
  return asked.entry.prompt_cache === entry.prompt_cache || asked.entry.id !== entry.id
    ? d.target
    : { entry: { ...entry, prompt_cache: asked.entry.prompt_cache }, upstream };
}

/** All deployments of every candidate are open or full: a 503 that says when to come back. */
export function noneHealthy(model: string, waitS: number): GatewayError {
  return new GatewayError({
    status: 503,
    type: "overloaded_error",
    message: `Every deployment of ${model} is failing or at its limit; try again in ${waitS} s.`,
    headers: { "retry-after": String(Math.max(1, waitS)) },
  });
}

/**
 * Before another attempt on a deployment that failed: its upstream's retry-after, up to the cap.
 * False when it asks for longer: that wait is left to the fallbacks or the client.
 */
export async function waitToRetry(error: GatewayError | undefined, capS: number): Promise<boolean> {
  const after = retryAfterSeconds(error) ?? 0;
  if (after > capS) return false;
  if (after > 0) await Bun.sleep(after * 1000);
  return true;
}

/** An attempt's outcome as a circuit reads it: inference (execute.ts) and embeddings outcomes both are one. */
export type AttemptOutcome = { kind: "reply" } | { kind: "gone" } | { kind: "error"; error: GatewayError };

/**
 * Tells the deployment's circuit how an attempt went. A client gone is no verdict (the circuit is
 * released); an answer, or a failure not worth another attempt, is the upstream up (a success,
 * timed from `began`); a retryable failure (`status`, the upstream's, in `RETRYABLE`) is a
 * failure, and logged. True when the outcome is the client's; false when another attempt may go.
 */
export function tellBreaker(
  deps: Pick<AttemptsDeps, "now" | "logger">,
  ctx: Pick<RequestContext, "id">,
  d: Pick<Deployment, "breaker" | "model" | "name">,
  began: number,
  attempt: number,
  outcome: AttemptOutcome,
  status: number,
): boolean {
  if (outcome.kind === "gone") {
    d.breaker.release();
    return true;
  }
  if (outcome.kind === "reply" || !RETRYABLE.has(status)) {
    d.breaker.success(performance.now() - began);
    return true;
  }
  d.breaker.failure(deps.now(), outcome.error.message);
  deps.logger.warn("upstream attempt failed", {
    request_id: ctx.id,
    deployment: `${d.model}@${d.name}`,
    status,
    attempt,
  });
  return false;
}
