import type { GuardrailRun } from "../guardrails/run";
import { GatewayError } from "@turnpike/providers";
import type { ClientRequest } from "../formats";
import type { Target } from "../protocols";
import type { Deployment, Route } from "./deployments";
import { clientGone, type RequestContext } from "../request/context";
import { execute, type Outcome } from "./execute";
import { droppedBetas, plan, type Plan } from "./plan";
import { affinityKey } from "./affinity";
import { sessionOf } from "./session-id";
import { sessionTurn } from "./session-turn";
import { LARGE_BODY_CHARS, loopTurn } from "../vocabulary/loop-turns";
import type { Catalog } from "./catalog";
import type { AffinityStore } from "./affinity";
import type { Router } from "./deployments";
import type { Logger } from "../log/logger";
import type { PlanDeps } from "./plan";
import type { ExecuteDeps } from "./execute";

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

function contextOverflow(o: Outcome): boolean {
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
function targetOf(d: Deployment, asked: Target): Target {
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
 * Whether the prompt fits a model's window. Tokens are at most bytes: only a body larger than a
 * window is counted, and only once; after an overflow every candidate is measured.
 */
class WindowFit {
  private tokens: number | undefined;
  overflow = false;

  constructor(
    private readonly deps: Pick<AttemptsDeps, "catalog">,
    private readonly size: number,
  ) {}

  /** A body smaller than the window fits at once (no promise); a larger one is counted, once. */
  fits(route: Route, p: Plan | undefined): boolean | Promise<boolean> {
    const window = this.window(route);
    if (!this.overflow && this.size < window) return true;
    if (this.tokens !== undefined || !p) {
      this.tokens ??= Math.ceil(this.size / 4);
      return this.tokens <= window;
    }
    return p.countPromptInSteps().then((tokens) => {
      this.tokens ??= tokens;
      return this.tokens <= window;
    });
  }

  /** The upstream said the prompt is over its window: only a larger window can take it. */
  overflowed(route: Route, p: Plan): void {
    this.tokens = Math.max(
      this.tokens ?? 0,
      p.countPrompt(),
      (this.deps.catalog.get(route.model)?.context_window ?? 0) + 1,
    );
    this.overflow = true;
  }

  private window(route: Route): number {
    return this.deps.catalog.get(route.model)?.context_window ?? Number.POSITIVE_INFINITY;
  }
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

/**
 * Step 6, with its retries and fallbacks: the requested model's deployments (weighted, session-
 * sticky, healthy, with room), then each fallback's, until one answers. Each attempt is planned
 * by `plan` and sent by `execute`, unchanged; a failure here is always before the first byte to
 * the client. Retryable failures (no answer, timeouts, 408/409/429/5xx/529) move on; another 4xx
 * is the answer; a prompt over the window goes to the first fallback with room for it.
 */
export async function dispatch(
  deps: AttemptsDeps,
  ctx: RequestContext,
  client: ClientRequest,
  asked: Target,
  size: number,
  guard?: GuardrailRun,
): Promise<Dispatched> {
  const router = deps.router;
  const first = router.route(asked.entry.id);
  if (!first) throw new GatewayError({ status: 500, message: `No route for ${asked.entry.id}.` });
  const { retries, retryAfterMaxS } = router.settings;
  // Stickiness matters only where there is a choice: the session's deployment, from the affinity
  // map (shared through Redis when configured), else a stable hash of the session id.
  const session =
    first.deployments.length > 1 || first.fallbacks.length > 0
      ? sessionOf(ctx.request.headers, client.body)
      : undefined;
  const placeKey = session === undefined ? undefined : affinityKey(asked.entry.id, session);
  const place = placeKey === undefined ? undefined : await deps.affinity.get(placeKey);
  const window = new WindowFit(deps, size);
  let last: Dispatched | undefined;
  let attempts = 0;
  let waitS = 0;
  // The requested model, then its fallbacks in order (ids checked at start-up); then, if every
  // circuit was open and nothing was tried, the model itself once more regardless of them.
  const fallbacks = first.fallbacks;
  let forced = false;
  for (let i = 0; i <= fallbacks.length + 1; i++) {
    const anyState = i === fallbacks.length + 1;
    if (anyState && !forced) break;
    const route: Route = i === 0 || anyState ? first : router.route(fallbacks[i - 1]!)!;
    if (window.overflow && !(await window.fits(route, undefined))) continue;
    // The deployments that failed this request (made only once one has), and the retries spent.
    let tried: Set<Deployment> | undefined;
    let retried = 0;
    // Each healthy deployment once; then, up to `retries` times, one that failed already.
    for (;;) {
      const now = deps.now();
      const tokens = Math.ceil(size / 4);
      let d = router.pick(route, now, tokens, session, tried, anyState, place?.deployment);
      const again = !d && tried !== undefined && retried < retries;
      if (again) d = router.pick(route, now, tokens, session, undefined, anyState, place?.deployment);
      if (!d) {
        for (const x of route.deployments) waitS = Math.max(waitS, x.breaker.waitSeconds(now));
        break;
      }
      if (again && last) {
        retried++;
        if (!(await waitToRetry(last.outcome.kind === "error" ? last.outcome.error : undefined, retryAfterMaxS))) {
          d.breaker.release();
          break;
        }
      }
      // A client that left while an attempt failed (or its retry waited) gets no new attempt.
      if (last && clientGone(ctx)) {
        d.breaker.release();
        return { ...last, outcome: { kind: "gone" } };
      }
      const turn = sessionTurn(client, place, d.name);
      let p: Plan;
      try {
        p = await plan(deps, ctx.format, turn.client, targetOf(d, asked), size, guard);
        if (turn.warnings.length) p.warnings = turn.warnings.concat(p.warnings);
        const dropped = droppedBetas(ctx.request.headers, p.protocol);
        if (dropped.length) p.warnings.push(...dropped);
      } catch (e) {
        d.breaker.release();
        // The first plan's refusal (a bad request) is the client's answer; a fallback's ends the search.
        if (!last) throw e;
        return last;
      }
      // Over this model's window (by the catalog): to a fallback with room, if there is one. With
      // no fallback the prompt goes to the model whatever its count, so it is not counted (a
      // passthrough's count is a translation to the pivot as well: 25-250 ms of the event loop for
      // 50,000 values); a large body is counted after a turn of the loop, its pivot a step of its own.
      if (route !== first || first.fallbacks.length > 0) {
        const fits = window.fits(route, p);
        if (!(fits === true || (fits !== false && (await fits)))) {
          d.breaker.release();
          window.overflow = true;
          break;
        }
      }
      const t = route.timeouts;
      // The count above and the upstream body's writing below are a large body's steps.
      if (size > LARGE_BODY_CHARS) await loopTurn();
      const began = performance.now();
      const outcome = await execute(deps, ctx, p, {
        n: ++attempts,
        connectMs: t.connectMs,
        firstByteMs: t.firstByteMs,
        idleMs: t.idleMs,
        deployment: d.name,
      });
      last = { plan: p, outcome, deployment: d, attempts, requested: asked.entry.id, cacheResetFrom: turn.movedFrom };
      if (outcome.kind === "gone") {
        d.breaker.release();
        return last;
      }
      if (outcome.kind === "reply" || !RETRYABLE.has(outcome.status)) {
        d.breaker.success(performance.now() - began);
        // A session's first answered turn, or its first after a move, records where it now is.
        if (placeKey !== undefined && outcome.kind === "reply" && (!place || turn.movedFrom !== undefined)) {
          deps.affinity
            .set(placeKey, { deployment: d.name, origins: turn.origins })
            .catch((e: unknown) =>
              deps.logger.error("recording a session's deployment failed", { request_id: ctx.id }, e),
            );
          if (turn.movedFrom !== undefined)
            deps.logger.warn("session moved", {
              request_id: ctx.id,
              model: asked.entry.id,
              session,
              from: turn.movedFrom,
              to: d.name,
            });
        }
        if (outcome.kind === "reply" || !contextOverflow(outcome) || first.fallbacks.length === 0) return last;
        window.overflowed(route, p);
        break;
      }
      (tried ??= new Set()).add(d);
      d.breaker.failure(deps.now(), outcome.error.message);
      deps.logger.warn("upstream attempt failed", {
        request_id: ctx.id,
        deployment: `${d.model}@${d.name}`,
        status: outcome.status,
        attempt: attempts,
      });
    }
    // Every circuit was open and nothing was tried: with nowhere else to go, the model's own
    // deployments are asked anyway rather than the client refused.
    if (i === fallbacks.length && !last && !window.overflow) forced = true;
  }
  if (last) return last;
  throw noneHealthy(asked.entry.id, waitS);
}
