import type { ClientFormat, ClientRequest } from "../formats";
import type { GuardrailRun } from "../guardrails/run";
import type { RequestContext } from "../request/context";
import type { Dispatched } from "./attempts";
import { PROTOCOLS } from "../protocols";
import type { ContinueBy } from "../protocols/upstream-protocol";
import { continuationRequest } from "./continuation-request";
import type { Deployment, Router } from "./deployments";
import { execute, type ExecuteDeps, type Watch } from "./execute";
import { plan, type Plan, type PlanDeps } from "./plan";
import type { CatalogEntry, ServiceTier } from "../vocabulary/target";

/** What a continuation reads of the gateway: the router, the clock, and what planning and sending take. */
export interface ContinuationDeps extends PlanDeps, ExecuteDeps {
  router: Router;
  now: () => number;
}

/** One upstream going on with a cut reply: what the relay reads it with (relay/continuing-tap.ts). */
export interface Continued {
  protocol: Plan["protocol"];
  reply: Plan["reply"];
  response: Response;
  watch?: Watch | undefined;
  /** The attempt's prompt, counted (only if its upstream never says). */
  countPrompt(): number;
  /** It was handed the partial reply as a prefill (its leading whitespace may repeat what the prefill left out). */
  prefilled: boolean;
  /** The catalog row that serves it, and the tier: its part of the reply is billed at their price (metering/usage-tally.ts). */
  entry: CatalogEntry;
  serviceTier: ServiceTier | undefined;
}

/** What asks the upstreams for continuations of one request's stream: at most `max` times, each with the text the client has received. */
export interface StreamContinuer {
  readonly max: number;
  next(partial: string): Promise<Continued | undefined>;
}

/**
 * The deployments a continuation is asked of, in order: the one that was cut (a reset is often
 * transient), the model's others, then each fallback's — those whose `continuation` is on and
 * whose circuit is not open.
 */
function candidates(deps: ContinuationDeps, sent: Dispatched): Deployment[] {
  const router = deps.router;
  const now = deps.now();
  const out: Deployment[] = [];
  const add = (d: Deployment) => {
    if (d.continuation && !out.includes(d) && d.breaker.available(now)) out.push(d);
  };
  add(sent.deployment);
  for (const d of router.route(sent.deployment.model)?.deployments ?? []) add(d);
  for (const f of router.route(sent.requested)?.fallbacks ?? [])
    for (const d of router.route(f)?.deployments ?? []) add(d);
  return out;
}

/**
 * The continuer of a streamed request, or undefined where none applies: not a stream, or the
 * deployment that served it does not continue (its own `continuation: false`, or the routing
 * section's `continuation` off or no attempts allowed: deployments.ts works that out at start).
 * Each continuation is one more attempt of the request (`route.attempts`): planned like any
 * attempt (the client's request plus the partial reply, in the upstream's protocol, never passed
 * through), sent by `execute`, told to the breakers.
 */
export function streamContinuer(
  deps: ContinuationDeps,
  ctx: RequestContext,
  client: ClientRequest,
  sent: Dispatched,
  size: number,
  route: { attempts: number },
  guard?: GuardrailRun,
): StreamContinuer | undefined {
  // The deployment's `continuation` holds the routing section's too (worked out at start, deployments.ts).
  if (!sent.plan.stream || !sent.deployment.continuation) return undefined;
  const settings = deps.router.settings;
  // Made on the first cut only: a stream never cut pays for no copy of its format.
  let format: ClientFormat | undefined;
  const attempt = async (
    d: Deployment,
    partial: string,
    by: ContinueBy,
  ): Promise<Continued | "refused" | undefined> => {
    const asked: ClientRequest = Object.create(client);
    // The client's request with the partial reply as the assistant's turn (continuation-request.ts).
    asked.toPivot = (target) => {
      const pivot = client.toPivot(target);
      return { request: continuationRequest(pivot.request, partial, by), warnings: pivot.warnings };
    };
    let p: Plan;
    try {
      // A continuation is always translated: its events join the client's stream through Turnpike's encoder.
      format ??= { ...ctx.format, passthroughProtocol: undefined };
      p = await plan(deps, format, asked, d.target, size, guard);
    } catch {
      return undefined; // this upstream cannot take the request (a part its protocol cannot carry)
    }
    const t = deps.router.route(d.model)?.timeouts ?? settings.timeouts;
    d.breaker.take(deps.now());
    const began = performance.now();
    const outcome = await execute(deps, ctx, p, {
      n: ++route.attempts,
      connectMs: t.connectMs,
      firstByteMs: t.firstByteMs,
      idleMs: t.idleMs,
      deployment: d.name,
    });
    if (outcome.kind === "gone") {
      d.breaker.release();
      return undefined;
    }
    if (outcome.kind === "error") {
      d.breaker.failure(deps.now(), outcome.error.message);
      deps.logger.warn("continuation attempt failed", {
        request_id: ctx.id,
        deployment: `${d.model}@${d.name}`,
        status: outcome.status,
      });
      return outcome.status === 400 ? "refused" : undefined;
    }
    d.breaker.success(performance.now() - began);
    return {
      protocol: p.protocol,
      reply: p.reply,
      response: outcome.response,
      watch: outcome.watch,
      countPrompt: () => p.countPrompt(),
      prefilled: by === "prefill" && partial !== "",
      entry: p.target.entry,
      serviceTier: p.serviceTier,
    };
  };
  // The deployment whose stream was cut last: a cut is its failure, told to its circuit.
  let cutOn = sent.deployment;
  return {
    max: settings.continuationAttempts,
    async next(partial) {
      cutOn.breaker.failure(deps.now(), "the stream was cut after its 200");
      for (const d of candidates(deps, sent)) {
        if (ctx.request.signal.aborted) return undefined;
        const by = PROTOCOLS[d.target.entry.protocol].continueBy;
        let got = await attempt(d, partial, by);
        // Some messages vendors refuse a prefill on their newest models: asked in words instead.
        if (got === "refused" && by === "prefill") got = await attempt(d, partial, "ask");
        if (got && got !== "refused") {
          cutOn = d;
          return got;
        }
      }
      return undefined;
    },
  };
}
