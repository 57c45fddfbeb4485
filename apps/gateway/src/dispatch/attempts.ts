import type { GuardrailRun } from "../guardrails/run";
import { GatewayError } from "@turnpike/providers";
import type { ClientRequest } from "../formats";
import type { Target } from "../protocols";
import type { Deployment, Route } from "./deployments";
import type { RequestContext } from "../request/context";
import { affinityKey } from "./affinity";
import { sessionOf } from "./session-id";
import { sessionTurn } from "./session-turn";
import { contextOverflow, type AttemptsDeps, type Dispatched } from "./attempt-rules";
import { AttemptRun } from "./attempt-run";
import { WindowFit } from "./window-fit";
import { dispatchDirect } from "./direct-attempt";

export { noneHealthy, RETRYABLE, waitToRetry, type AttemptsDeps, type Dispatched } from "./attempt-rules";

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
  const run = new AttemptRun(deps, ctx, client, asked, size, guard);
  return first.direct ? dispatchDirect(run, first) : dispatchPlanned(run, first);
}

/** The planned loop: the route's deployments, then each fallback's (see {@link dispatch}). */
async function dispatchPlanned(run: AttemptRun, first: Route): Promise<Dispatched> {
  const { deps, ctx, client, asked, size } = run;
  const router = deps.router;
  const retries = router.settings.retries;
  // Stickiness matters only where there is a choice: the session's deployment, from the affinity
  // map (shared through Redis when configured), else a stable hash of the session id.
  const session =
    first.deployments.length > 1 || first.fallbacks.length > 0
      ? sessionOf(ctx.request.headers, client.body)
      : undefined;
  const placeKey = session === undefined ? undefined : affinityKey(asked.entry.id, session);
  const place = placeKey === undefined ? undefined : await deps.affinity.get(placeKey);
  const window = new WindowFit(deps, size);
  // The requested model, then its fallbacks in order (ids checked at start-up); then, if every
  // circuit was open and nothing was tried, the model itself once more regardless of them.
  const fallbacks = first.fallbacks;
  let forced = false;
  for (let i = 0; i <= fallbacks.length + 1; i++) {
    const anyState = i === fallbacks.length + 1;
    if (anyState && !forced) break;
    const route: Route = i === 0 || anyState ? first : router.route(fallbacks[i - 1]!)!;
    if (window.overflow && !(await window.fits(route, undefined))) continue;
    // Over this model's window (by the catalog): to a fallback with room, if there is one; with
    // none the prompt goes to the model whatever its count, so it is not counted (`step`).
    const measured = route !== first || first.fallbacks.length > 0 ? window : undefined;
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
        run.noneOn(route, now);
        break;
      }
      if (again) retried++;
      const turn = sessionTurn(client, place, d.name);
      const r = await run.step(d, route, again, turn, measured);
      if (r === "failed") {
        (tried ??= new Set()).add(d);
        continue;
      }
      if (r === "next") break;
      // A fallback's plan refused: the search ends with the last attempt.
      if (r === "done") return run.end();
      // A session's first answered turn, or its first after a move, records where it now is.
      if (placeKey !== undefined && r.outcome.kind === "reply" && (!place || turn.movedFrom !== undefined)) {
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
      if (r.outcome.kind === "reply" || !contextOverflow(r.outcome) || first.fallbacks.length === 0) return r;
      window.overflowed(route, r.plan);
      break;
    }
    // Every circuit was open and nothing was tried: with nowhere else to go, the model's own
    // deployments are asked anyway rather than the client refused.
    if (i === fallbacks.length && !run.last && !window.overflow) forced = true;
  }
  return run.end();
}
