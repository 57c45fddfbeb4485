import type { GuardrailRun } from "../guardrails/run";
import { GatewayError } from "@turnpike/providers";
import type { ClientRequest } from "../formats";
import type { Target } from "../protocols";
import type { Deployment, Route } from "./deployments";
import { clientGone, type RequestContext } from "../request/context";
import { execute } from "./execute";
import { droppedBetas, plan, type Plan } from "./plan";
import { affinityKey } from "./affinity";
import { sessionOf } from "./session-id";
import { sessionTurn } from "./session-turn";
import { LARGE_BODY_CHARS, loopTurn } from "../vocabulary/loop-turns";
import {
  contextOverflow,
  noneHealthy,
  RETRYABLE,
  targetOf,
  waitToRetry,
  type AttemptsDeps,
  type Dispatched,
} from "./attempt-rules";
import { dispatchDirect } from "./direct-attempt";

export { noneHealthy, RETRYABLE, waitToRetry, type AttemptsDeps, type Dispatched } from "./attempt-rules";

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
 * Step 6, with its retries and fallbacks: the requested model's deployments (weighted, session-
 * sticky, healthy, with room), then each fallback's, until one answers. Each attempt is planned
 * by `plan` and sent by `execute`, unchanged; a failure here is always before the first byte to
 * the client. Retryable failures (no answer, timeouts, 408/409/429/5xx/529) move on; another 4xx
 * is the answer; a prompt over the window goes to the first fallback with room for it.
 */
export function dispatch(
  deps: AttemptsDeps,
  ctx: RequestContext,
  client: ClientRequest,
  asked: Target,
  size: number,
  guard?: GuardrailRun,
): Promise<Dispatched> {
  const first = deps.router.route(asked.entry.id);
  if (!first) return Promise.reject(new GatewayError({ status: 500, message: `No route for ${asked.entry.id}.` }));
  // The chain the route was compiled to at start (deployments.ts `Route.direct`): one deployment
  // and no fallback is one direct attempt; any choice is the planned loop below.
  return first.direct
    ? dispatchDirect(deps, ctx, client, asked, size, guard, first)
    : dispatchPlanned(deps, ctx, client, asked, size, guard, first);
}

/** The planned loop: the route's deployments, then each fallback's (see {@link dispatch}). */
async function dispatchPlanned(
  deps: AttemptsDeps,
  ctx: RequestContext,
  client: ClientRequest,
  asked: Target,
  size: number,
  guard: GuardrailRun | undefined,
  first: Route,
): Promise<Dispatched> {
  const router = deps.router;
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
