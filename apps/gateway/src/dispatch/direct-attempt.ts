import type { GuardrailRun } from "../guardrails/run";
import type { ClientRequest } from "../formats";
import type { Target } from "../protocols";
import type { Deployment, Route } from "./deployments";
import { clientGone, type RequestContext } from "../request/context";
import { execute } from "./execute";
import { droppedBetas, plan, type Plan } from "./plan";
import { LARGE_BODY_CHARS, loopTurn } from "../vocabulary/loop-turns";
import { noneHealthy, RETRYABLE, targetOf, waitToRetry, type AttemptsDeps, type Dispatched } from "./attempt-rules";

/**
 * The chain of a route compiled to one direct attempt (deployments.ts `Route.direct`: one
 * deployment, no fallback). What the planned loop (attempts.ts `dispatch`) would do for such a
 * route, without what only a choice needs: no session or its place (there is nowhere to move),
 * no window count (with no fallback the prompt goes to the model whatever its count), no list
 * of the deployments tried, no fallback search. Its circuit is kept as the loop keeps it — taken,
 * told each success and failure, released — and so are `routing.retries` (the same deployment
 * again, after its retry-after) and, when its circuit is open, the one attempt made anyway
 * rather than the client refused.
 */
export async function dispatchDirect(
  deps: AttemptsDeps,
  ctx: RequestContext,
  client: ClientRequest,
  asked: Target,
  size: number,
  guard: GuardrailRun | undefined,
  route: Route,
): Promise<Dispatched> {
  const router = deps.router;
  const { retries, retryAfterMaxS } = router.settings;
  const t = route.timeouts;
  let last: Dispatched | undefined;
  let attempts = 0;
  let waitS = 0;
  // First its circuit as it stands; then, if it was open and nothing was tried, regardless of it.
  for (let anyState = false; ; anyState = true) {
    let failed = false;
    let retried = 0;
    for (;;) {
      const now = deps.now();
      // After a failure, the same deployment again only while retries remain.
      const again = failed && retried < retries;
      const d: Deployment | undefined =
        !failed || again ? router.pick(route, now, Math.ceil(size / 4), undefined, undefined, anyState) : undefined;
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
      let p: Plan;
      try {
        p = await plan(deps, ctx.format, client, targetOf(d, asked), size, guard);
        const dropped = droppedBetas(ctx.request.headers, p.protocol);
        if (dropped.length) p.warnings.push(...dropped);
      } catch (e) {
        d.breaker.release();
        // The first plan's refusal (a bad request) is the client's answer.
        if (!last) throw e;
        return last;
      }
      // The upstream body's writing below is a large body's step of its own.
      if (size > LARGE_BODY_CHARS) await loopTurn();
      const began = performance.now();
      const outcome = await execute(deps, ctx, p, {
        n: ++attempts,
        connectMs: t.connectMs,
        firstByteMs: t.firstByteMs,
        idleMs: t.idleMs,
        deployment: d.name,
      });
      last = { plan: p, outcome, deployment: d, attempts, requested: asked.entry.id, cacheResetFrom: undefined };
      if (outcome.kind === "gone") {
        d.breaker.release();
        return last;
      }
      // An answer, or a failure not worth another attempt (a prompt over the window included:
      // there is no fallback to take it), is the client's.
      if (outcome.kind === "reply" || !RETRYABLE.has(outcome.status)) {
        d.breaker.success(performance.now() - began);
        return last;
      }
      failed = true;
      d.breaker.failure(deps.now(), outcome.error.message);
      deps.logger.warn("upstream attempt failed", {
        request_id: ctx.id,
        deployment: `${d.model}@${d.name}`,
        status: outcome.status,
        attempt: attempts,
      });
    }
    if (last || anyState) break;
  }
  if (last) return last;
  throw noneHealthy(asked.entry.id, waitS);
}
