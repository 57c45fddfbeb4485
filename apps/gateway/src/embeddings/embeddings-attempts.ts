import { GatewayError } from "@turnpike/providers";
import type { GatewayDeps } from "../wiring/deps";
import { affinityKey } from "../dispatch/affinity";
import { noneHealthy, tellBreaker, waitToRetry } from "../dispatch/attempt-rules";
import type { Deployment, Route } from "../dispatch/deployments";
import { sessionOf } from "../dispatch/session-id";
import type { RequestContext } from "../request/context";
import { PROTOCOLS, type Target } from "../protocols";
import type { EmbeddingsRequest } from "./embeddings-request";
import { callEmbeddings, type EmbeddingsOutcome } from "./call-embeddings";

/** What the attempts came to: the last outcome, the deployment that gave it, how many were made. */
export interface EmbeddingsDispatched {
  outcome: EmbeddingsOutcome;
  /** The deployment's target: the model that served (a fallback's when one did) on its upstream. */
  target: Target;
  deployment: Deployment;
  attempts: number;
  /** The catalog id the client asked for. */
  requested: string;
}

/**
 * Can this deployment make the vectors asked? Its protocol has an embeddings call, and its
 * model (a fallback may be another) makes vectors of the size asked. A deployment that cannot is
 * skipped as if it were not there: another vendor's protocol may have no embeddings call.
 */
function fits(d: Deployment, req: EmbeddingsRequest): boolean {
  const { entry } = d.target;
  if (entry.embedding_dimensions === undefined || !PROTOCOLS[entry.protocol].embeddings) return false;
  return req.dimensions === undefined || req.dimensions <= entry.embedding_dimensions;
}

/**
 * The embeddings call over the requested model's deployments and then its fallbacks, as the
 * inference routes' `dispatch` goes (dispatch/attempts.ts): weighted, session-sticky (a session
 * header keeps one deployment while it is healthy), healthy by its breaker, with room under its
 * rpm and tpm. Retryable failures (no answer, timeouts, 408/409/429/5xx/529) move on, and count
 * against the deployment's breaker; another 4xx is the answer. When every circuit is open and
 * nothing was tried, the model's own deployments are asked regardless.
 */
export async function dispatchEmbeddings(
  deps: GatewayDeps,
  ctx: RequestContext,
  req: EmbeddingsRequest,
  asked: Target,
  body: Readonly<Record<string, unknown>>,
  size: number,
): Promise<EmbeddingsDispatched> {
  const router = deps.router;
  const first = router.route(asked.entry.id);
  if (!first) throw new GatewayError({ status: 500, message: `No route for ${asked.entry.id}.` });
  const { retries, retryAfterMaxS } = router.settings;
  const session =
    first.deployments.length > 1 || first.fallbacks.length > 0 ? sessionOf(ctx.request.headers, body) : undefined;
  const placeKey = session === undefined ? undefined : affinityKey(asked.entry.id, session);
  const place = placeKey === undefined ? undefined : await deps.affinity.get(placeKey);
  const tokens = Math.ceil(size / 4);
  let last: EmbeddingsDispatched | undefined;
  let attempts = 0;
  let waitS = 0;
  const fallbacks = first.fallbacks;
  let forced = false;
  for (let i = 0; i <= fallbacks.length + 1; i++) {
    const anyState = i === fallbacks.length + 1;
    if (anyState && !forced) break;
    const route: Route = i === 0 || anyState ? first : router.route(fallbacks[i - 1]!)!;
    // Deployments that cannot make these vectors are never picked; those that failed, only as retries.
    const unfit = new Set(route.deployments.filter((d) => !fits(d, req)));
    if (unfit.size === route.deployments.length) continue;
    let tried: Set<Deployment> | undefined;
    let retried = 0;
    for (;;) {
      const now = deps.now();
      const skip = tried ? new Set([...unfit, ...tried]) : unfit;
      let d = router.pick(route, now, tokens, session, skip, anyState, place?.deployment);
      const again = !d && tried !== undefined && retried < retries;
      if (again) d = router.pick(route, now, tokens, session, unfit, anyState, place?.deployment);
      if (!d) {
        for (const x of route.deployments) if (!unfit.has(x)) waitS = Math.max(waitS, x.breaker.waitSeconds(now));
        break;
      }
      if (again && last) {
        retried++;
        if (!(await waitToRetry(last.outcome.kind === "error" ? last.outcome.error : undefined, retryAfterMaxS))) {
          d.breaker.release();
          break;
        }
      }
      const t = route.timeouts;
      const began = performance.now();
      let outcome: EmbeddingsOutcome;
      try {
        outcome = await callEmbeddings(deps, ctx, d.target, req, ctx.request.signal, {
          n: attempts + 1,
          deployment: d.name,
          connectMs: t.connectMs,
          firstByteMs: t.firstByteMs,
        });
      } catch (e) {
        // The input does not suit this protocol (token ids toward a text-only one): the first
        // deployment's refusal is the client's answer; a later one's ends the search.
        d.breaker.release();
        if (!last) throw e;
        return last;
      }
      attempts++;
      last = { outcome, target: d.target, deployment: d, attempts, requested: asked.entry.id };
      // The circuit's verdict is the inference attempts' (dispatch/attempt-rules.ts `tellBreaker`).
      if (tellBreaker(deps, ctx, d, began, attempts, outcome, outcome.kind === "error" ? outcome.upstreamStatus : 0)) {
        // A session's first answered call records where it is (shared through Redis when configured).
        if (placeKey !== undefined && outcome.kind === "reply" && place?.deployment !== d.name)
          deps.affinity
            .set(placeKey, { deployment: d.name, origins: {} })
            .catch((e: unknown) =>
              deps.logger.error("recording a session's deployment failed", { request_id: ctx.id }, e),
            );
        return last;
      }
      (tried ??= new Set()).add(d);
    }
    if (i === fallbacks.length && !last) forced = true;
  }
  if (last) return last;
  throw noneHealthy(asked.entry.id, waitS);
}
