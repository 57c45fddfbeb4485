import type { GuardrailRun } from "../guardrails/run";
import type { ClientRequest } from "../formats";
import type { Target } from "../protocols";
import type { Deployment, Route } from "./deployments";
import { clientGone, type RequestContext } from "../request/context";
import { execute } from "./execute";
import { droppedBetas, plan, type Plan } from "./plan";
import type { SessionTurn } from "./session-turn";
import type { WindowFit } from "./window-fit";
import { LARGE_BODY_CHARS, loopTurn } from "../vocabulary/loop-turns";
import { noneHealthy, targetOf, tellBreaker, waitToRetry, type AttemptsDeps, type Dispatched } from "./attempt-rules";

/**
 * What a step came to when it is not the client's answer: `failed`, a retryable failure (the
 * circuit told; another attempt may go); `next`, nothing sent here and this route is done (its
 * retry-after is over the cap, or the prompt over its window); `done`, nothing sent and the
 * request is done (a later plan refused): `end()` is its answer.
 */
export type StepStop = "failed" | "next" | "done";

/**
 * One request's attempts, whichever chain its route was compiled to (deployments.ts
 * `Route.direct`): the planned loop (attempts.ts) and the direct attempt (direct-attempt.ts)
 * choose the deployment, and `step` does the rest the same way for both. One object a request,
 * its methods on the prototype: no function is made per request or per attempt.
 */
export class AttemptRun {
  /** The last attempt sent, once one has been. */
  last: Dispatched | undefined = undefined;
  attempts = 0;
  /** The longest an open circuit asked to be left, for the 503 when none could be picked. */
  private waitS = 0;

  constructor(
    readonly deps: AttemptsDeps,
    readonly ctx: RequestContext,
    readonly client: ClientRequest,
    readonly asked: Target,
    readonly size: number,
    readonly guard: GuardrailRun | undefined,
  ) {}

  /** Nothing on `route` could be picked: its circuits' waits count toward the 503's retry-after. */
  noneOn(route: Route, now: number): void {
    for (const x of route.deployments) this.waitS = Math.max(this.waitS, x.breaker.waitSeconds(now));
  }

  /**
   * One attempt on the picked deployment `d` (its circuit taken by the pick): after a failure,
   * the retry wait when `again` (the same deployment) and the client-gone check; the plan (from
   * the session's `turn` when there is one), the window check when `window` is given, the send
   * with the route's timeouts, and the circuit told. The client's answer is returned as a
   * `Dispatched`; the first plan's refusal (a bad request) is thrown.
   */
  async step(
    d: Deployment,
    route: Route,
    again: boolean,
    turn: SessionTurn | undefined,
    window: WindowFit | undefined,
  ): Promise<Dispatched | StepStop> {
    const { deps, ctx, last, size } = this;
    if (last) {
      if (
        again &&
        !(await waitToRetry(
          last.outcome.kind === "error" ? last.outcome.error : undefined,
          deps.router.settings.retryAfterMaxS,
        ))
      ) {
        d.breaker.release();
        return "next";
      }
      // A client that left while an attempt failed (or its retry waited) gets no new attempt.
      if (clientGone(ctx)) {
        d.breaker.release();
        return { ...last, outcome: { kind: "gone" } };
      }
    }
    let p: Plan;
    try {
      p = await plan(deps, ctx.format, turn ? turn.client : this.client, targetOf(d, this.asked), size, this.guard);
      if (turn?.warnings.length) p.warnings = turn.warnings.concat(p.warnings);
      const dropped = droppedBetas(ctx.request.headers, p.protocol);
      if (dropped.length) p.warnings.push(...dropped);
    } catch (e) {
      d.breaker.release();
      // The first plan's refusal (a bad request) is the client's answer; a later one's ends the search.
      if (!last) throw e;
      return "done";
    }
    // Over this model's window (by the catalog): to a fallback with room. The caller gives no
    // window where there is no fallback: the prompt goes to the model whatever its count, so it is
    // not counted (a passthrough's count is a translation to the pivot as well: 25-250 ms of the
    // event loop for 50,000 values); a large body is counted after a turn of the loop, its pivot a
    // step of its own.
    if (window) {
      const fits = window.fits(route, p);
      if (!(fits === true || (fits !== false && (await fits)))) {
        d.breaker.release();
        window.overflow = true;
        return "next";
      }
    }
    const t = route.timeouts;
    // The count above and the upstream body's writing below are a large body's steps.
    if (size > LARGE_BODY_CHARS) await loopTurn();
    const began = performance.now();
    const n = ++this.attempts;
    const outcome = await execute(deps, ctx, p, {
      n,
      connectMs: t.connectMs,
      firstByteMs: t.firstByteMs,
      idleMs: t.idleMs,
      deployment: d.name,
    });
    const sent: Dispatched = {
      plan: p,
      outcome,
      deployment: d,
      attempts: n,
      requested: this.asked.entry.id,
      cacheResetFrom: turn?.movedFrom,
    };
    this.last = sent;
    return tellBreaker(deps, ctx, d, began, n, outcome, outcome.kind === "error" ? outcome.status : 0)
      ? sent
      : "failed";
  }

  /** What the attempts came to: the last one, or the 503 when no deployment could be picked. */
  end(): Dispatched {
    if (this.last) return this.last;
    throw noneHealthy(this.asked.entry.id, this.waitS);
  }
}
